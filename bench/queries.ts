// The GraphQL documents the benchmarks send (the harness, bench:cpu,
// bench:lookup-profile, and a test that keeps the lookup compiled).

/** The GraphQL lookup the benchmarks send (all 19 fields of a user). */
export const GRAPHQL_LOOKUP = `query Lookup($id: Int!) {
  userByExternalId(externalUserId: $id) {
    id fullName email login phone website createdAt updatedAt lastRequestAt externalUserId
    facebookId twitterId blobId customData ageOver16 allowStatisticsAnalysis allowSalesActivities
    parentsContacts userTags
  }
}`;

/** Apollo's floor: the least a GraphQL request can ask. */
export const GRAPHQL_TYPENAME = '{ __typename }';
