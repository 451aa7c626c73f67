// What a /graphql document's root fields would cost together, checked before
// any resolver runs (issue 17, item 4). graphql-armor's cost (limits.ts) sees
// a document's shape, not its work: one registeredUsers and thirty aliased
// ones over a book matching 5,000 users cost it alike, and so do ten aliased
// uploads of 10,000 contacts and one. Here each root field is charged the
// rows it would read or write:
//
// - registeredUsers: the users its book matches (counted: one index-only
//   count per distinct book, see BOOK_SIZE);
// - addressBook: the contacts its book holds (the same count);
// - registeredUsersConnection: `first`;
// - uploadAddressBook: its contacts; deleteMessages and messagesDelete: their ids;
// - anything else: 1;
// - plus every connection selected under a field (viewer's dialogs, a
//   dialog's messages): its page size times the pages it repeats in, so
//   viewer { dialogs(first: 10) { … messages(last: 5) } } costs 1 + 10 + 50.
//   This is the one cost rule: graphql-armor's own (shape-based) cost limit
//   is off (limits.ts), since it refused such a screen's ordinary query.
//
// A document is refused (COST_LIMIT_EXCEEDED, HTTP 400, no data) when its
// fields together would upload more than 10,000 contacts or delete more than
// 1,000 ids (the per-call limits, held per document), or cost more than
// COST_LIMITS.rows. A document of one root field is not charged unless it
// holds connections (viewer, node, nodes): it is the
// work of the same REST call, bounded by that field's own limits (a single
// over-long upload still answers the field's BAD_USER_INPUT), so the
// lookups the benchmark measures pay nothing for this. The REST paths run
// one field per document and are not affected.
//
// Arguments are read as graphql-js will execute them: fields collected
// through fragments and @skip/@include, variables coerced. A document whose
// variables do not coerce, or a field whose arguments fail, is left to
// execution, which answers it as it always does (and runs no work for it).
import type { ApolloServerPlugin, GraphQLRequestContextDidResolveOperation, GraphQLRequestListener } from '@apollo/server';
import {
  type FieldNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  GraphQLError,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type GraphQLSchema,
  getNamedType,
  isAbstractType,
  isObjectType,
  Kind,
} from 'graphql';
import { collectFields } from 'graphql/execution/collectFields';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values';
import type { Context } from '../context';
import { ERROR_STATUS } from '../errors';
import { LIMITS } from '../services/validate';

export const COST_LIMITS = {
  /**
   * Rows a document's root fields may read or write together: the largest
   * single call (an upload of 10,000 contacts) fits, and so do two lookups
   * over books matching 5,000 users each. Thirty aliased lookups of such a
   * book (150,000 users, a 47 MB answer) do not.
   */
  rows: 10_000,
  /** Contacts all uploadAddressBook fields of a document may carry together: the per-call limit. */
  contacts: LIMITS.contactsPerUpload,
  /** Ids all deleteMessages fields of a document may name together: the per-call limit. */
  ids: LIMITS.idsPerDelete,
} as const;

/** One root field as it will execute: its response key, its name, its cost (books counted later). */
interface Charge {
  key: string;
  field: string;
  rows: number;
  /** A book whose size is its cost (registeredUsers, addressBook). */
  book?: { udid: string | null | undefined; count: 'registeredUsers' | 'contacts' };
  contacts?: number;
  ids?: number;
}

/** Root fields that check a password or open a session: at most one of them per document. */
const SESSION_FIELDS: ReadonlySet<string> = new Set(['login', 'createSession']);

const refuse = (message: string): GraphQLError =>
  new GraphQLError(message, { extensions: { code: 'COST_LIMIT_EXCEEDED', http: { status: ERROR_STATUS.COST_LIMIT_EXCEEDED } } });

// One listener (and one settled promise of it) for every request: Apollo asks each plugin per request.
const costListener: GraphQLRequestListener<Context> = { didResolveOperation: checkCost };
const costListening = Promise.resolve(costListener);
export const costLimitPlugin: ApolloServerPlugin<Context> = {
  requestDidStart: () => costListening,
};

