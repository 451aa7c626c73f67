// The address-book paths' arbitraries: POST /address_book.json's JSON
// bodies (valid uploads, and objects of any contacts, udid and force), and
// GET /address_book.json's queries (BookQuery).
import fc from 'fast-check';
import { arb, sdkCanSend } from '../../support/fuzz';
import type { BookQuery } from './descriptors';

export function addressBookArbitraries(): { validUpload: fc.Arbitrary<unknown>; jsonObject: fc.Arbitrary<unknown>; bookQuery: fc.Arbitrary<BookQuery> } {
  const phone = fc.oneof(
    fc.constantFrom('+10000000101', '+10000000102', '+10000000103', '+19999999999', '10000000101'),
    fc.stringMatching(/^\+?[0-9]{8,17}$/),
    // As address books hold them: formatted, some too short, too long or past 32 characters.
    fc.constantFrom(
      '+1 000-000-0101',
      '(000) 000-0102',
      '+1 (000) 000.0103',
      '+44 20 7946 0958',
      '+1 555 0100',
      '(((1234567890)))',
      '+1-2-3-4-5-6-7-8-9-0-1-2-3-4-5-6',
    ),
    fc.stringMatching(/^\+?[0-9 ().-]{8,34}$/),
    arb.jsonJunk(),
  );
  const name = fc.oneof(
    arb.anyString(30),
    fc.integer({ min: 250, max: 260 }).map((n) => 'n'.repeat(n)),
    arb.jsonJunk(),
  );
  const flagValue = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(0, 1, '0', '1') }, { weight: 1, arbitrary: arb.jsonJunk() });
  const contact = fc.oneof(
    { weight: 6, arbitrary: fc.record({ name, phone }) },
    // QuickBlox's destroy: 1 removes the phone (no name needed); other values refuse the upload.
    { weight: 2, arbitrary: fc.record({ name, phone, destroy: flagValue }, { requiredKeys: ['phone', 'destroy'] }) },
    { weight: 1, arbitrary: fc.record({ name }, { requiredKeys: [] }) },
    { weight: 1, arbitrary: arb.jsonJunk() },
  );
  const udid = fc.oneof(fc.constantFrom('phone-1', '', 'u'.repeat(64), 'u'.repeat(65)), arb.anyString(70), arb.jsonJunk());
  const uploadPhone = fc.constantFrom('+10000000101', '+10000000102', '+10000000103', '+19999999999', '4915112345678');
  const validUpload = fc.record(
    {
      contacts: fc.array(
        fc.oneof(
          {
            weight: 4,
            arbitrary: fc.record({
              name: fc.oneof(
                fc.constantFrom('Bob', ''),
                arb.anyString(20).filter((n) => !n.includes('\u0000')),
              ),
              phone: uploadPhone,
            }),
          },
          { weight: 1, arbitrary: fc.record({ phone: uploadPhone, destroy: fc.constantFrom(1, '1', 0) }) },
          // Not taken, reported by index; the others are stored.
          { weight: 1, arbitrary: fc.record({ name: fc.constantFrom('Bad', ''), phone: fc.constantFrom('123', '', '+1 555 0100', '+1000000000000000') }) },
        ),
        { maxLength: 4 },
      ),
      udid: fc.constantFrom('phone-1', '', 'phone-2'),
      force: fc.constantFrom(0, 1),
    },
    { requiredKeys: ['contacts'] },
  );
  const jsonObject = fc.record(
    {
      contacts: fc.oneof({ weight: 4, arbitrary: fc.array(contact, { maxLength: 5 }) }, { weight: 1, arbitrary: arb.jsonJunk() }),
      udid,
      force: flagValue,
      extra: arb.jsonJunk(),
    },
    { requiredKeys: [] },
  );
  const bookUdid = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        'phone-1',
        'phone-2',
        '',
        'u'.repeat(64),
        'u'.repeat(65),
        '100%',
        '%41',
        'a?b',
        'a&udid=b',
        'a b+c',
        '"q"',
        '{"x":1}',
        '\u00e9\u{1F600}',
        'a\u0000b',
      ),
    },
    { weight: 2, arbitrary: arb.anyString(70) },
  );
  const bookQuery: fc.Arbitrary<BookQuery> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ form: fc.constant('query string' as const), udid: bookUdid }) },
    { weight: 1, arbitrary: fc.constant({ form: 'none' as const }) },
    {
      weight: 3,
      arbitrary: fc.record({
        form: fc.constant('json' as const),
        udid: bookUdid.filter(sdkCanSend),
        client: fc.constantFrom('fetch' as const, 'node-fetch' as const),
      }),
    },
    {
      weight: 1,
      arbitrary: fc.record({
        form: fc.constant('json text' as const),
        text: fc.constantFrom(
          '{"udid":5}',
          '{"udid":null}',
          '{"udid":["a","b"]}',
          '[1]',
          '{',
          '{"udid":"a"',
          '"x"',
          '{}',
          '{"udid":"phone-1","x":1}',
          '%7B%7D',
          '{%zz}',
        ),
      }),
    },
  );
  return { validUpload, jsonObject, bookQuery };
}
