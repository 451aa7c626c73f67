// Messages: the delete rules of the spec, histories, and bulk imports (one
// statement; dialogs and single messages are created by
// src/provisioning/chat.ts).
//
// Each delete is one set-based statement, so its cost does not grow in
// round trips with the number of ids, and its checks and writes see one
// snapshot: a request that fails a permission check writes nothing. A hide
// removes, in the same call, the text of messages every occupant has now
// hidden (see HIDE_FOR_USER: the messages' row locks).
//
// Deleted content is deleted: a delete for everyone, and the last occupant's
// hide, take the message's body with them (the row stays, so that later
// deletes answer NotFound). With a retention (DELETED_CONTENT_RETENTION_S) a
// copy is kept aside in retained_message_contents until the sweeper removes it.
import type { Pool } from 'pg';
import { query, type RowOf } from '../db/sql';
import {
  CREATE_MANY,
  DELETE_FOR_EVERYONE,
  HIDE_FOR_USER,
  HISTORY,
  HISTORY_FIRST_PAGE,
  HISTORY_LAST_PAGE,
  HISTORY_PAGE_AFTER,
  HISTORY_PAGE_BEFORE,
  IS_OCCUPANT,
  MESSAGE_AS_DELIVERED,
  MESSAGE_ROW,
  SEND,
  VISIBLE_MESSAGE,
} from '../db/statements/chat';
import { AppError, MESSAGES, badInput } from '../errors';
import { refuseApplicationSession, requireUser } from './auth';
import type { Caller } from './caller';
import { databaseIdOf, decodePosition, encodePosition, type Position } from './global-id';
import { isObjectId, newObjectId } from './object-id';
import { type PageArgs, pageInfo, type PageRequest, pageRequest } from './paging';
import { characters, LIMITS } from './validate';

export type MessageRow = RowOf<typeof MESSAGE_ROW>;

/** A page of a history in its order (oldest first), and whether more lie beyond it in the direction read. */
export interface HistoryPage {
  messages: MessageRow[];
  more: boolean;
}

/** A page read ahead for Dialog.messages with these arguments. */
export interface PrefetchedHistory {
  args: PageArgs;
  page: HistoryPage;
}

/** The page of `rows` read with one more than `count` (newest first when backward). */
export function pageOfRows(rows: MessageRow[], count: number, direction: 'forward' | 'backward'): HistoryPage {
  const messages = rows.slice(0, count);
  if (direction === 'backward') messages.reverse();
  return { messages, more: rows.length > count };
}

const samePageArgs = (a: PageArgs, b: PageArgs) =>
  (a.first ?? null) === (b.first ?? null) &&
  (a.after ?? null) === (b.after ?? null) &&
  (a.last ?? null) === (b.last ?? null) &&
  (a.before ?? null) === (b.before ?? null);
type DeliveredRow = MessageRow & { deleted: boolean; hiddenBy: number[] };

export interface DeleteAttempt {
  /** The distinct ids, in request order. */
  requested: string[];
  deleted: Set<string>;
  /** Ids that failed the permission check: when any did, nothing was written. */
  denied: Set<string>;
  /** Well-formed ids that name a message the delete considered (deleted, denied, or left by a refusal). */
  found: Set<string>;
}

export interface SendRefusal {
  code: 'DIALOG_NOT_FOUND' | 'BODY_BLANK' | 'BODY_TOO_LONG';
  field: 'dialogId' | 'body';
  message: string;
}

const dialogNotFound: SendRefusal = { code: 'DIALOG_NOT_FOUND', field: 'dialogId', message: 'no dialog with this id that you occupy' };

export interface DeleteOutcome {
  requestedId: string;
  /** The 24-hex id the requested id names (null: it names none). */
  messageId: string | null;
  status: 'DELETED' | 'NOT_FOUND' | 'INVALID_ID' | 'NOT_PERMITTED' | 'SKIPPED';
}

export interface DeleteOutcomes {
  outcomes: DeleteOutcome[];
  /** 24-hex ids. */
  deletedMessageIds: string[];
  userErrors: { code: 'WRONG_PERMISSIONS' | 'TOO_MANY_IDS' | 'NO_IDS'; field: 'messageIds'; message: string }[];
}

const refusedDelete = (code: 'TOO_MANY_IDS' | 'NO_IDS', message: string): DeleteOutcomes => ({
  outcomes: [],
  deletedMessageIds: [],
  userErrors: [{ code, field: 'messageIds', message }],
});

export interface DeleteResult {
  successfullyDeleted: string[];
  notFound: string[];
}

export interface ChatOptions {
  /** Seconds the content of a deleted message is kept aside for audit (0, the default: not kept). */
  deletedContentRetentionSeconds?: number;
}

export class ChatService {
  private readonly retentionSeconds: number;
  /** asDelivered's reads in flight, by application and message id. */
  private readonly deliveries = new Map<string, Promise<DeliveredRow | undefined>>();

  constructor(
    private readonly pool: Pool,
    options: ChatOptions = {},
  ) {
    this.retentionSeconds = options.deletedContentRetentionSeconds ?? 0;
  }

