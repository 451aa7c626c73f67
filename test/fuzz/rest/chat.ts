// The chat paths' arbitraries: DELETE /chat/Message/<ids>.json's id lists.
import fc from 'fast-check';
import { arb, type Text } from '../../support/fuzz';
import { enc, type PathPart, SPECIAL_SEGMENTS } from './descriptors';

/** The ids segment of a delete: real ids of both tenants, unknown, malformed and special ones, and lists around the 1000-id limit. */
export function deleteIdsSegment(realIds: string[]): fc.Arbitrary<PathPart[]> {
  const idToken: fc.Arbitrary<Text> = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...realIds, 'ffffffffffffffffffffffff', '000000000000000000000000') },
    { weight: 2, arbitrary: fc.stringMatching(/^[0-9a-fA-F]{24}$/) },
    { weight: 3, arbitrary: fc.constantFrom(...SPECIAL_SEGMENTS) },
    { weight: 3, arbitrary: arb.anyString(30).map(enc) },
    // Raw latin1 bytes, not percent-encoded: refused by the HTTP parser (400 "Malformed HTTP request", list shape).
    { weight: 1, arbitrary: fc.constantFrom('\u00e9', 'a\u00ffb', '\u00a0') },
    { weight: 1, arbitrary: fc.record({ repeat: fc.constantFrom('f', 'a', '%C3%A9', '%2C'), times: fc.integer({ min: 100, max: 20_000 }) }) },
  );
  const idsSegment: fc.Arbitrary<PathPart[]> = fc.oneof(
    { weight: 8, arbitrary: fc.array(idToken, { minLength: 0, maxLength: 6 }).map((ids) => ids.flatMap((id, i) => (i === 0 ? [id] : [',', id]))) },
    {
      weight: 1,
      // Around the 1000-id limit: a real id, then distinct unknown ones.
      arbitrary: fc.tuple(fc.constantFrom(...realIds, 'x'), fc.integer({ min: 989, max: 1_009 })).map(([id, n]): PathPart[] => [id, ',', { hexIds: n }]),
    },
  );
  return idsSegment;
}