async function checkCost(requestContext: GraphQLRequestContextDidResolveOperation<Context>): Promise<void> {
  const { operation, document, schema, request, contextValue } = requestContext;
  if (!operation) return;
  // One plain field: nothing to add up (the common case, decided without
  // collecting), unless it holds connections (viewer's dialogs and their messages).
  const selections = operation.selectionSet.selections;
  if (selections.length === 1 && selections[0]!.kind === Kind.FIELD && !NESTED_ROOTS.has(selections[0]!.name.value)) return;
  const root: GraphQLObjectType | null | undefined =
    operation.operation === 'mutation' ? schema.getMutationType() : operation.operation === 'query' ? schema.getQueryType() : undefined;
  if (!root) return;
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], request.variables ?? {});
  if (coerced.errors) return;
  const fragments = Object.create(null) as Record<string, FragmentDefinitionNode>;
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments[definition.name.value] = definition;
  const fields = collectFields(schema, fragments, coerced.coerced, root, operation.selectionSet);
  const nested = { schema, fragments, variables: coerced.coerced };

  const charges: Charge[] = [];
  for (const [key, nodes] of fields) {
    const definition = root.getFields()[nodes[0]!.name.value];
    if (!definition) continue; // __typename
    let args: Record<string, unknown>;
    try {
      args = getArgumentValues(definition, nodes[0]!, coerced.coerced);
    } catch {
      charges.push({ key, field: definition.name, rows: 1 });
      continue;
    }
    const c = charge(key, definition.name, args);
    // What the connections under it read: each page times the pages above it.
    c.rows += nestedRows(nested, definition.type, nodes, definition.name === 'registeredUsersConnection' ? c.rows : 1);
    charges.push(c);
  }
  if (charges.length === 0 || (charges.length < 2 && !NESTED_ROOTS.has(charges[0]!.field))) return;

  // Each login, and each createSession with a user, checks a password
  // (scrypt, ~40 ms of a core); each createSession opens a session. Aliased,
  // thirty of them were thirty checks or sessions for one request of the
  // rate limiter (issue 31): one per document, as over REST.
  const sessionFields = charges.filter((c) => SESSION_FIELDS.has(c.field)).length;
  if (sessionFields > 1) {
    throw refuse(`at most one login or createSession per document: each checks a password or opens a session (got ${sessionFields})`);
  }
  const contacts = sum(charges, (c) => c.contacts ?? 0);
  if (contacts > COST_LIMITS.contacts) {
    throw refuse(`at most ${COST_LIMITS.contacts} contacts per document, all uploadAddressBook fields together (got ${contacts})`);
  }
  const ids = sum(charges, (c) => c.ids ?? 0);
  if (ids > COST_LIMITS.ids) throw refuse(`at most ${COST_LIMITS.ids} ids per document, all deleteMessages fields together (got ${ids})`);
  await countBooks(charges, contextValue);
  const rows = sum(charges, (c) => c.rows);
  if (rows > COST_LIMITS.rows) {
    const heaviest = [...charges]
      .sort((a, b) => b.rows - a.rows)
      .slice(0, 3)
      .map((c) => `${c.key}: ${c.rows}`);
    throw refuse(
      `document cost ${rows} is over the limit of ${COST_LIMITS.rows} rows read or written by its fields together (${heaviest.join(', ')}${charges.length > 3 ? ', …' : ''})`,
    );
  }
}

function charge(key: string, field: string, args: Record<string, unknown>): Charge {
  switch (field) {
    case 'registeredUsers':
      return { key, field, rows: 1, book: { udid: args.udid as string | null | undefined, count: 'registeredUsers' } };
    case 'addressBook':
      return { key, field, rows: 1, book: { udid: args.udid as string | null | undefined, count: 'contacts' } };
    case 'registeredUsersConnection': {
      const first = args.first;
      // A `first` out of range is refused by the field itself, reading nothing.
      return { key, field, rows: typeof first === 'number' && first >= 1 && first <= LIMITS.registeredUsersPerPage ? first : 1 };
    }
    case 'uploadAddressBook': {
      const contacts = Array.isArray(args.contacts) ? args.contacts.length : 0;
      return { key, field, rows: Math.max(1, contacts), contacts };
    }
    case 'messagesDelete': {
      const input = args.input as { messageIds?: unknown } | undefined;
      const ids = Array.isArray(input?.messageIds) ? input.messageIds.length : 0;
      return { key, field, rows: Math.max(1, ids), ids };
    }
    case 'deleteMessages': {
      const ids = Array.isArray(args.ids) ? args.ids.length : 0;
      return { key, field, rows: Math.max(1, ids), ids };
    }
    default:
      return { key, field, rows: 1 };
  }
}

