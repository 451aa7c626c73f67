// The chat paths: the caller's dialogs, a dialog's history, sending and
// deleting messages (src/rest/operations/chat.graphql), in QuickBlox's shapes
// as its SDKs call them (QB.chat.dialog.list, QB.chat.message.list,
// QB.chat.message.create, QB.chat.message.delete).
import {
  type RestDialogFragment,
  RestDeleteMessagesDocument,
  RestDialogsDocument,
  type RestMessageFragment,
  RestMessagesDocument,
  RestMessagesSkipDocument,
  RestSendMessageDocument,
} from '../../__generated__/graphql';
import { AppError, badInput } from '../../errors';
import { toGlobalId } from '../../services/global-id';
import { isObjectId } from '../../services/object-id';
import { LIMITS } from '../../services/validate';
import { FLAG, FORM_FLAG, JSON_FLAG, object, type Schema } from '../openapi-schema';
import { bodyObject, count, flag, isoTime, jsonFile, type Query, queryObject, single, text, unixSeconds } from '../parse';
import { jsonOrForm, parameters, type Req, type RestRoute, type Run } from './route';

/** QuickBlox's list paths answer at most 100 items a page. */
const MAX_LIMIT = 100;
/**
 * Not QuickBlox's (it states none): the deepest skip. A skip is read as pages
 * of the GraphQL connection up to it (offset paging costs what it skips, on
 * any store): bounded so that one request cannot make the service read a
 * whole long history. Deeper: page by date, or use GraphQL's cursors.
 */
export const MAX_SKIP = 10_000;

const limitParameter: Schema = { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: MAX_LIMIT, description: `Items per page (1 to ${MAX_LIMIT}).` };
const skipParameter: Schema = { type: 'integer', minimum: 0, maximum: MAX_SKIP, default: 0, description: `Items to skip (0 to ${MAX_SKIP}).` };
const dialogId: Schema = { type: 'string', pattern: '^[0-9a-f]{24}$', description: "The dialog's 24-hex id." };
const timestamp: Schema = { type: 'string', format: 'date-time' };
const nullable = (schema: Schema): Schema => ({ ...schema, type: [schema.type as 'string' | 'integer', 'null'] });

const DIALOG_ITEM = object({
  _id: dialogId,
  name: nullable({ type: 'string' }),
  type: { type: 'integer', enum: [1, 2, 3], description: '1 public group, 2 group, 3 private.' },
  occupants_ids: { type: 'array', items: { type: 'integer' }, description: 'Every occupant, the owner included, by id.' },
  user_id: { type: 'integer', description: "The owner's id." },
  last_message: nullable({ type: 'string', description: "The newest message of the caller's history (null: none, or its content removed)." }),
  last_message_date_sent: nullable({ type: 'integer', description: 'Unix seconds.' }),
  last_message_user_id: nullable({ type: 'integer' }),
  created_at: timestamp,
  updated_at: { ...timestamp, description: "The last activity the caller sees: the newest message of their history, else the dialog's creation." },
});

const MESSAGE_ITEM = object({
  _id: { type: 'string', pattern: '^[0-9a-f]{24}$' },
  chat_dialog_id: dialogId,
  message: nullable({ type: 'string' }),
  sender_id: nullable({ type: 'integer', description: 'Null when the sender no longer exists.' }),
  date_sent: { type: 'integer', description: 'Unix seconds.' },
  created_at: timestamp,
  updated_at: timestamp,
  attachments: { type: 'array', items: { type: 'object' }, maxItems: 0, description: 'Always empty: the service stores text only.' },
});

function dialogItem(d: RestDialogFragment) {
  const last = d.lastMessage;
  return {
    _id: d.databaseId,
    name: d.name,
    type: d.type,
    occupants_ids: d.occupants.map((u) => u.databaseId),
    user_id: d.owner?.databaseId ?? null,
    last_message: last?.body ?? null,
    last_message_date_sent: last ? unixSeconds(last.createdAt) : null,
    last_message_user_id: last?.sender?.databaseId ?? null,
    created_at: isoTime(d.createdAt),
    updated_at: isoTime(d.lastActivityAt),
  };
}