  /**
   * Spec rules 1–4. User callers (session, or API key with On-Behalf-Of)
   * hide messages from their own history, or with `force` delete them for
   * everyone when they own every dialog involved. An API key alone deletes for
   * everyone within its application. Application sessions are read-only.
   */
  async delete(caller: Caller, ids: readonly string[], force: boolean): Promise<DeleteResult> {
    if (ids.length === 0) throw badInput('ids', 'ids must name at least one message');
    if (ids.length > LIMITS.idsPerDelete) {
      throw badInput('ids', `at most ${LIMITS.idsPerDelete} ids per call (got ${ids.length})`);
    }
    if (ids.some((id) => id === '')) throw badInput('ids', 'ids must not be empty');
    const attempt = await this.attemptDelete(caller, ids, force);
    if (attempt.denied.size > 0) throw new AppError('WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
    return {
      successfullyDeleted: attempt.requested.filter((id) => attempt.deleted.has(id)),
      notFound: attempt.requested.filter((id) => !attempt.deleted.has(id)),
    };
  }

  /**
   * messagesDelete: the rules and the delete of `delete` (attemptDelete), with
   * an outcome per distinct requested id (global or 24-hex) in request order,
   * and refusals as values. FOR_EVERYONE is `force`.
   */
  async deleteEach(caller: Caller, ids: readonly string[], scope: 'FOR_ME' | 'FOR_EVERYONE'): Promise<DeleteOutcomes> {
    if (ids.length === 0) return refusedDelete('NO_IDS', 'messageIds must name at least one message');
    if (ids.length > LIMITS.idsPerDelete) {
      return refusedDelete('TOO_MANY_IDS', `at most ${LIMITS.idsPerDelete} ids per call (got ${ids.length})`);
    }
    const requested = [...new Set(ids)].map((requestedId) => ({ requestedId, messageId: databaseIdOf(requestedId, 'Message') }));
    const valid = requested.flatMap((r) => (r.messageId === undefined ? [] : [r.messageId]));
    const attempt = await this.attemptDelete(caller, valid, scope === 'FOR_EVERYONE');
    const refused = attempt.denied.size > 0;
    const outcomes = requested.map(({ requestedId, messageId }): DeleteOutcome => {
      if (messageId === undefined) return { requestedId, messageId: null, status: 'INVALID_ID' };
      let status: DeleteOutcome['status'] = 'NOT_FOUND';
      if (attempt.denied.has(messageId)) status = 'NOT_PERMITTED';
      else if (refused && attempt.found.has(messageId)) status = 'SKIPPED';
      else if (attempt.deleted.has(messageId)) status = 'DELETED';
      return { requestedId, messageId, status };
    });
    return {
      outcomes,
      deletedMessageIds: refused ? [] : [...attempt.deleted],
      userErrors: refused ? [{ code: 'WRONG_PERMISSIONS', field: 'messageIds', message: MESSAGES.wrongPermissions }] : [],
    };
  }

  /**
   * The delete both mutations make (one implementation): the distinct ids in
   * request order, and what became of the well-formed ones. When `denied` is
   * not empty, nothing was written. Its callers check the count of ids first.
   */
  async attemptDelete(caller: Caller, ids: readonly string[], force: boolean): Promise<DeleteAttempt> {
    refuseApplicationSession(caller);
    const requested = [...new Set(ids)];
    const candidates = requested.filter(isObjectId);
    let outcome: { deleted: string[]; denied: string[]; found: string[] } = { deleted: [], denied: [], found: [] };
    if (candidates.length > 0) {
      outcome =
        caller.kind === 'user' && !force
          ? await this.hideFor(caller.applicationId, caller.userId, candidates)
          : await this.deleteForEveryone(caller, candidates);
    }
    return { requested, deleted: new Set(outcome.deleted), denied: new Set(outcome.denied), found: new Set(outcome.found) };
  }

  private async hideFor(applicationId: number, userId: number, ids: string[]) {
    const [row] = await query(this.pool, HIDE_FOR_USER, [applicationId, userId, ids, this.retentionSeconds]);
    const deleted = row?.ids ?? [];
    return { deleted, denied: [], found: deleted };
  }

  private async deleteForEveryone(caller: Caller, ids: string[]) {
    const userId = caller.kind === 'user' ? caller.userId : null;
    const [row] = await query(this.pool, DELETE_FOR_EVERYONE, [ids, userId, caller.applicationId, this.retentionSeconds]);
    return { deleted: row?.ids ?? [], denied: row?.denied ?? [], found: row?.found ?? [] };
  }

  /**
   * A page of `userId`'s history of the dialog, oldest first: the `count`
   * after `from` (forward) or before it (backward; null: from the end).
   * One keyset range either way. One more row than asked tells whether more follow.
   */
  async historyPage(
    dialogId: string,
    userId: number,
    direction: 'forward' | 'backward',
    from: { at: Date; id: string } | null,
    count: number,
  ): Promise<HistoryPage> {
    const forward = direction === 'forward';
    const rows = from
      ? await query(this.pool, forward ? HISTORY_PAGE_AFTER : HISTORY_PAGE_BEFORE, [dialogId, userId, from.at, from.id, count + 1])
      : await query(this.pool, forward ? HISTORY_FIRST_PAGE : HISTORY_LAST_PAGE, [dialogId, userId, count + 1]);
    return pageOfRows(rows, count, direction);
  }

  /** Dialog.messages' arguments as a page request (BAD_USER_INPUT, naming the argument, for bad ones). */
  historyRequest(args: PageArgs): PageRequest<Position> {
    return pageRequest(args, LIMITS.messagesPerPage, 50, (cursor, field) => decodePosition('m', cursor, field, 'messages'));
  }

  /**
   * Dialog.messages: the viewer's history of a dialog they occupy, `first`
   * after `after` or `last` before `before` (1 to 1000; neither: the first 50).
   * `prefetched`: the page read with the dialog (DialogsService.get), used
   * when it was read for these very arguments.
   */
  async connection(viewer: { applicationId: number; userId: number }, dialogId: string, args: PageArgs, prefetched?: PrefetchedHistory) {
    const request = this.historyRequest(args);
    const { messages, more } =
      prefetched && samePageArgs(prefetched.args, args)
        ? prefetched.page
        : await this.historyPage(dialogId, viewer.userId, request.direction, request.from, request.count);
    const edges = messages.map((node) => ({ cursor: encodePosition('m', { at: node.createdAt, id: node.id }), node }));
    return {
      edges,
      pageInfo: pageInfo(
        request,
        more,
        edges.map((e) => e.cursor),
      ),
    };
  }

  /** A message `userId` (of the application) sees, or undefined. */
  async visible(applicationId: number, userId: number, id: string): Promise<MessageRow | undefined> {
    if (!isObjectId(id)) return undefined;
    const [row] = await query(this.pool, VISIBLE_MESSAGE, [applicationId, userId, id]);
    return row;
  }

  /**
   * Message `id` as a live event shows it to `userId`: its body null once it
   * is deleted for everyone or hidden by them; undefined once its row is gone.
   * An event reaches every subscriber of its dialog at once, so the read is
   * shared by the deliveries that ask while it is in flight (one statement per
   * event, not one per subscriber); a delivery that asks later reads afresh.
   */
  async asDelivered(applicationId: number, userId: number, id: string): Promise<MessageRow | undefined> {
    const key = `${applicationId}:${id}`;
    let read = this.deliveries.get(key);
    if (!read) {
      const reading: Promise<DeliveredRow | undefined> = query(this.pool, MESSAGE_AS_DELIVERED, [applicationId, id]).then((rows) => rows[0]);
      this.deliveries.set(key, reading);
      const done = () => this.deliveries.delete(key);
      reading.then(done, done);
      read = reading;
    }
    const row = await read;
    if (!row) return undefined;
    const { deleted, hiddenBy, ...message } = row;
    return deleted || hiddenBy.includes(userId) ? { ...message, body: null } : message;
  }

  /**
   * Sends `body` to the dialog as the caller. Refusals come back as values
   * (the GraphQL payload's userErrors): a dialog the caller does not occupy is
   * one they cannot see, so it answers as an absent one.
   */
  async send(caller: Caller, dialogId: string, body: string): Promise<{ message: MessageRow } | { refused: SendRefusal }> {
    const user = requireUser(caller);
    if (body.trim() === '') return { refused: { code: 'BODY_BLANK', field: 'body', message: 'body must not be empty' } };
    if (characters(body) > LIMITS.messageBodyLength) {
      return { refused: { code: 'BODY_TOO_LONG', field: 'body', message: `body must be at most ${LIMITS.messageBodyLength} characters` } };
    }
    if (!isObjectId(dialogId)) return { refused: dialogNotFound };
    const [row] = await query(this.pool, SEND, [newObjectId(), dialogId, user.userId, body, user.applicationId]);
    return row ? { message: row } : { refused: dialogNotFound };
  }

  /** Creates many messages from one occupant in one statement (imports, the benchmark's seed). */
  async createMany(input: { dialogId: string; senderId: number; bodies: readonly string[] }): Promise<string[]> {
    await this.assertOccupant(input.dialogId, input.senderId);
    const ids = input.bodies.map(() => newObjectId());
    await query(this.pool, CREATE_MANY, [input.dialogId, input.senderId, ids, [...input.bodies]]);
    return ids;
  }

  /** A message's sender must be an occupant of its dialog (provisioning's single messages are checked here too). */
  async assertOccupant(dialogId: string, userId: number): Promise<void> {
    const [row] = await query(this.pool, IS_OCCUPANT, [dialogId, userId]);
    if (!row?.occupant) throw badInput('senderId', 'the sender must be an occupant of the dialog');
  }

  /** What `userId`'s history of the dialog shows: neither deleted for everyone nor hidden for them. */
  async history(dialogId: string, userId: number) {
    return query(this.pool, HISTORY, [dialogId, userId]);
  }
}
