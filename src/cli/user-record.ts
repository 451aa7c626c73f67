import type { User } from '../__generated__/prisma/client';

/**
 * The spec's user record, for the admin CLI. (HTTP responses get theirs from
 * the UserRecord fragment of src/rest/operations; test/cli checks both agree.)
 */
export function userRecord(user: User) {
  return {
    id: user.id,
    full_name: user.fullName,
    email: user.email,
    login: user.login,
    phone: user.phone,
    website: user.website,
    created_at: user.createdAt.toISOString(),
    updated_at: user.updatedAt.toISOString(),
    last_request_at: user.lastRequestAt?.toISOString() ?? null,
    external_user_id: user.externalUserId,
    facebook_id: user.facebookId,
    twitter_id: user.twitterId,
    blob_id: user.blobId,
    custom_data: user.customData,
    age_over16: user.ageOver16,
    allow_statistics_analysis: user.allowStatisticsAnalysis,
    allow_sales_activities: user.allowSalesActivities,
    parents_contacts: user.parentsContacts,
    user_tags: user.userTags,
  };
}
