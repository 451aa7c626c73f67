// Credential revocation across instances. Each instance caches checked
// credentials for a few seconds (src/services/auth.ts); when one instance ends
// a session or changes its user, every other instance must drop it from its
// cache at once, not when the entry expires; so must an application an
// operator disables (every credential of it).
//
// Through Redis pub/sub when REDIS_URL is set, else through PostgreSQL
// LISTEN/NOTIFY on the primary. A message names the token's hash (never the
// token). An instance that was cut off from the channel may have missed
// messages: when its subscription comes back it drops its whole cache, so
// that every credential is checked against the database again.
//
// Not used on the embedded database: one process owns it, so there is no
// other instance to tell (and PGlite's socket serves a single connection,
// which a LISTEN would hold).
import { Client } from 'pg';
import type { Database } from '../db';
import type { SharedRedis } from './redis';

/** What the service's cache does with a message. */
export interface RevocationTarget {
  /** Drops one session (by token hash), an API key (`apikey:<hash>`) or an application's every credential (`app:<id>`) from the cache. */
  forgetLocally(message: string): void;
  /** Drops every cached credential (the channel was interrupted: messages may be lost). */
  forgetAll(): void;
}

export interface RevocationBus {
  /** Tells every instance (this one included) to forget this session (token hash), API key (`apikey:<hash>`) or application (`app:<id>`). */
  publish(message: string): Promise<void>;
  close(): Promise<void>;
}

/** The NOTIFY channel (an identifier: lower case, no quoting needed). */
export const NOTIFY_CHANNEL = 'chat_user_service_revocations';

/** The Redis channel of a deployment (its key prefix). */
export const redisChannel = (prefix: string): string => `${prefix}revocations`;

/**
 * A publisher only, for processes that serve no requests (the admin CLI):
 * through Redis when given, else NOTIFY on the database server.
 */
export function publisher(target: { redis: SharedRedis } | { notify: (channel: string, payload: string) => Promise<void> }): RevocationBus {
  return {
    publish: async (message) => {
      if ('redis' in target) await target.redis.client.publish(redisChannel(target.redis.prefix), message);
      else await target.notify(NOTIFY_CHANNEL, message);
    },
    close: async () => {},
  };
}

export async function redisRevocations(redis: SharedRedis, target: RevocationTarget): Promise<RevocationBus> {
  const channel = redisChannel(redis.prefix);
  const onMessage = (from: string, message: string) => {
    if (from === channel) target.forgetLocally(message);
  };
  redis.subscriber.on('message', onMessage);
  // ioredis resubscribes on reconnect; messages published meanwhile are lost.
  let interrupted = false;
  const onClose = () => {
    interrupted = true;
  };
  const onReady = () => {
    if (interrupted) target.forgetAll();
    interrupted = false;
  };
  redis.subscriber.on('close', onClose);
  redis.subscriber.on('ready', onReady);
  await redis.subscriber.subscribe(channel);
  return {
    async publish(message) {
      await redis.client.publish(channel, message);
    },
    async close() {
      redis.subscriber.off('message', onMessage);
      redis.subscriber.off('close', onClose);
      redis.subscriber.off('ready', onReady);
      await redis.subscriber.unsubscribe(channel).catch(() => {});
    },
  };
}

/**
 * LISTEN on a connection of its own (not pooled: a pooled connection changes
 * hands, and a transaction pooler would drop the LISTEN), reconnecting after a
 * failure. NOTIFY goes through `notify` (the pool), so it is sent by whatever
 * connection the write used.
 */
export async function postgresRevocations(
  url: string,
  notify: (channel: string, payload: string) => Promise<void>,
  target: RevocationTarget,
): Promise<RevocationBus> {
  let client: Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  const listen = async (): Promise<void> => {
    const next = new Client({ connectionString: url });
    next.on('notification', (message) => {
      if (message.channel === NOTIFY_CHANNEL && message.payload) target.forgetLocally(message.payload);
    });
    next.on('error', () => {
      if (client !== next || closed) return;
      client = undefined;
      next.end().catch(() => {});
      // Messages sent while not listening are lost.
      target.forgetAll();
      scheduleRetry();
    });
    await next.connect();
    await next.query(`LISTEN ${NOTIFY_CHANNEL}`);
    client = next;
  };
  const scheduleRetry = () => {
    retry = setTimeout(() => {
      listen().then(
        () => target.forgetAll(),
        () => scheduleRetry(),
      );
    }, 500);
    retry.unref();
  };

  await listen();
  return {
    publish: (message) => notify(NOTIFY_CHANNEL, message),
    async close() {
      closed = true;
      if (retry) clearTimeout(retry);
      await client?.end().catch(() => {});
    },
  };
}

export interface RevocationsOptions {
  /** Tell other instances at all (false: a single instance needs no one told). */
  revocation?: boolean | undefined;
  /** Redis shared by the instances: its channel when given. */
  redis?: SharedRedis | undefined;
  /** Else NOTIFY on the database server (`url` undefined: the embedded database, no bus). */
  database: Pick<Database, 'url' | 'pool'>;
}

/** The bus that tells other instances of a revoked session: Redis when shared, else PostgreSQL's NOTIFY on a server database. */
export async function openRevocations(options: RevocationsOptions, target: RevocationTarget): Promise<RevocationBus | undefined> {
  const { database } = options;
  if (options.revocation && options.redis) {
    return redisRevocations(options.redis, target);
  } else if (options.revocation && database.url !== undefined) {
    return postgresRevocations(
      database.url,
      async (channel, payload) => {
        await database.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
      },
      target,
    );
  }
  return undefined;
}
