// The optional Redis shared by all instances (REDIS_URL): rate-limit counters,
// credential revocations (pub/sub) and callers' last write positions.
//
// Commands fail fast while Redis is away (no offline queue, one attempt, a
// short command timeout) so that a request waits for Redis at most that long;
// what a failure means is each user's choice (the rate limiter's
// RATE_LIMIT_ON_STORE_ERROR, revocations falling back to the cache's life).
// The client reconnects on its own.
import Redis from 'ioredis';
import { AppError } from '../errors';

export interface RedisOptions {
  url: string;
  /** Prefix of every key and channel (REDIS_KEY_PREFIX). */
  prefix: string;
  /** Longest wait for the first connection (REDIS_CONNECT_TIMEOUT_MS). */
  connectTimeoutMs?: number;
  /** Where connection changes are said (fastify's or pino's logger). */
  log?: { info(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

export interface SharedRedis {
  /** Commands (rate limits, positions). */
  readonly client: Redis;
  /** A second connection in subscriber mode (a subscribed connection takes no other command). */
  readonly subscriber: Redis;
  readonly prefix: string;
  close(): Promise<void>;
}

/** Longest a command waits for its answer before it counts as a store failure. */
const COMMAND_TIMEOUT_MS = 500;

function newClient(url: string, log: RedisOptions['log'], role: string): Redis {
  const client = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    commandTimeout: COMMAND_TIMEOUT_MS,
    // Reconnect quickly at first, then every 1 s: a restarted Redis is back in use within a second.
    retryStrategy: (times) => Math.min(times * 100, 1_000),
  });
  let down = false;
  client.on('error', (error: Error) => {
    if (!down) log?.warn({ err: { message: error.message }, role }, 'redis unavailable');
    down = true;
  });
  client.on('ready', () => {
    if (down) log?.info({ role }, 'redis available again');
    down = false;
  });
  return client;
}

/** Connects both connections, waiting up to `connectTimeoutMs` for Redis to answer. */
export async function connectRedis(options: RedisOptions): Promise<SharedRedis> {
  const client = newClient(options.url, options.log, 'commands');
  const subscriber = newClient(options.url, options.log, 'subscriber');
  const timeoutMs = options.connectTimeoutMs ?? 30_000;
  try {
    await Promise.all([waitReady(client, timeoutMs), waitReady(subscriber, timeoutMs)]);
  } catch (error) {
    client.disconnect();
    subscriber.disconnect();
    throw error;
  }
  return {
    client,
    subscriber,
    prefix: options.prefix,
    async close() {
      await Promise.all([client.quit().catch(() => client.disconnect()), subscriber.quit().catch(() => subscriber.disconnect())]);
    },
  };
}

/** Resolves once the client is ready; the client keeps retrying in between (its retryStrategy). */
function waitReady(client: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off('ready', onReady);
      reject(new AppError('SERVICE_UNAVAILABLE', `Redis did not answer within ${timeoutMs} ms (REDIS_URL, REDIS_CONNECT_TIMEOUT_MS)`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    client.once('ready', onReady);
    // The first attempt's failure is not final: retryStrategy tries again.
    client.connect().catch(() => {});
  });
}
