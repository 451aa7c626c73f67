// The DateTime scalar writes dates with its own formatter (src/graphql/resolvers/DateTime.ts),
// not Date.prototype.toISOString: it must write exactly what toISOString writes, for any date.
import fc from 'fast-check';
import { DateTime, isoString } from '../../src/graphql/resolvers/DateTime';

const same = (date: Date) => expect(isoString(date)).toBe(date.toISOString());

test('every instant PostgreSQL can hold is written as toISOString writes it', () => {
  // timestamptz runs from 4713 BC to 294276 AD; Date from −271821 to 275760.
  fc.assert(
    fc.property(fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }), (ms) => same(new Date(ms))),
    { numRuns: 20_000 },
  );
  // Around today, where real records are: every millisecond field, leap days, month ends.
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => same(new Date(ms))),
    { numRuns: 20_000 },
  );
});

test('the edges: the years where the form changes, leap days, the first and last millisecond of a day', () => {
  for (const text of [
    '0999-12-31T23:59:59.999Z',
    '1000-01-01T00:00:00.000Z',
    '1970-01-01T00:00:00.000Z',
    '2000-02-29T12:00:00.001Z',
    '2024-02-29T23:59:59.999Z',
    '2100-03-01T00:00:00.010Z',
    '9999-12-31T23:59:59.999Z',
    '+010000-01-01T00:00:00.000Z',
    '-000001-06-15T01:02:03.004Z',
  ]) {
    const date = new Date(text);
    same(date);
    expect(isoString(date)).toBe(text);
  }
});

test('an invalid date fails as toISOString does, and the scalar refuses what is not a Date', () => {
  expect(() => isoString(new Date(NaN))).toThrow(RangeError);
  expect(() => DateTime.serialize('2024-01-01T00:00:00.000Z')).toThrow('DateTime cannot represent a non-Date value');
  expect(DateTime.serialize(new Date('2024-05-06T07:08:09.010Z'))).toBe('2024-05-06T07:08:09.010Z');
});
