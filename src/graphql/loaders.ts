// Users that a request's fields name (a page of dialogs' occupants and owners,
// its messages' senders), read in one statement per tick instead of one per
// field: a screen's query of ten dialogs would otherwise read users twenty
// times. One loader per request context, dropped with it.
import type { GraphQLResolveInfo } from 'graphql';
import type { UserRecord } from '../db/statements/users';
import type { Context } from '../context';
import { selectsOnly } from './selection';

/** The User fields a user's id alone answers (id is the database id until 2.0: schema/CHANGELOG.md). */
const ID_FIELDS = new Set(['id', 'databaseId']);

/**
 * The users of `ids` as this field selects them: when it selects nothing but
 * their ids (a history page's `sender { databaseId }`, REST's occupants), the
 * ids answer without reading a row; else loadUsers. The ids come from the
 * same row as the field's parent (a message's sender, a dialog's owner and
 * occupants), whose foreign keys cascade from users: the user existed in that
 * row's snapshot, as a loaded row would show. The cast: graphql reads no other
 * property of these objects (see registeredUsers for why the mapper is not
 * widened instead).
 */
export async function usersAsSelected(
  ctx: Context,
  info: GraphQLResolveInfo,
  applicationId: number,
  ids: readonly number[],
): Promise<(UserRecord | undefined)[]> {
  if (selectsOnly(info, ID_FIELDS)) return ids.map((id) => ({ id }) as UserRecord);
  return loadUsers(ctx, applicationId, ids);
}

interface Pending {
  applicationId: number;
  ids: Set<number>;
  waiting: { ids: readonly number[]; resolve: (users: (UserRecord | undefined)[]) => void; reject: (error: unknown) => void }[];
}

const loaders = new WeakMap<object, Map<number, Pending>>();

/** The users of `ids` (undefined for one that no longer exists), in order. */
export function loadUsers(ctx: Context, applicationId: number, ids: readonly number[]): Promise<(UserRecord | undefined)[]> {
  let byApplication = loaders.get(ctx);
  if (!byApplication) {
    byApplication = new Map();
    loaders.set(ctx, byApplication);
  }
  let pending = byApplication.get(applicationId);
  if (!pending) {
    const batch: Pending = { applicationId, ids: new Set(), waiting: [] };
    pending = batch;
    byApplication.set(applicationId, batch);
    const map = byApplication;
    setImmediate(() => {
      map.delete(applicationId);
      ctx.services.dialogs.users(applicationId, [...batch.ids]).then(
        (users) => {
          const byId = new Map(users.map((u) => [u.id, u]));
          for (const w of batch.waiting) w.resolve(w.ids.map((id) => byId.get(id)));
        },
        (error: unknown) => {
          for (const w of batch.waiting) w.reject(error);
        },
      );
    });
  }
  for (const id of ids) pending.ids.add(id);
  const batch = pending;
  return new Promise((resolve, reject) => batch.waiting.push({ ids, resolve, reject }));
}
