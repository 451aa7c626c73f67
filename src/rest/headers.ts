// Response headers of QuickBlox's API that its SDKs read.

/**
 * When the request's session token expires. QuickBlox's JavaScript SDK reads
 * it (on GET and POST answers) to know when to renew the session, parsing it
 * as `new Date(value.replaceAll('-', '/'))`: only the Rails form
 * "2026-11-23 20:00:00 UTC" survives that (an ISO 8601 string does not).
 */
export const SESSION_EXPIRY_HEADER = 'QB-Token-ExpirationDate';

export const qbTime = (date: Date): string => `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