function messageItem(m: RestMessageFragment, chatDialogId: string) {
  return {
    _id: m.databaseId,
    chat_dialog_id: chatDialogId,
    message: m.body,
    sender_id: m.sender?.databaseId ?? null,
    date_sent: unixSeconds(m.createdAt),
    created_at: isoTime(m.createdAt),
    updated_at: isoTime(m.createdAt),
    attachments: [],
  };
}

interface Page<T> {
  items: T[];
  more: boolean;
  /** Where the next page (in the direction read) starts. */
  cursor: string | null;
}

/** Where a page walked past ends: whether more follow, and the cursor to read on from. */
type Passed = Pick<Page<unknown>, 'more' | 'cursor'>;

/**
 * `skip` then `limit` items of a connection read in one direction, as
 * GraphQL pages: the skipped ones a page of at most `pageMax` at a time,
 * through `pass` when given (the page's cursors only: a page followed by
 * more is a full one, so its items need not be read to be counted).
 */
async function skipThenTake<T>(
  skip: number,
  limit: number,
  pageMax: number,
  read: (n: number, cursor: string | null) => Promise<Page<T>>,
  pass: (n: number, cursor: string | null) => Promise<Passed> = read,
): Promise<T[]> {
  let cursor: string | null = null;
  let left = skip;
  while (left > 0) {
    const n = Math.min(left, pageMax);
    const page = await pass(n, cursor);
    if (!page.more) return [];
    left -= n;
    cursor = page.cursor;
  }
  return (await read(limit, cursor)).items;
}

/** The dialog id of a chat path: 24-hex, else refused as its parameter. */
function chatDialogId(value: unknown): string {
  if (typeof value !== 'string' || value === '') throw badInput('chat_dialog_id', 'chat_dialog_id is required');
  if (!isObjectId(value)) throw badInput('chat_dialog_id', 'chat_dialog_id must be a 24-hex dialog id');
  return value;
}

/** A page of a dialog's history in the caller's view; NOT_FOUND when they cannot see the dialog. */
async function historyPage(run: Run, dialog: string, n: number, cursor: string | null, descending: boolean): Promise<Page<RestMessageFragment>> {
  const data = await run(RestMessagesDocument, {
    dialog: toGlobalId('Dialog', dialog),
    ...(descending ? { last: n, before: cursor } : { first: n, after: cursor }),
  });
  // null: no dialog the caller occupies (the document selects nothing of another type).
  const messages = data.node && 'messages' in data.node ? data.node.messages : null;
  if (!messages) throw new AppError('NOT_FOUND', 'Dialog not found');
  const { edges, pageInfo } = messages;
  const items = edges.map((e) => e.node);
  return descending
    ? { items: items.reverse(), more: pageInfo.hasPreviousPage, cursor: pageInfo.startCursor }
    : { items, more: pageInfo.hasNextPage, cursor: pageInfo.endCursor };
}

/** A page of a dialog's history walked past by `skip`: its cursors only (NOT_FOUND as historyPage). */
async function passHistoryPage(run: Run, dialog: string, n: number, cursor: string | null, descending: boolean): Promise<Passed> {
  const data = await run(RestMessagesSkipDocument, {
    dialog: toGlobalId('Dialog', dialog),
    ...(descending ? { last: n, before: cursor } : { first: n, after: cursor }),
  });
  const messages = data.node && 'messages' in data.node ? data.node.messages : null;
  if (!messages) throw new AppError('NOT_FOUND', 'Dialog not found');
  const { pageInfo } = messages;
  return descending ? { more: pageInfo.hasPreviousPage, cursor: pageInfo.startCursor } : { more: pageInfo.hasNextPage, cursor: pageInfo.endCursor };
}

/** Whether the query asks for the newest first: sort_desc=date_sent (QuickBlox's default is oldest first). */
function descending(query: Query): boolean {
  const desc = single('sort_desc', query.sort_desc);
  const asc = single('sort_asc', query.sort_asc);
  for (const [name, value] of [
    ['sort_desc', desc],
    ['sort_asc', asc],
  ] as const) {
    if (value !== undefined && value !== 'date_sent') throw badInput(name, `${name} must be date_sent`);
  }
  if (desc !== undefined && asc !== undefined) throw badInput('sort_desc', 'give sort_desc or sort_asc, not both');
  return desc !== undefined;
}

