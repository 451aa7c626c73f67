// GET /address_book.json as QuickBlox's JavaScript SDK sends it.

/**
 * The query of `QB.addressbook.get(udid)`: '?' + JSON.stringify(params) as a
 * URL parser escapes it (a browser's fetch: WHATWG URL); node-fetch 2, the
 * SDK's under Node, then also passes it through url.parse, which escapes
 * these too. The SDK leaves '%' as it is, so a udid holding an escape
 * (`%41`) reads as the character it escapes: not a udid this form can send
 * (sdkCanSend), nor one with '#' (the URL would end there).
 */
export function sdkQuery(params: Record<string, unknown>, client: 'fetch' | 'node-fetch'): string {
  const { search } = new URL(`http://localhost/address_book.json?${JSON.stringify(params)}`);
  return client === 'fetch' ? search : search.replace(/[{}|\\^`]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export const sdkCanSend = (udid: string): boolean => !udid.includes('#') && !/%[0-9A-Fa-f]{2}/.test(udid);
