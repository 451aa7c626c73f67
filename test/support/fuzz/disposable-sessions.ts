// Disposable sessions: ending a session, login and logout change the session
// of the request's token, and the rest of a run needs the tenants' shared ones.
import { createHash } from 'node:crypto';
import type { Tenant } from '../seed';
import type { TestService } from '../service';
import type { RawRequest } from './requests';
import type { DigestTracker } from './runs';

export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex');

/** Whose a tenant's shared session token is (undefined: not one of them). */
export function sharedTokenOf(ts: [Tenant, Tenant], token: string): { applicationId: number; userId: number | undefined } | undefined {
  for (const t of ts) {
    for (const [shared, user] of [
      [t.ownerToken, t.owner],
      [t.memberToken, t.member],
      [t.outsiderToken, t.outsider],
      [t.appToken, undefined],
    ] as const) {
      if (token === shared) return { applicationId: t.applicationId, userId: user?.id };
    }
  }
  return undefined;
}

/** A session a request's token named instead of a tenant's shared one: its token hash and user before the request. */
export interface Disposable {
  hash: string;
  userId: number | null;
}

export type DisposableSessions = (req: RawRequest, tracker: DigestTracker) => Promise<Disposable | undefined>;

/**
 * Replaces each shared token in a request's headers (in place) by a new
 * session of the same kind (application, user, none), made as the admin CLI
 * makes them, and takes the digest's baseline again after making it.
 * Answers the first one made.
 */
export function disposableSessions(service: TestService, ts: [Tenant, Tenant]): DisposableSessions {
  return async (req, tracker) => {
    const made = new Map<string, Disposable & { token: string }>();
    const swap = async (value: string): Promise<string> => {
      const kind = sharedTokenOf(ts, value);
      if (!kind) return value;
      let disposable = made.get(value);
      if (!disposable) {
        const { token } = await service.app.provisioning.applications.createSession(kind.applicationId, kind.userId);
        disposable = { token, hash: tokenHash(token), userId: kind.userId ?? null };
        made.set(value, disposable);
      }
      return disposable.token;
    };
    const headers = req.headers ?? {};
    for (const [name, value] of Object.entries(headers)) {
      headers[name] = Array.isArray(value) ? await Promise.all(value.map(swap)) : await swap(value);
    }
    if (made.size > 0) await tracker.baseline();
    return made.values().next().value;
  };
}
