// The address-book operations' fields: addressBook and registeredUsers
// (queries), uploadAddressBook (a mutation), with literals and with variables.
import fc from 'fast-check';
import { arb } from '../../support/fuzz';
import type { Blocks, Doc } from './documents';

export function addressBookFields({ argument, stringLiteral, boolLiteral, contactList, userSelection, resultFields, typedOrJunk }: Blocks) {
  const addressBook = {
    weight: 2,
    arbitrary: fc
      .tuple(fc.option(argument(stringLiteral), { nil: undefined }), resultFields(['name', 'phone', '__typename', 'x']))
      .map(([v, sel]): Doc => (v === undefined ? [`addressBook ${sel}`] : ['addressBook(udid: ', ...v, `) ${sel}`])),
  };
  const registeredUsers = {
    weight: 4,
    arbitrary: fc
      .tuple(fc.option(argument(stringLiteral), { nil: undefined }), userSelection)
      .map(([v, sel]): Doc => (v === undefined ? [`registeredUsers ${sel}`] : ['registeredUsers(udid: ', ...v, `) ${sel}`])),
  };
  const uploadAddressBook = {
    weight: 3,
    arbitrary: fc
      .tuple(
        argument(contactList),
        fc.option(argument(stringLiteral), { nil: undefined }),
        fc.option(argument(boolLiteral.map((s) => [s])), { nil: undefined }),
        resultFields(['created', 'updated', 'deleted', 'rejected { index reasons }', 'x']),
      )
      .map(([contacts, udid, force, sel]): Doc => [
        'uploadAddressBook(contacts: ',
        ...contacts,
        ...(udid ? [', udid: ', ...udid] : []),
        ...(force ? [', force: ', ...force] : []),
        `) ${sel}`,
      ]),
  };
  const registeredUsersVariables = fc
    .record({ v: typedOrJunk(fc.oneof(fc.constantFrom('phone-1', '', 'u'.repeat(65)), arb.anyString(30))) })
    .map((variables) => ({
      doc: ['query Q($v: String) { registeredUsers(udid: $v) { id phone } }'],
      kind: 'query' as const,
      variables,
    }));
  const addressBookVariables = fc
    .record({ v: typedOrJunk(fc.oneof(fc.constantFrom('phone-1', '', 'u'.repeat(65), '100%'), arb.anyString(30))) })
    .map((variables) => ({
      doc: ['query A($v: String) { addressBook(udid: $v) { name phone } }'],
      kind: 'query' as const,
      variables,
    }));
  const uploadAddressBookVariables = fc
    .record({
      v: typedOrJunk(
        fc.array(
          fc.record({ name: fc.oneof(fc.constant('Bob'), arb.anyString(10)), phone: fc.constantFrom('+10000000101', '+10000000103', '+19999999999', '12') }),
          { maxLength: 3 },
        ),
      ),
      w: typedOrJunk(fc.constantFrom('phone-1', '', 'phone-2')),
      b: typedOrJunk(fc.boolean()),
    })
    .map((variables) => ({
      doc: ['mutation M($v: [ContactInput!]!, $w: String, $b: Boolean) { uploadAddressBook(contacts: $v, udid: $w, force: $b) { created updated deleted } }'],
      kind: 'mutation' as const,
      variables,
    }));
  return { addressBook, registeredUsers, uploadAddressBook, registeredUsersVariables, addressBookVariables, uploadAddressBookVariables };
}