/**
 * Charges each book field the size of its book: one count per distinct book
 * of the caller. A caller whose credentials fail, or who has no book (an
 * application session), gets nothing from these fields; nor does a udid the
 * field refuses; nor a count the database does not answer: each is left to
 * execution, which answers it as it always does.
 */
async function countBooks(charges: Charge[], context: Context): Promise<void> {
  const books = charges.filter((c) => c.book);
  if (books.length === 0) return;
  let caller;
  try {
    caller = await context.caller();
  } catch {
    return;
  }
  const sizes = new Map<string, Promise<{ registeredUsers: number; contacts: number } | undefined>>();
  for (const c of books) {
    const udid = c.book!.udid ?? '';
    let size = sizes.get(udid);
    if (!size) {
      size = context.services.addressBook.bookSize(caller, udid).catch(() => undefined);
      sizes.set(udid, size);
    }
    const counted = await size;
    if (counted) c.rows = Math.max(1, counted[c.book!.count]);
  }
}

/** Root fields whose selections can hold connections: charged even alone in a document. */
const NESTED_ROOTS = new Set(['viewer', 'node', 'nodes']);

/** The page size a connection field's arguments ask for; 1 for values the field refuses (it then reads nothing). */
function pageSize(definition: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number {
  const max = definition.name === 'dialogs' ? LIMITS.dialogsPerPage : definition.name === 'messages' ? LIMITS.messagesPerPage : LIMITS.registeredUsersPerPage;
  // Without first or last: the field's default (viewer's dialogs and messages 50, registered users 100).
  const asked = args.last ?? args.first ?? (definition.name === 'dialogs' || definition.name === 'messages' ? 50 : 100);
  return typeof asked === 'number' && Number.isInteger(asked) && asked >= 1 && asked <= max ? asked : 1;
}

/**
 * The rows the connections selected under `nodes` (fields of `type`) read:
 * a connection's page size times `multiplier` (the pages it repeats in), and
 * what lies under it at that multiple. Abstract types (Node) count each of
 * their types' selections.
 */
function nestedRows(
  context: { schema: GraphQLSchema; fragments: Record<string, FragmentDefinitionNode>; variables: Record<string, unknown> },
  type: GraphQLOutputType,
  nodes: readonly FieldNode[],
  multiplier: number,
): number {
  const named = getNamedType(type);
  const objects: readonly GraphQLObjectType[] = isObjectType(named) ? [named] : isAbstractType(named) ? context.schema.getPossibleTypes(named) : [];
  let rows = 0;
  for (const object of objects) {
    for (const node of nodes) {
      if (!node.selectionSet) continue;
      const fields = collectFields(context.schema, context.fragments, context.variables, object, node.selectionSet);
      for (const [, children] of fields) {
        const definition = object.getFields()[children[0]!.name.value];
        if (!definition) continue;
        let below = multiplier;
        if (isConnection(definition)) {
          let args: Record<string, unknown> = {};
          try {
            args = getArgumentValues(definition, children[0]!, context.variables);
          } catch {
            // Refused by the field itself.
          }
          below = multiplier * pageSize(definition, args);
          rows += below;
        }
        rows += nestedRows(context, definition.type, children, below);
      }
    }
  }
  return rows;
}

const isConnection = (definition: GraphQLField<unknown, unknown>): boolean =>
  getNamedType(definition.type).name.endsWith('Connection') && definition.args.some((a) => a.name === 'first' || a.name === 'last');

const sum = (charges: Charge[], of: (c: Charge) => number): number => charges.reduce((total, c) => total + of(c), 0);
