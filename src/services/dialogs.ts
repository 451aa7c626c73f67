// Dialogs as their occupants see them: the list (most recent activity first),
// one dialog, and the users they name (occupants, owners, senders). A dialog
// of another application, or one the caller does not occupy, does not exist
// for them: every read here is of the caller's application and occupancy.
import type { Pool } from 'pg';
import { query, type RowOf } from '../db/sql';
import {
  DIALOG_OF_USER,
  DIALOG_ROW,
  DIALOG_WITH_FIRST_PAGE,
  DIALOG_WITH_LAST_PAGE,
  DIALOG_WITH_PAGE_AFTER,
  DIALOG_WITH_PAGE_BEFORE,
  DIALOGS_COUNT,
  DIALOGS_PAGE,
  DIALOGS_PAGE_BACK,
} from '../db/statements/dialogs';
import { BY_IDS, type UserRecord } from '../db/statements/users';
import { isObjectId } from './object-id';
import { decodePosition, encodePosition, fromGlobalId, type Position } from './global-id';
import { type PageArgs, type PageInfo, pageInfo, pageRequest } from './paging';
import { LIMITS } from './validate';
import { badInput } from '../errors';
import { type MessageRow, type ChatService, pageOfRows, type PrefetchedHistory } from './chat';

/** A dialog; `history`: a page of its history read with it (node(id) looks ahead: DialogsService.get). */
export type DialogRow = RowOf<typeof DIALOG_ROW> & { history?: PrefetchedHistory };

/** The user a request acts as: whose chats the viewer shows. */
export interface ViewerRef {
  applicationId: number;
  userId: number;
}

/** A page of dialogs as Viewer.dialogs answers it; `viewer` for its totalCount, read only when asked for. */
export interface DialogPage {
  edges: { cursor: string; node: DialogRow }[];
  pageInfo: PageInfo;
  viewer: ViewerRef;
}

export class DialogsService {
  constructor(
    private readonly pool: Pool,
    private readonly messages: ChatService,
  ) {}

  /**
   * node()/nodes(): each global id's object when the viewer may see it, else
   * null (a malformed id, another application's, a dialog they do not
   * occupy, a message deleted or hidden for them). `history`: the arguments
   * of the one Dialog.messages the request selects under them, read with
   * each dialog (get).
   */
  async nodes(viewer: ViewerRef, ids: readonly string[], history?: PageArgs): Promise<(NodeValue | null)[]> {
    if (ids.length > LIMITS.nodesPerCall) throw badInput('ids', `at most ${LIMITS.nodesPerCall} ids per call (got ${ids.length})`);
    return Promise.all(
      ids.map(async (id): Promise<NodeValue | null> => {
        const decoded = fromGlobalId(id);
        if (decoded?.type === 'Dialog') {
          const dialog = await this.get(viewer, decoded.databaseId, history);
          return dialog ? { ...dialog, __typename: 'Dialog' } : null;
        }
        if (decoded?.type === 'Message') {
          const message = await this.messages.visible(viewer.applicationId, viewer.userId, decoded.databaseId);
          return message ? { ...message, __typename: 'Message' } : null;
        }
        return null;
      }),
    );
  }

  /** Viewer.dialogs: `first` after `after`, or `last` before `before` (1 to 100; neither: the first 50). */
  async connection(viewer: ViewerRef, args: PageArgs): Promise<DialogPage> {
    const request = pageRequest(args, LIMITS.dialogsPerPage, 50, (cursor, field) => decodePosition('d', cursor, field, 'dialogs'));
    const { dialogs, more } = await this.page(viewer, request.direction, request.from, request.count);
    const edges = dialogs.map((node) => ({ cursor: encodePosition('d', { at: node.lastActivityAt, id: node.id }), node }));
    return {
      edges,
      pageInfo: pageInfo(
        request,
        more,
        edges.map((e) => e.cursor),
      ),
      viewer,
    };
  }

  /**
   * A page of the viewer's dialogs, most recent activity first: the `count`
   * after `from` (forward) or before it (backward; null: from the oldest end).
   * One more row than asked tells whether more follow.
   */
  async page(viewer: ViewerRef, direction: 'forward' | 'backward', from: Position | null, count: number): Promise<{ dialogs: DialogRow[]; more: boolean }> {
    const sql = direction === 'forward' ? DIALOGS_PAGE : DIALOGS_PAGE_BACK;
    const rows = await query(this.pool, sql, [viewer.applicationId, viewer.userId, from?.at ?? null, from?.id ?? null, count + 1]);
    const page = rows.slice(0, count);
    if (direction === 'backward') page.reverse();
    return { dialogs: page, more: rows.length > count };
  }

  async count(viewer: ViewerRef): Promise<number> {
    const [row] = await query(this.pool, DIALOGS_COUNT, [viewer.applicationId, viewer.userId]);
    return row?.total ?? 0;
  }

  /** The dialog, when the viewer occupies it; else undefined. */
  async get(viewer: ViewerRef, dialogId: string, history?: PageArgs): Promise<DialogRow | undefined> {
    if (!isObjectId(dialogId)) return undefined;
    const request = history && this.historyRequestOrNone(history);
    if (!history || !request) return (await query(this.pool, DIALOG_OF_USER, [viewer.applicationId, viewer.userId, dialogId]))[0];
    const { direction, from, count } = request;
    const { applicationId, userId } = viewer;
    const forward = direction === 'forward';
    const [row] = from
      ? await query(this.pool, forward ? DIALOG_WITH_PAGE_AFTER : DIALOG_WITH_PAGE_BEFORE, [applicationId, userId, dialogId, from.at, from.id, count + 1])
      : await query(this.pool, forward ? DIALOG_WITH_FIRST_PAGE : DIALOG_WITH_LAST_PAGE, [applicationId, userId, dialogId, count + 1]);
    if (!row) return undefined;
    const { page, ...dialog } = row;
    // [id, senderId, body, createdAt in epoch ms] in the page's order (DIALOG_WITH_*).
    const rows: MessageRow[] = (page as [string, number, string | null, number][]).map(([id, senderId, body, at]) => ({
      id,
      dialogId: dialog.id,
      senderId,
      body,
      createdAt: new Date(at),
    }));
    return { ...dialog, history: { args: history, page: pageOfRows(rows, count, direction) } };
  }

  /** `history` as a page request; none when it is not a valid one (Dialog.messages then reads, and refuses, it itself). */
  private historyRequestOrNone(history: PageArgs) {
    try {
      return this.messages.historyRequest(history);
    } catch {
      return undefined;
    }
  }

  /** Users of the application by id (those that no longer exist are left out). */
  async users(applicationId: number, ids: readonly number[]): Promise<UserRecord[]> {
    if (ids.length === 0) return [];
    return query(this.pool, BY_IDS, [applicationId, [...ids]]);
  }
}

/** What a global id names for the viewer: a dialog they occupy, a message they see, else undefined. */
export type NodeValue = (DialogRow & { __typename: 'Dialog' }) | (MessageRow & { __typename: 'Message' });
