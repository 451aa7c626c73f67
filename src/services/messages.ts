// Messages: the delete rules of the spec, histories, and bulk imports (one
// statement; dialogs and single messages are created by
// src/provisioning/messages.ts).
//
// Each delete is one set-based statement, so its cost does not grow in
// round trips with the number of ids, and its checks and writes see one
// snapshot: a request that fails a permission check writes nothing. A hide
// removes, in the same call, the text of messages every occupant has now
// hidden (see HIDE_FOR_USER: the dialogs' locks).
//
// Deleted content is deleted: a delete for everyone, and the last occupant's
// hide, take the message's body with them (the row stays, so that later
// deletes answer NotFound). With a retention (DELETED_CONTENT_RETENTION_S) a
// copy is kept aside in retained_message_contents until the sweeper removes it.
import type { Pool } from 'pg';
import { query } from '../db/sql';
import { CREATE_MANY, DELETE_FOR_EVERYONE, HIDE_FOR_USER, HISTORY, IS_OCCUPANT } from '../db/statements/messages';
import { AppError, MESSAGES, badInput } from '../errors';
import { refuseApplicationSession } from './auth';
import type { Caller } from './caller';
import { isObjectId, newObjectId } from './object-id';
import { LIMITS } from './validate';

export interface DeleteResult {
  successfullyDeleted: string[];
  notFound: string[];
}

export interface MessagesOptions {
  /** Seconds the content of a deleted message is kept aside for audit (0, the default: not kept). */
  deletedContentRetentionSeconds?: number;
}

export class MessagesService {
  private readonly retentionSeconds: number;

  constructor(
    private readonly pool: Pool,
    options: MessagesOptions = {},
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
    refuseApplicationSession(caller);

    const requested = [...new Set(ids)];
    const candidates = requested.filter(isObjectId);
    let deleted: string[] = [];
    if (candidates.length > 0) {
      deleted =
        caller.kind === 'user' && !force
          ? await this.hideFor(caller.applicationId, caller.userId, candidates)
          : await this.deleteForEveryone(caller, candidates);
    }
    const gone = new Set(deleted);
    return {
      successfullyDeleted: requested.filter((id) => gone.has(id)),
      notFound: requested.filter((id) => !gone.has(id)),
    };
  }

  private async hideFor(applicationId: number, userId: number, ids: string[]): Promise<string[]> {
    const [row] = await query(this.pool, HIDE_FOR_USER, [applicationId, userId, ids, this.retentionSeconds]);
    return row?.ids ?? [];
  }

  private async deleteForEveryone(caller: Caller, ids: string[]): Promise<string[]> {
    const userId = caller.kind === 'user' ? caller.userId : null;
    const [row] = await query(this.pool, DELETE_FOR_EVERYONE, [ids, userId, caller.applicationId, this.retentionSeconds]);
    if (row?.denied) throw new AppError('WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
    return row?.ids ?? [];
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