const FORCE = '1: delete for everyone.';
const idList = { type: 'array', items: { type: 'string' }, uniqueItems: true } as const;

export const CHAT_ROUTES: RestRoute[] = [
  {
    method: 'GET',
    url: '/chat/Dialog.json',
    path: '/chat/Dialog.json',
    style: 'list',
    documents: [RestDialogsDocument],
    async handle(request: Req, reply, run) {
      const query = queryObject(request);
      const limit = count('limit', query.limit, 1, MAX_LIMIT, MAX_LIMIT);
      const skip = count('skip', query.skip, 0, MAX_SKIP, 0);
      let total = 0;
      const items = await skipThenTake(skip, limit, LIMITS.dialogsPerPage, async (n, after) => {
        const { viewer } = await run(RestDialogsDocument, { first: n, after });
        const dialogs = viewer!.dialogs!;
        total = dialogs.totalCount;
        return { items: dialogs.edges.map((e) => e.node), more: dialogs.pageInfo.hasNextPage, cursor: dialogs.pageInfo.endCursor };
      });
      return reply.send({ total_entries: total, skip, limit, items: items.map(dialogItem) });
    },
    operationId: 'listDialogs',
    summary: "The caller's dialogs",
    tags: ['chat'],
    description: [
      'The dialogs the caller occupies, most recent activity first (the newest message of their history, else the',
      "dialog's creation), in QuickBlox's list shape. Other QuickBlox filters are ignored.",
    ].join(' '),
    schema: {
      querystring: parameters({ limit: limitParameter, skip: skipParameter }),
      success: {
        status: 200,
        description: 'A page of dialogs.',
        schema: object({
          total_entries: { type: 'integer', minimum: 0, description: 'Dialogs the caller occupies, all pages.' },
          skip: { type: 'integer', minimum: 0 },
          limit: { type: 'integer', minimum: 1 },
          items: { type: 'array', items: DIALOG_ITEM },
        }),
      },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT'],
  },
  {
    method: 'GET',
    url: '/chat/Message.json',
    path: '/chat/Message.json',
    style: 'list',
    documents: [RestMessagesDocument, RestMessagesSkipDocument],
    async handle(request: Req, reply, run) {
      const query = queryObject(request);
      const dialog = chatDialogId(single('chat_dialog_id', query.chat_dialog_id));
      const limit = count('limit', query.limit, 1, MAX_LIMIT, MAX_LIMIT);
      const skip = count('skip', query.skip, 0, MAX_SKIP, 0);
      const desc = descending(query);
      const items = await skipThenTake(
        skip,
        limit,
        LIMITS.messagesPerPage,
        (n, cursor) => historyPage(run, dialog, n, cursor, desc),
        (n, cursor) => passHistoryPage(run, dialog, n, cursor, desc),
      );
      return reply.send({ skip, limit, items: items.map((m) => messageItem(m, dialog)) });
    },
    operationId: 'listMessages',
    summary: "A dialog's history",
    tags: ['chat'],
    description: [
      "The caller's history of a dialog they occupy: without the messages deleted for everyone or hidden by the caller,",
      'oldest first (sort_asc=date_sent, the default) or newest first (sort_desc=date_sent). A dialog the caller does not',
      'occupy, or of another application, answers 404 as an absent one.',
    ].join(' '),
    schema: {
      querystring: parameters(
        {
          chat_dialog_id: dialogId,
          limit: limitParameter,
          skip: skipParameter,
          sort_desc: { type: 'string', enum: ['date_sent'], description: 'Newest first.' },
          sort_asc: { type: 'string', enum: ['date_sent'], description: 'Oldest first (the default).' },
        },
        ['chat_dialog_id'],
      ),
      success: {
        status: 200,
        description: 'A page of messages.',
        schema: object({ skip: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1 }, items: { type: 'array', items: MESSAGE_ITEM } }),
      },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT', 'NOT_FOUND'],
  },
  {
    method: 'POST',
    url: '/chat/Message.json',
    path: '/chat/Message.json',
    style: 'list',
    documents: [RestSendMessageDocument],
    async handle(request: Req, reply, run) {
      const body = bodyObject(request.body);
      const dialog = chatDialogId(body.chat_dialog_id);
      const message = text('message', body.message) ?? '';
      const { result } = await run(RestSendMessageDocument, { input: { dialogId: dialog, body: message } });
      const refused = result?.userErrors[0];
      if (refused) {
        if (refused.code === 'DIALOG_NOT_FOUND') throw new AppError('NOT_FOUND', 'Dialog not found');
        throw badInput('message', refused.message.replace(/^body/, 'message'));
      }
      return reply.code(201).send(messageItem(result!.message!, dialog));
    },
    operationId: 'createMessage',
    summary: 'Send a message to a dialog',
    tags: ['chat'],
    description: [
      `Sends a text message (1 to ${LIMITS.messageBodyLength} characters, not only white space) to a dialog the caller occupies,`,
      'as QB.chat.message.create does; a dialog the caller does not occupy answers 404 as an absent one.',
    ].join(' '),
    schema: {
      body: jsonOrForm({
        type: 'object',
        properties: {
          chat_dialog_id: dialogId,
          message: { type: 'string', minLength: 1, maxLength: LIMITS.messageBodyLength, description: 'The text.' },
        },
        required: ['chat_dialog_id', 'message'],
      }),
      success: { status: 201, description: 'The message sent.', schema: MESSAGE_ITEM },
    },
    callers: 'user',
    errors: ['BAD_USER_INPUT', 'NOT_FOUND', 'WRITE_OUTCOME_UNKNOWN'],
  },
  {
    method: 'DELETE',
    url: '/chat/Message/:file',
    path: '/chat/Message/{ids}.json',
    style: 'list',
    documents: [RestDeleteMessagesDocument],
    async handle(request: Req, reply, run) {
      const ids = jsonFile(request.params.file).split(',');
      const body = bodyObject(request.body);
      const force = flag('force', body.force ?? single('force', request.query.force));
      const { result } = await run(RestDeleteMessagesDocument, { ids, force });
      return reply.send({ SuccessfullyDeleted: { ids: result.successfullyDeleted }, NotFound: { ids: result.notFound } });
    },
    operationId: 'deleteMessages',
    summary: 'Delete chat messages for the caller, or for everyone',
    tags: ['chat'],
    description: [
      "Without force the messages are hidden from the caller's history only; with force=1 they are deleted for everyone,",
      'which a user may do only as the owner of every dialog involved (else 403 WrongPermissions). An API key without',
      'On-Behalf-Of deletes for everyone within its application; an application session token is refused.',
      'A request that fails a permission check deletes nothing. force is read from the body (JSON or form) or the',
      'query string; the body wins when both are given.',
    ].join(' '),
    schema: {
      params: parameters({
        ids: {
          type: 'string',
          description: `1 to ${LIMITS.idsPerDelete} message ids separated by commas. Ids that name no visible message land in NotFound.`,
          examples: ['6b01a6fd65149db1d1ea789c,ffffffffffffffffffffffff'],
        },
      }),
      querystring: parameters({ force: { ...FLAG, description: FORCE } }),
      body: jsonOrForm(
        { type: 'object', properties: { force: { ...JSON_FLAG, description: FORCE } } },
        { type: 'object', properties: { force: FORM_FLAG } },
        false,
      ),
      success: {
        status: 200,
        description: 'Deleted ids and ids not found.',
        schema: object({
          SuccessfullyDeleted: object({ ids: idList }),
          NotFound: object({
            ids: {
              ...idList,
              description: 'Ids that do not exist, are not visible to the caller, are already deleted or hidden, or are not message ids at all.',
            },
          }),
        }),
      },
    },
    callers: 'any',
    errors: ['WRONG_PERMISSIONS', 'BAD_USER_INPUT', 'WRITE_OUTCOME_UNKNOWN'],
  },
];
