// The SHA-256 of query texts, remembered by text (src/overrides/query-hash.ts):
// the same hex digest as node:crypto's for any text, bounded, and the one
// Apollo Server's request pipeline uses for its document cache and its
// persisted-query check.
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { queryHashStats, sha256Hex } from '../../src/overrides/query-hash';
import { useService } from '../support/service';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

test('the digest is the SHA-256 of the text as UTF-8, the first time and from memory', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 64 }), (text) => {
      expect(sha256Hex(text)).toBe(sha256(text));
      expect(sha256Hex(text)).toBe(sha256(text));
    }),
    { numRuns: 2_000 },
  );
  // Lone surrogates are encoded as U+FFFD, as node:crypto encodes them.
  expect(sha256Hex('a\ud800b')).toBe(sha256('a\ud800b'));
  expect(sha256Hex('')).toBe(sha256(''));
});

test('texts are remembered, and forgotten oldest first past the bound', () => {
  const first = `query First${Math.random()} { __typename }`;
  sha256Hex(first);
  const hits = queryHashStats.hits;
  sha256Hex(first);
  expect(queryHashStats.hits).toBe(hits + 1);
  // A thousand other texts push it out.
  for (let i = 0; i < 1000; i++) sha256Hex(`query Other${i}${Math.random()} { __typename }`);
  const misses = queryHashStats.misses;
  expect(sha256Hex(first)).toBe(sha256(first));
  expect(queryHashStats.misses).toBe(misses + 1);
  // A long text is hashed every time, never kept.
  const long = `{ __typename }${' '.repeat(20_000)}`;
  sha256Hex(long);
  const before = queryHashStats.misses;
  expect(sha256Hex(long)).toBe(sha256(long));
  expect(queryHashStats.misses).toBe(before + 1);
});

describe('Apollo Server hashes through it', () => {
  const service = useService();

  const post = (body: unknown) => service.rest('POST', '/graphql', { body });

  test("a document's hash is taken from memory the second time", async () => {
    const query = `query Hashed${Date.now()} { __typename }`;
    expect((await post({ query })).body).toEqual({ data: { __typename: 'Query' } });
    const { hits, misses } = queryHashStats;
    expect((await post({ query })).body).toEqual({ data: { __typename: 'Query' } });
    expect(queryHashStats.hits).toBe(hits + 1);
    expect(queryHashStats.misses).toBe(misses);
  });

  test("Apollo's persisted-query check still compares the text's SHA-256", async () => {
    const query = `query Persisted${Date.now()} { __typename }`;
    const persistedQuery = (sha256Hash: string) => ({ extensions: { persistedQuery: { version: 1, sha256Hash } } });
    // Registered with its hash (twice: the second from memory), then run by the hash alone.
    for (let i = 0; i < 2; i++) {
      expect((await post({ query, ...persistedQuery(sha256(query)) })).body).toEqual({ data: { __typename: 'Query' } });
    }
    expect((await post(persistedQuery(sha256(query)))).body).toEqual({ data: { __typename: 'Query' } });
    // A hash that is not the text's is refused, the text remembered or not.
    const wrong = await post({ query, ...persistedQuery(sha256(`${query} `)) });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors[0].extensions.code).toBe('BAD_REQUEST');
  });
});
