// Dialogs and messages: the delete rules of the spec, and what the admin CLI
// needs to create and read them.
//
// Each delete is one set-based statement, so its cost does not grow in
// round trips with the number of ids, and its checks and writes see one
// snapshot: a request that fails a permission check writes nothing.
import type { Pool } from 'pg';
import type { PrismaClient } from '../db';
import { query, statement } from '../db/sql';
import { AppError, MESSAGES, badInput } from '../errors';
import type { Caller } from './caller';
import { isObjectId, newObjectId } from './object-id';
import { LIMITS } from './validate';

export interface DeleteResult {
  successfullyDeleted: string[];
  notFound: string[];
}

export const DIALOG_TYPES = [1, 2, 3] as const;

/** Rule 1 / 4: visible to the user (an occupant, not yet deleted or hidden) → hidden for them. */
const HIDE_FOR_USER = statement<[number, number, string[]], { ids: string[] }>(
  'messages.hide_for_user',
  `WITH visible AS (
     SELECT m.id
       FROM messages m
       JOIN dialogs d ON d.id = m.dialog_id AND d.application_id = $1
       JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = $2
      WHERE m.id = ANY($3::text[]) AND m.deleted_at IS NULL
   ), hidden AS (
     INSERT INTO message_hides (message_id, user_id)
     SELECT id, $2 FROM visible
     ON CONFLICT DO NOTHING
     RETURNING message_id
   )
   SELECT ARRAY(SELECT message_id FROM hidden) AS ids`,
);

/**
 * Rule 2 ($2 = the user, force: must own every dialog; other applications'
 * messages do not exist for them) and rule 3 ($2 null, API key: every message
 * must belong to application $3). Either check failing → denied, nothing written.
 */
const DELETE_FOR_EVERYONE = statement<[string[], number | null, number], { denied: boolean; ids: string[] }>(
  'messages.delete_for_everyone',
  `WITH target AS (
     SELECT m.id, d.application_id, d.owner_id
       FROM messages m
       JOIN dialogs d ON d.id = m.dialog_id
      WHERE m.id = ANY($1::text[]) AND m.deleted_at IS NULL
        AND ($2::int IS NULL OR d.application_id = $3)
   ), denied AS (
     SELECT 1 FROM target
      WHERE CASE WHEN $2::int IS NULL THEN application_id <> $3 ELSE owner_id <> $2::int END
      LIMIT 1
   ), deleted AS (
     UPDATE messages m SET deleted_at = now()
       FROM target t
      WHERE m.id = t.id AND m.deleted_at IS NULL AND NOT EXISTS (SELECT 1 FROM denied)
     RETURNING m.id
   )
   SELECT EXISTS (SELECT 1 FROM denied) AS denied, ARRAY(SELECT id FROM deleted) AS ids`,
);

export class MessagesService {
  constructor(
    private readonly prisma: PrismaClient,
    private readonly pool: Pool,
  ) {}

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
    if (caller.kind === 'application' && caller.via === 'session') throw new AppError('FORBIDDEN', MESSAGES.needUser);

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
    const [row] = await query(this.pool, HIDE_FOR_USER, [applicationId, userId, ids]);
    return row?.ids ?? [];
  }

  private async deleteForEveryone(caller: Caller, ids: string[]): Promise<string[]> {
    const userId = caller.kind === 'user' ? caller.userId : null;
    const [row] = await query(this.pool, DELETE_FOR_EVERYONE, [ids, userId, caller.applicationId]);
    if (row?.denied) throw new AppError('WRONG_PERMISSIONS', MESSAGES.wrongPermissions);
    return row?.ids ?? [];
  }

  /** Creates a dialog; the owner is always one of its occupants. */
  async createDialog(input: { applicationId: number; ownerId: number; occupantIds: number[]; type?: number }) {
    const type = input.type ?? 2;
    if (!DIALOG_TYPES.includes(type as 1 | 2 | 3)) throw badInput('type', 'type must be 1, 2 or 3');
    const occupantIds = [...new Set([input.ownerId, ...input.occupantIds])];
    const members = await this.prisma.user.count({
      where: { applicationId: input.applicationId, id: { in: occupantIds } },
    });
    if (members !== occupantIds.length) {
      throw badInput('occupantIds', 'owner and occupants must be users of the application');
    }
    const dialog = await this.prisma.dialog.create({
      data: {
        id: newObjectId(),
        applicationId: input.applicationId,
        ownerId: input.ownerId,
        type,
        occupants: { create: occupantIds.map((userId) => ({ userId })) },
      },
    });
    return { id: dialog.id, ownerId: dialog.ownerId, occupantIds, type: dialog.type };
  }

  /** Creates a message from an occupant of the dialog. */
  async createMessage(input: { dialogId: string; senderId: number; body: string }) {
    await this.assertOccupant(input.dialogId, input.senderId);
    return this.prisma.message.create({
      data: { id: newObjectId(), dialogId: input.dialogId, senderId: input.senderId, body: input.body },
      select: { id: true, senderId: true, body: true },
    });
  }

  /** Creates many messages from one occupant in one statement (imports, the benchmark's seed). */
  async createMany(input: { dialogId: string; senderId: number; bodies: readonly string[] }): Promise<string[]> {
    await this.assertOccupant(input.dialogId, input.senderId);
    const ids = input.bodies.map(() => newObjectId());
    await this.prisma.$executeRaw`
      INSERT INTO messages (id, dialog_id, sender_id, body)
      SELECT id, ${input.dialogId}, ${input.senderId}, body FROM unnest(${ids}::text[], ${[...input.bodies]}::text[]) AS t(id, body)`;
    return ids;
  }

  private async assertOccupant(dialogId: string, userId: number): Promise<void> {
    const occupant = await this.prisma.dialogOccupant.findUnique({ where: { dialogId_userId: { dialogId, userId } } });
    if (!occupant) throw badInput('senderId', 'the sender must be an occupant of the dialog');
  }

  /** What `userId`'s history of the dialog shows: neither deleted for everyone nor hidden for them. */
  async history(dialogId: string, userId: number) {
    return this.prisma.$queryRaw<{ id: string; senderId: number; body: string }[]>`
      SELECT m.id, m.sender_id AS "senderId", m.body
        FROM messages m
        JOIN dialog_occupants o ON o.dialog_id = m.dialog_id AND o.user_id = ${userId}
       WHERE m.dialog_id = ${dialogId} AND m.deleted_at IS NULL
         AND NOT EXISTS (SELECT 1 FROM message_hides h WHERE h.message_id = m.id AND h.user_id = ${userId})
       ORDER BY m.created_at, m.id`;
  }
}
