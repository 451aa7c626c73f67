// The users paths' arbitraries: GET /users/external/<id>.json's id segment.
import fc from 'fast-check';
import { arb, type Repeat, type Text } from '../../support/fuzz';
import { enc, SPECIAL_SEGMENTS } from './descriptors';

/** An external user id: the seeded ones, any integer, numbers written oddly, special and long segments. */
export function lookupSegmentArbitrary(): fc.Arbitrary<Text> {
  const lookupSegment: fc.Arbitrary<Text> = fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom('101', '102', '103', '104', '4242') },
    { weight: 2, arbitrary: fc.integer({ min: -3_000_000_000, max: 3_000_000_000 }).map(String) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '0',
        '-0',
        '+1',
        '01',
        '1.0',
        '1e3',
        '0x10',
        '2147483647',
        '2147483648',
        '99999999999',
        '%20101',
        '101%20',
        '%D9%A1',
        '%EF%BC%91',
        '1,2',
        '',
      ),
    },
    { weight: 2, arbitrary: fc.constantFrom(...SPECIAL_SEGMENTS) },
    { weight: 2, arbitrary: arb.anyString(30).map(enc) },
    { weight: 1, arbitrary: fc.integer({ min: 10, max: 40_000 }).map((n): Repeat => ({ repeat: '1', times: n })) },
  );
  return lookupSegment;
}
