// The address-book paths: uploading and reading the caller's contacts, and the
// registered users among them (src/rest/operations/address-book.graphql).
import {
  RestAddressBookDocument,
  RestRegisteredUsersCompactDocument,
  RestRegisteredUsersDocument,
  RestUploadAddressBookDocument,
} from '../../__generated__/graphql';
import { badInput } from '../../errors';
import { LIMITS } from '../../services/validate';
import { FLAG, JSON_FLAG, json, object, ref, type Schema } from '../openapi-schema';
import { bodyObject, contactInput, flag, queryObject, single } from '../parse';
import { parameters, type Req, type RestRoute } from './route';

const udid: Schema = { type: 'string', maxLength: LIMITS.udidLength, description: 'Device id; absent or empty: the global book.' };

const uploadCounts: Schema = {
  type: 'object',
  properties: {
    created: { type: 'integer', minimum: 0, description: 'Contacts added.' },
    updated: { type: 'integer', minimum: 0, description: 'Contacts whose name changed.' },
    deleted: { type: 'integer', minimum: 0, description: 'Contacts removed (destroy, or force=1).' },
    rejected: {
      type: 'object',
      description: 'Index in the upload → why that contact was not taken.',
      propertyNames: { pattern: '^(0|[1-9][0-9]*)$' },
      minProperties: 1,
      additionalProperties: { type: 'array', items: { type: 'string' }, minItems: 1 },
    },
  },
  required: ['created', 'updated', 'deleted'],
  additionalProperties: false,
};

export const ADDRESS_BOOK_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    url: '/address_book/registered_users.json',
    path: '/address_book/registered_users.json',
    style: 'list',
    documents: [RestRegisteredUsersDocument, RestRegisteredUsersCompactDocument],
    async handle(request: Req, reply, run) {
      const udid = single('udid', request.query.udid) ?? null;
      const compact = flag('compact', single('compact', request.query.compact));
      // force is the upload's replace flag; on this read it is checked and has no effect.
      flag('force', single('force', request.query.force));
      const { users } = await run(compact ? RestRegisteredUsersCompactDocument : RestRegisteredUsersDocument, { udid });
      return reply.send({ items: users.map((user) => ({ user })) });
    },
    operationId: 'registeredUsers',
    summary: "Registered users whose phone is in the caller's address book",
    tags: ['address book'],
    description:
      "The users of the caller's application whose phone equals the phone of a contact in the caller's global address book, or in the book of device `udid`, ordered by user id, each once.",
    schema: {
      querystring: parameters({
        udid,
        compact: { ...FLAG, default: 0, description: '1: {id, phone} only.' },
        force: { ...FLAG, description: 'Validated; no effect on this read.' },
      }),
      success: {
        status: 200,
        description: 'Full records (compact=0 or absent) or compact ones (compact=1).',
        schema: {
          anyOf: [
            object({ items: { type: 'array', items: object({ user: ref('User') }) } }),
            object({ items: { type: 'array', items: object({ user: ref('CompactUser') }) } }),
          ],
        },
      },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT'],
  },
  {
    method: 'POST',
    url: '/address_book.json',
    path: '/address_book.json',
    style: 'list',
    documents: [RestUploadAddressBookDocument],
    async handle(request: Req, reply, run) {
      const body = bodyObject(request.body);
      const { contacts } = body;
      // GraphQL would take a lone object for a one-item list; JSON clients mean a list.
      if (!Array.isArray(contacts)) throw badInput('contacts', 'contacts must be a list of {name, phone}');
      const { result } = await run(RestUploadAddressBookDocument, {
        contacts: contacts.map(contactInput),
        udid: (body.udid ?? null) as string | null,
        force: flag('force', body.force),
      });
      const { rejected, ...counts } = result;
      // QuickBlox's shape: {"rejected": {"<index>": ["reason", …]}}, only when something was.
      if (rejected.length === 0) return reply.send(counts);
      return reply.send({ ...counts, rejected: Object.fromEntries(rejected.map((r) => [String(r.index), r.reasons])) });
    },
    operationId: 'uploadAddressBook',
    summary: "Upload contacts into the caller's address book",
    tags: ['address book'],
    description:
      "Without force contacts are added, or renamed when their phone is already in the book, and those with destroy=1 removed; with force=1 the book becomes exactly the contacts taken. A phone listed twice counts once, as its last entry says. Contacts that fail validation are reported in `rejected` by their index and the others are stored (QuickBlox's behaviour).",
    schema: {
      body: {
        required: true,
        content: json({
          type: 'object',
          required: ['contacts'],
          properties: {
            contacts: {
              type: 'array',
              maxItems: LIMITS.contactsPerUpload,
              items: {
                type: 'object',
                description: 'A contact; one failing the rules of Contact is rejected, not the upload. Other keys are ignored.',
                properties: { name: { type: 'string' }, phone: { type: 'string' }, destroy: { ...JSON_FLAG, description: '1: remove this phone.' } },
              },
            },
            udid: { type: ['string', 'null'], maxLength: LIMITS.udidLength, description: 'Device id; absent, null or empty: the global book.' },
            force: { ...JSON_FLAG, description: '1: replace the book.' },
          },
        }),
      },
      success: { status: 200, description: 'Counts of the upload, and the contacts not taken (only when there are some).', schema: uploadCounts },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT', 'WRITE_OUTCOME_UNKNOWN'],
  },
  {
    method: 'GET',
    url: '/address_book.json',
    path: '/address_book.json',
    style: 'list',
    documents: [RestAddressBookDocument],
    async handle(request: Req, reply, run) {
      const udid = single('udid', queryObject(request).udid) ?? null;
      const { contacts } = await run(RestAddressBookDocument, { udid });
      return reply.send(contacts);
    },
    operationId: 'addressBook',
    summary: "The contacts of the caller's address book",
    tags: ['address book'],
    description:
      'In upload order, as QuickBlox answers them: a bare list. QuickBlox\'s JavaScript SDK sends the query as a JSON object in place of a query string (`?{"udid":"…"}`); that form is read too.',
    schema: {
      querystring: parameters({ udid }),
      success: { status: 200, description: 'The contacts ([] for an empty book).', schema: { type: 'array', items: ref('Contact') } },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT'],
  },
];
