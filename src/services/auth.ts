// Credentials → Caller. The one place where tokens, API keys and
// On-Behalf-Of are checked, for both the GraphQL and the REST surface.
import type { PrismaClient } from '../db';
import { AppError, MESSAGES } from '../errors';
import type { Caller } from './caller';
import { hashSecret } from './secrets';

/** The credential headers of a request, as sent (undefined when absent). */
export interface Credentials {
  token?: string | undefined;
  authorization?: string | undefined;
  onBehalfOf?: string | undefined;
}

/** Sessions expire this long after their last request. */
export const SESSION_TTL_SECONDS = 2 * 60 * 60;

const API_KEY_PATTERN = /^ApiKey ([\x21-\x7e]{1,512})$/;
const USER_ID_PATTERN = /^[1-9][0-9]{0,9}$/;
const MAX_INT = 2_147_483_647;

export class AuthService {
  constructor(private readonly prisma: PrismaClient) {}

  async authenticate(credentials: Credentials): Promise<Caller> {
    const { token, authorization, onBehalfOf } = credentials;
    if (token !== undefined && authorization !== undefined) {
      throw new AppError('BAD_REQUEST', MESSAGES.bothCredentials);
    }
    if (token !== undefined) {
      if (onBehalfOf !== undefined) throw new AppError('BAD_REQUEST', MESSAGES.onBehalfOfWithoutApiKey);
      return this.bySessionToken(token);
    }
    if (authorization !== undefined) return this.byApiKey(authorization, onBehalfOf);
    throw new AppError('UNAUTHENTICATED', MESSAGES.noCredentials);
  }

  /**
   * One statement: finds the live session, slides its expiry to two hours
   * from now and stamps the user's last_request_at.
   */
  private async bySessionToken(token: string): Promise<Caller> {
    const rows = await this.prisma.$queryRaw<{ applicationId: number; userId: number | null }[]>`
      WITH s AS (
        UPDATE sessions
           SET expires_at = now() + make_interval(secs => ${SESSION_TTL_SECONDS})
         WHERE token_hash = ${hashSecret(token)} AND expires_at > now()
        RETURNING application_id, user_id
      ), touched AS (
        UPDATE users SET last_request_at = now()
         WHERE id = (SELECT user_id FROM s)
        RETURNING id
      )
      SELECT application_id AS "applicationId", user_id AS "userId" FROM s`;
    const session = rows[0];
    if (!session) throw new AppError('UNAUTHENTICATED', MESSAGES.sessionMissing);
    return session.userId === null
      ? { kind: 'application', applicationId: session.applicationId, via: 'session' }
      : { kind: 'user', applicationId: session.applicationId, userId: session.userId, via: 'session' };
  }

  private async byApiKey(authorization: string, onBehalfOf: string | undefined): Promise<Caller> {
    const key = API_KEY_PATTERN.exec(authorization)?.[1];
    if (key === undefined) throw new AppError('UNAUTHENTICATED', MESSAGES.malformedAuthorization);
    let userId: number | null = null;
    if (onBehalfOf !== undefined) {
      userId = USER_ID_PATTERN.test(onBehalfOf) ? Number(onBehalfOf) : NaN;
      // A malformed id names no user: same answer as an unknown one.
      if (!(userId <= MAX_INT)) userId = 0;
    }
    const rows = await this.prisma.$queryRaw<{ applicationId: number; userId: number | null }[]>`
      SELECT a.id AS "applicationId",
             (SELECT u.id FROM users u WHERE u.id = ${userId}::int AND u.application_id = a.id) AS "userId"
        FROM applications a
       WHERE a.api_key_hash = ${hashSecret(key)}`;
    const app = rows[0];
    if (!app) throw new AppError('UNAUTHENTICATED', MESSAGES.unknownApiKey);
    if (onBehalfOf === undefined) return { kind: 'application', applicationId: app.applicationId, via: 'apiKey' };
    if (app.userId === null) throw new AppError('FORBIDDEN', MESSAGES.onBehalfOfUnknown);
    return { kind: 'user', applicationId: app.applicationId, userId: app.userId, via: 'apiKey' };
  }
}

/** The rule shared by every operation that acts on a user's own data. */
export function requireUser(caller: Caller): Extract<Caller, { kind: 'user' }> {
  if (caller.kind !== 'user') throw new AppError('FORBIDDEN', MESSAGES.needUser);
  return caller;
}
