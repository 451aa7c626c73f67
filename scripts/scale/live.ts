// The proofs' live subscribers (issue 33): graphql-ws clients on every
// instance, directly and through HAProxy, while deletes (for everyone, for
// me) and sends (REST and GraphQL) hit random instances; then every
// subscriber's deliveries are checked against live_events itself, the truth
// every instance reads.
//
// - Subscribers: per user and per stream (STREAMS), one socket straight to
//   an instance (users spread over the instances), subscribed to every
//   dialog of the user, and one through HAProxy to the user's own dialog (its
//   global id). Each subscribes with `after`: the last cursor it received,
//   or the proof's baseline (the last event stored before any subscriber
//   connected), so what each is owed is exactly the stored events after the
//   baseline that reach its user. A socket that closes (an instance killed
//   or drained) is opened again as a client would, after a
//   backoff (1 s doubling to 4 s, as graphql-ws's own retries start near a
//   second), on the next instance for a direct one ("elsewhere"), through
//   HAProxy for the others, with `after` its last cursor.
// - Writes: at a fixed rate, each on an instance picked at random per
//   attempt (a refused connection or a 503 retried on another for up to
//   `retryMs`): REST POST /chat/Message.json and GraphQL messageSend by an
//   occupant; REST DELETE /chat/Message/{id}.json with force=1 and GraphQL
//   messagesDelete FOR_EVERYONE by the dialog's owner; the same without
//   force and FOR_ME by an occupant. Each message the writes send is deleted
//   at most once. The mixed load's own deletes (for me) add events too: the
//   truth is the table, whoever wrote it.
// - Checks (liveChecks): each subscriber received each event it is owed
//   exactly once, none it is not owed, each as the table says it (scope,
//   ids), in the events' order within each dialog; no subscription failed;
//   each acknowledged write made exactly one event; minimums so that nothing
//   passes empty. Figures: delivery latency p50/p99 (receipt minus the
//   event's created_at, the writing transaction's start, on this one
//   machine's clock) for live deliveries, and the replayed ones separately.
//
// Each stream (messagesDeleted, messageAdded) is one entry of STREAMS: its
// document, the table's kinds it carries, whom an event is owed to, and what
// its payload must agree with; subscribers, reconnects and checks follow.
import type { GraphQLFormattedError } from 'graphql';
import { type Client, createClient } from 'graphql-ws';
import type { Pool } from 'pg';
import WebSocket from 'ws';
import { toGlobalId } from '../../src/services/global-id';
import { compareKeys, decodeCursor, encodeCursor, type EventKey } from '../../src/services/live';
import { openDatabase } from '../../src/db';
import { createProvisioning } from '../../src/provisioning';
import { createServices } from '../../src/services';
import { percentile } from '../lib/percentile';
import { enough } from './assertions';
import { type FaultWindow, inWindow } from './faults';
import { log, sleep, waitFor } from './processes';
import type { Check } from './report';
import type { VirtualUser } from './seed';

/** A row of live_events after the baseline: what every subscriber is checked against. */
export interface StoredEvent {
  readonly key: EventKey;
  readonly cursor: string;
  /** 24-hex. */
  readonly dialogId: string;
  readonly kind: string;
  readonly userId: number | null;
  readonly messageIds: readonly string[];
  /** The writing transaction's start (ms). */
  readonly createdAt: number;
}

/** One subscription field, as the proof subscribes to it and checks it. */
export interface Stream {
  readonly field: string;
  /** Variables $dialogId (ID) and $after (String); selects `cursor`. */
  readonly document: string;
  /** The live_events kinds it carries. */
  readonly kinds: readonly string[];
  /** Whether `userId` is owed `event` (`occupants`: the dialog's, fixed during a proof). */
  owed(event: StoredEvent, userId: number, occupants: ReadonlySet<number>): boolean;
  /** Whether a delivered payload says what the stored event says. */
  agrees(payload: Payload, event: StoredEvent): boolean;
}

type Payload = Record<string, unknown> & { cursor: string };

const sameIds = (a: unknown, b: readonly string[]): boolean =>
  Array.isArray(a) && a.length === b.length && (a as unknown[]).map(String).sort().join() === [...b].sort().join();

export const STREAMS: readonly Stream[] = [
  {
    field: 'messagesDeleted',
    document: `subscription ProofMessagesDeleted($dialogId: ID, $after: String) {
      messagesDeleted(dialogId: $dialogId, after: $after) { cursor dialogId scope deletedMessageDatabaseIds deletedAt }
    }`,
    kinds: ['deleted', 'hidden'],
    // For everyone: the dialog's occupants; for me: the user who hid them (their other sockets).
    owed: (event, userId, occupants) => (event.kind === 'hidden' ? event.userId === userId : occupants.has(userId)),
    agrees: (payload, event) =>
      payload.scope === (event.kind === 'hidden' ? 'FOR_ME' : 'FOR_EVERYONE') &&
      payload.dialogId === toGlobalId('Dialog', event.dialogId) &&
      sameIds(payload.deletedMessageDatabaseIds, event.messageIds),
  },
  {
    field: 'messageAdded',
    document: `subscription ProofMessageAdded($dialogId: ID, $after: String) {
      messageAdded(dialogId: $dialogId, after: $after) { cursor message { databaseId } }
    }`,
    kinds: ['added'],
    // Every current occupant, the sender included (docs/decisions.md, messageAdded).
    owed: (_event, userId, occupants) => occupants.has(userId),
    agrees: (payload, event) => (payload.message as { databaseId?: string } | null)?.databaseId === event.messageIds[0],
  },
];

export interface Dialog {
  /** 24-hex. */
  id: string;
  ownerId: number;
  occupants: ReadonlySet<number>;
}

/** The application's dialogs and their occupants (the owner included), as the seed made them. */
export async function dialogsOf(pool: Pool, applicationId: number): Promise<Dialog[]> {
  const { rows } = await pool.query<{ id: string; owner: number; occupants: number[] }>(
    `SELECT d.id, d.owner_id AS owner, array(SELECT o.user_id FROM dialog_occupants o WHERE o.dialog_id = d.id) || d.owner_id AS occupants
       FROM dialogs d WHERE d.application_id = $1 ORDER BY d.id`,
    [applicationId],
  );
  return rows.map((r) => ({ id: r.id, ownerId: r.owner, occupants: new Set(r.occupants) }));
}

/** The cursor of the last event stored now (nothing is being written: before the load). */
export async function baselineCursor(pool: Pool): Promise<string> {
  const { rows } = await pool.query<{ xid: string; id: string }>('SELECT xid::text, id::text FROM live_events ORDER BY xid DESC, id DESC LIMIT 1');
  if (!rows[0]) throw new Error('live_events is empty after the seed: no baseline for the subscribers');
  return encodeCursor({ xid: BigInt(rows[0].xid), id: BigInt(rows[0].id) });
}

/** The application's events after `baseline`, in order. */
export async function storedEvents(pool: Pool, applicationId: number, baseline: string): Promise<StoredEvent[]> {
  const from = decodeCursor(baseline);
  const { rows } = await pool.query<{ xid: string; id: string; dialog: string; kind: string; user: number | null; ids: string[] | null; created: Date }>(
    `SELECT xid::text, id::text, dialog_id AS dialog, kind, user_id AS "user", message_ids AS ids, created_at AS created
       FROM live_events WHERE application_id = $1 AND (xid, id) > ($2::text::bigint, $3::text::bigint) ORDER BY xid, id`,
    [applicationId, String(from.xid), String(from.id)],
  );
  return rows.map((r) => {
    const key = { xid: BigInt(r.xid), id: BigInt(r.id) };
    return { key, cursor: encodeCursor(key), dialogId: r.dialog, kind: r.kind, userId: r.user, messageIds: r.ids ?? [], createdAt: r.created.getTime() };
  });
}

// ---------------------------------------------------------------------------
// Subscribers

interface Delivery {
  readonly cursor: string;
  readonly at: number;
  readonly payload: Payload;
  /** Index in `connections` of the socket it came on. */
  readonly connection: number;
}

interface Connection {
  readonly url: string;
  readonly after: string;
  readonly opened: number;
  /** When connection_ack came. */
  acked?: number;
  /** When the socket closed or the subscription failed. */
  lost?: number;
  code?: number;
}

/** A subscription's errors that mean "try again" (the service's 503 codes): a client subscribes again with `after`. */
const RETRIED_CODES: ReadonlySet<string> = new Set(['SERVICE_UNAVAILABLE', 'DATABASE_TIMEOUT', 'DATABASE_BUSY']);

/**
 * graphql-ws's dispose waits for a connection still being made, and rejects
 * with its close event when that one failed (an instance just killed): a
 * socket that never opened is closed all the same.
 */
const dispose = async (client: Client): Promise<void> => {
  try {
    await client.dispose();
  } catch {
    // Never opened: nothing to close.
  }
};

export type Placement = { kind: 'balancer' } | { kind: 'direct'; home: number };

export class Subscriber {
  readonly deliveries: Delivery[] = [];
  readonly connections: Connection[] = [];
  /** Subscription errors (GraphQL errors: RESYNC_REQUIRED, FORBIDDEN, …), and completions the proof did not ask for. */
  readonly errors: string[] = [];
  /** Errors of the documented unavailable kind (RETRIED_CODES), subscribed again. */
  readonly retried: string[] = [];
  private client: Client | undefined;
  private generation = 0;
  private stopped = false;
  private hops = 0;
  private failures = 0;

  constructor(
    readonly stream: Stream,
    readonly user: VirtualUser,
    /** 24-hex; undefined: every dialog of the user. */
    readonly dialogId: string | undefined,
    readonly placement: Placement,
    readonly urls: { balancer: string; instances: readonly string[] },
    private readonly baseline: string,
  ) {}

  get name(): string {
    const where = this.placement.kind === 'direct' ? `instance ${this.placement.home}` : 'HAProxy';
    return `${this.stream.field} user ${this.user.id} via ${where}${this.dialogId ? ` dialog ${this.dialogId}` : ''}`;
  }

  /** The instance a direct subscriber's current socket is on (undefined through HAProxy). */
  get instance(): number | undefined {
    return this.placement.kind === 'direct' ? (this.placement.home + this.hops) % this.urls.instances.length : undefined;
  }

  get lastCursor(): string {
    return this.deliveries.at(-1)?.cursor ?? this.baseline;
  }

  connect(): void {
    if (this.stopped) return;
    const generation = ++this.generation;
    const base = this.instance === undefined ? this.urls.balancer : this.urls.instances[this.instance]!;
    const connection: Connection = { url: base, after: this.lastCursor, opened: Date.now() };
    const index = this.connections.push(connection) - 1;
    const client = createClient({
      url: `${base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'SVC-Token': this.user.token },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
      on: {
        connected: () => {
          connection.acked = Date.now();
          this.failures = 0;
        },
        closed: (event) => this.lose(generation, connection, (event as { code?: number }).code),
      },
    });
    this.client = client;
    let answeredErrors = false;
    const dialogArg = this.dialogId && this.placement.kind === 'balancer' ? toGlobalId('Dialog', this.dialogId) : this.dialogId;
    client.subscribe<Record<string, Payload>>(
      { query: this.stream.document, variables: { dialogId: dialogArg ?? null, after: connection.after } },
      {
        next: (result) => {
          // After a failed event this socket is being dropped: what it still hands over is replayed on the next.
          if (generation !== this.generation) return;
          const payload = result.data?.[this.stream.field];
          if (payload) this.deliveries.push({ cursor: payload.cursor, at: Date.now(), payload, connection: index });
          if (result.errors) {
            // A start that failed: graphql-ws ends the subscription with this result, then complete. An event
            // that failed (messageAdded reads its message; a failover answers DATABASE_UNAVAILABLE): the
            // stream goes on without it, so a client subscribes again with `after` (docs/graphql.md), as here.
            answeredErrors = true;
            this.refused(result.errors);
            if (!payload) this.lose(generation, connection, undefined);
          }
        },
        error: (error) => {
          // A list of GraphQL errors: the subscription itself was refused or failed (the socket may live on).
          if (Array.isArray(error)) this.refused(error as readonly GraphQLFormattedError[]);
          this.lose(generation, connection, (error as { code?: number }).code);
        },
        complete: () => {
          if (this.stopped || generation !== this.generation) return;
          // After errors (judged when they came): subscribe again. Without: the server ended a live subscription.
          if (!answeredErrors) this.errors.push(`${this.name}: completed by the server`);
          this.lose(generation, connection, undefined);
        },
      },
    );
  }

  /**
   * A subscription answered errors. The database's documented unavailability
   * (the codes a 503 carries over HTTP) is retried as a client would, by
   * subscribing again with `after`; anything else is a failure of the run.
   */
  private refused(errors: readonly GraphQLFormattedError[]): void {
    for (const e of errors) {
      const code = typeof e.extensions?.code === 'string' ? e.extensions.code : 'no code';
      if (RETRIED_CODES.has(code)) this.retried.push(code);
      else this.errors.push(`${this.name}: ${code} ${e.message}`);
    }
  }

  private lose(generation: number, connection: Connection, code: number | undefined): void {
    if (generation !== this.generation || this.stopped) return;
    this.generation++;
    connection.lost = Date.now();
    connection.code = code;
    if (this.client) void dispose(this.client);
    // Elsewhere: a direct subscriber tries the next instance.
    if (this.placement.kind === 'direct') this.hops++;
    const delay = Math.min(1_000 * 2 ** this.failures, 4_000);
    this.failures++;
    setTimeout(() => this.connect(), delay).unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.client) await dispose(this.client);
  }
}

export interface SubscriberSet {
  readonly all: Subscriber[];
  stop(): Promise<void>;
}

/**
 * Per user and per stream: one subscriber straight to an instance (user i
 * on instance i mod n) for every dialog, one through HAProxy for the user's
 * own dialog. Resolves once every socket is acknowledged.
 */
export async function startSubscribers(options: {
  balancer: string;
  instances: readonly string[];
  users: readonly VirtualUser[];
  dialogs: readonly Dialog[];
  baseline: string;
}): Promise<SubscriberSet> {
  const all: Subscriber[] = [];
  const urls = { balancer: options.balancer, instances: options.instances };
  for (const stream of STREAMS) {
    for (const [i, user] of options.users.entries()) {
      const own = options.dialogs.find((d) => d.ownerId === user.id);
      all.push(new Subscriber(stream, user, undefined, { kind: 'direct', home: i % options.instances.length }, urls, options.baseline));
      if (own) all.push(new Subscriber(stream, user, own.id, { kind: 'balancer' }, urls, options.baseline));
    }
  }
  for (const s of all) s.connect();
  await waitFor('every subscriber connected', () => all.every((s) => s.connections[0]?.acked !== undefined), 60_000);
  log(`subscribers: ${all.length} sockets (${STREAMS.map((s) => s.field).join(', ')}) on ${options.instances.length} instances and HAProxy`);
  return {
    all,
    stop: async () => {
      await Promise.all(all.map((s) => s.stop()));
    },
  };
}

// ---------------------------------------------------------------------------
// Writes

export type LiveWriteKind = 'send' | 'delete for everyone' | 'delete for me';

export interface LiveWrite {
  kind: LiveWriteKind;
  via: 'REST' | 'GraphQL';
  userId: number;
  dialogId: string;
  messageId: string;
  at: number;
}

export interface LiveWrites {
  acknowledged: LiveWrite[];
  /** Writes not acknowledged after their retries (inside fault windows: expected). */
  unanswered: number;
  scheduled: number;
}

const SEND = `mutation ProofSend($input: MessageSendInput!) { messageSend(input: $input) { message { databaseId } userErrors { code } } }`;
const DELETE = `mutation ProofDelete($input: MessagesDeleteInput!) { messagesDelete(input: $input) { outcomes { status } userErrors { code } } }`;

/** What the writes read of an answer: REST's `_id` and `SuccessfullyDeleted`, GraphQL's payloads. */
interface Answered {
  _id?: string;
  SuccessfullyDeleted?: { ids?: string[] };
  data?: { messageSend?: { message?: { databaseId?: string } | null } | null; messagesDelete?: { outcomes?: { status?: string }[] } | null } | null;
}

/** One write, each attempt on an instance picked at random; a 503 or no answer retried (50 ms doubling to 800 ms) for `retryMs`. */
async function write(
  instances: readonly string[],
  retryMs: number,
  method: string,
  pathname: string,
  token: string,
  body?: unknown,
): Promise<{ status: number; json: Answered | null }> {
  const deadline = Date.now() + retryMs;
  let delay = 50;
  for (;;) {
    const base = instances[Math.floor(Math.random() * instances.length)]!;
    try {
      const response = await fetch(`${base}${pathname}`, {
        method,
        headers: { 'SVC-Token': token, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(Math.max(retryMs, 5_000)),
      });
      const text = await response.text();
      if (response.status !== 503 || Date.now() > deadline) return { status: response.status, json: text ? (JSON.parse(text) as Answered) : null };
    } catch {
      if (Date.now() > deadline) return { status: 0, json: null };
    }
    await sleep(delay);
    delay = Math.min(delay * 2, 800);
  }
}

/** The mix of the live writes, out of 100 (half sends, half deletes; each half REST and GraphQL alike). */
export const LIVE_MIX = { send: 50, 'delete for everyone': 25, 'delete for me': 25 } as const;

/** Writes at `rate` per second on random instances until the duration is over and `done()`. */
export async function runLiveWrites(options: {
  instances: readonly string[];
  users: readonly VirtualUser[];
  dialogs: readonly Dialog[];
  rate: number;
  durationS: number;
  retryMs: number;
  done(): boolean;
}): Promise<LiveWrites> {
  const { instances, retryMs } = options;
  const result: LiveWrites = { acknowledged: [], unanswered: 0, scheduled: 0 };
  const byId = new Map(options.users.map((u) => [u.id, u]));
  // Messages the writes sent and have not deleted yet, per dialog.
  const sent = new Map<string, string[]>(options.dialogs.map((d) => [d.id, []]));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(Math.random() * list.length)]!;
  let seq = 0;
  const one = async (): Promise<void> => {
    const dialog = pick(options.dialogs);
    const pool = sent.get(dialog.id)!;
    const via = Math.random() < 0.5 ? 'REST' : 'GraphQL';
    let roll = Math.random() * 100;
    // Nothing of the writes' own left to delete in this dialog: a send.
    const kind: LiveWriteKind = pool.length === 0 ? 'send' : ((Object.keys(LIVE_MIX) as LiveWriteKind[]).find((k) => (roll -= LIVE_MIX[k]) < 0) ?? 'send');
    const user = kind === 'delete for everyone' ? byId.get(dialog.ownerId) : byId.get(pick([...dialog.occupants]));
    if (!user) return;
    const at = Date.now();
    if (kind === 'send') {
      const text = `live ${++seq}`;
      const answer =
        via === 'REST'
          ? await write(instances, retryMs, 'POST', '/chat/Message.json', user.token, { chat_dialog_id: dialog.id, message: text })
          : await write(instances, retryMs, 'POST', '/graphql', user.token, { query: SEND, variables: { input: { dialogId: dialog.id, body: text } } });
      const id: unknown = via === 'REST' ? answer.json?._id : answer.json?.data?.messageSend?.message?.databaseId;
      if ((answer.status === 200 || answer.status === 201) && typeof id === 'string') {
        pool.push(id);
        result.acknowledged.push({ kind, via, userId: user.id, dialogId: dialog.id, messageId: id, at });
      } else result.unanswered++;
      return;
    }
    const id = pool.splice(Math.floor(Math.random() * pool.length), 1)[0]!;
    const everyone = kind === 'delete for everyone';
    const answer =
      via === 'REST'
        ? await write(instances, retryMs, 'DELETE', `/chat/Message/${id}.json${everyone ? '?force=1' : ''}`, user.token)
        : await write(instances, retryMs, 'POST', '/graphql', user.token, {
            query: DELETE,
            variables: { input: { messageIds: [id], scope: everyone ? 'FOR_EVERYONE' : 'FOR_ME' } },
          });
    const ok =
      via === 'REST'
        ? answer.status === 200 && answer.json?.SuccessfullyDeleted?.ids?.includes(id) === true
        : answer.json?.data?.messagesDelete?.outcomes?.[0]?.status === 'DELETED';
    if (ok) result.acknowledged.push({ kind, via, userId: user.id, dialogId: dialog.id, messageId: id, at });
    else result.unanswered++;
  };
  const inflight = new Set<Promise<void>>();
  const t0 = Date.now();
  while (Date.now() - t0 < options.durationS * 1000 || !options.done()) {
    const due = Math.floor(((Date.now() - t0) / 1000) * options.rate);
    for (; result.scheduled < due; result.scheduled++) {
      const p: Promise<void> = one()
        .catch(() => {
          result.unanswered++;
        })
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    await sleep(20);
  }
  await Promise.all(inflight);
  return result;
}

// ---------------------------------------------------------------------------
// The listening connections killed

/** Each instance's LISTEN state from its /metrics: up, and reconnects so far. */
async function listenerStates(metricsPorts: readonly number[]): Promise<{ up: boolean; reconnects: number }[]> {
  return Promise.all(
    metricsPorts.map(async (port) => {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      return {
        up: /^live_events_listener_up 1$/m.test(text),
        reconnects: Number(/^live_events_listener_reconnects_total (\d+)/m.exec(text)?.[1] ?? 0),
      };
    }),
  );
}

/** The LISTEN backends on the server behind `pool` (each instance's own connection: pg_stat_activity shows its one statement). */
export async function listenBackends(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE query = 'LISTEN live_events'");
  return rows[0]!.n;
}

/**
 * pg_terminate_backend on every instance's LISTEN connection, then waits
 * until each instance listens again (its reconnect counter moved, and up).
 * Figures: backends terminated, and how long until all listened again.
 */
export async function killListeners(pool: Pool, metricsPorts: readonly number[]): Promise<{ terminated: number; listeningAgainMs: number }> {
  const before = await listenerStates(metricsPorts);
  const started = Date.now();
  const { rows } = await pool.query<{ ok: boolean }>(
    "SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity WHERE query = 'LISTEN live_events' AND pid <> pg_backend_pid()",
  );
  const terminated = rows.filter((r) => r.ok).length;
  await waitFor(
    'every instance listening again',
    async () => (await listenerStates(metricsPorts)).every((s, i) => s.up && s.reconnects > before[i]!.reconnects),
    30_000,
  );
  return { terminated, listeningAgainMs: Date.now() - started };
}

// ---------------------------------------------------------------------------
// Session end closes the sockets on every instance

/**
 * A session made for the proof, a socket with a subscription on each
 * instance, the session ended on the first (DELETE /session.json): every
 * socket closed with 4403 within a second (the revocation bus carries it to
 * the other instances).
 */
export async function sessionEndCloses(options: {
  instances: readonly string[];
  primaryUrl: string;
  applicationId: number;
  userId: number;
  secretsKey: Buffer;
}): Promise<Check> {
  const db = await openDatabase({ url: options.primaryUrl, migrate: false, poolMax: 1 });
  const services = createServices(db, { auth: { cacheMs: 0 }, secretsKey: options.secretsKey });
  const { token } = await createProvisioning(db, { secretsKey: options.secretsKey, services }).applications.createSession(
    options.applicationId,
    options.userId,
  );
  await services.close();
  await db.close();
  const sockets = options.instances.map((base) => {
    let closed!: (value: { code: number; at: number }) => void;
    const done = new Promise<{ code: number; at: number }>((resolve) => (closed = resolve));
    let acked!: () => void;
    const ready = new Promise<void>((resolve) => (acked = resolve));
    const client = createClient({
      url: `${base.replace(/^http/, 'ws')}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'SVC-Token': token },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => {},
      on: { connected: () => acked(), closed: (event) => closed({ code: (event as { code: number }).code, at: Date.now() }) },
    });
    client.subscribe({ query: STREAMS[0]!.document, variables: {} }, { next: () => {}, error: () => {}, complete: () => {} });
    return { client, done, ready };
  });
  try {
    await Promise.all(sockets.map((s) => s.ready));
    // The subscriptions are running once their sockets are acknowledged and a moment passed.
    await sleep(300);
    const ended = await fetch(`${options.instances[0]}/session.json`, { method: 'DELETE', headers: { 'SVC-Token': token } });
    const endedAt = Date.now();
    const outcomes = await Promise.all(sockets.map((s) => Promise.race([s.done, sleep(3_000).then(() => undefined)])));
    const detail = outcomes.map((o, i) => `instance ${i}: ${o ? `${o.code} after ${o.at - endedAt} ms` : 'open after 3 s'}`).join(', ');
    return {
      name: `session ended on instance 0: its sockets on all ${options.instances.length} instances closed with 4403 within 1 s`,
      ok: ended.status < 300 && outcomes.every((o) => o !== undefined && o.code === 4403 && o.at - endedAt <= 1_000),
      detail,
    };
  } finally {
    await Promise.all(sockets.map((s) => dispose(s.client)));
  }
}

// ---------------------------------------------------------------------------
// Checks

export interface LiveFigures {
  subscribers: number;
  owed: number;
  delivered: number;
  liveDeliveries: number;
  replayed: number;
  latencyP50: number;
  latencyP99: number;
  latencyMax: number;
  steadyP50: number;
  steadyP99: number;
  reconnects: number;
  closeCodes: Record<string, number>;
}

interface Tally {
  owed: number;
  missing: number;
  duplicates: number;
  extra: number;
  disagreeing: number;
  outOfOrder: number;
  firsts: string[];
}

/** One subscriber's deliveries against what it is owed. */
function tally(s: Subscriber, events: readonly StoredEvent[], dialogs: ReadonlyMap<string, Dialog>): Tally {
  const owed = events.filter(
    (e) =>
      s.stream.kinds.includes(e.kind) &&
      (s.dialogId === undefined || e.dialogId === s.dialogId) &&
      s.stream.owed(e, s.user.id, dialogs.get(e.dialogId)?.occupants ?? new Set()),
  );
  const owedBy = new Map(owed.map((e) => [e.cursor, e]));
  const t: Tally = { owed: owed.length, missing: 0, duplicates: 0, extra: 0, disagreeing: 0, outOfOrder: 0, firsts: [] };
  const note = (what: string) => {
    if (t.firsts.length < 3) t.firsts.push(`${s.name}: ${what}`);
  };
  const seen = new Set<string>();
  const lastPerDialog = new Map<string, EventKey>();
  for (const d of s.deliveries) {
    if (seen.has(d.cursor)) {
      t.duplicates++;
      note(`twice ${d.cursor}`);
      continue;
    }
    seen.add(d.cursor);
    const event = owedBy.get(d.cursor);
    if (!event) {
      t.extra++;
      note(`not owed ${d.cursor}`);
      continue;
    }
    if (!s.stream.agrees(d.payload, event)) {
      t.disagreeing++;
      note(`${d.cursor} says ${JSON.stringify(d.payload)}, the table ${event.kind} ${event.messageIds.join()}`);
    }
    const last = lastPerDialog.get(event.dialogId);
    if (last && compareKeys(event.key, last) <= 0) {
      t.outOfOrder++;
      note(`out of order ${d.cursor}`);
    }
    lastPerDialog.set(event.dialogId, event.key);
  }
  for (const e of owed) {
    if (!seen.has(e.cursor)) {
      t.missing++;
      note(`missing ${e.cursor} (${e.kind} in ${e.dialogId} at ${new Date(e.createdAt).toISOString()})`);
    }
  }
  return t;
}

/** Waits (up to `ms`) until every subscriber holds as many distinct events as it is owed, then re-reads the table. */
export async function settle(
  subscribers: readonly Subscriber[],
  read: () => Promise<StoredEvent[]>,
  dialogs: ReadonlyMap<string, Dialog>,
  ms = 20_000,
): Promise<StoredEvent[]> {
  const deadline = Date.now() + ms;
  let events = await read();
  while (Date.now() < deadline) {
    if (subscribers.every((s) => tally(s, events, dialogs).missing === 0)) break;
    await sleep(250);
    events = await read();
  }
  return events;
}

export interface LiveCheckInput {
  subscribers: readonly Subscriber[];
  events: readonly StoredEvent[];
  dialogs: readonly Dialog[];
  writes: LiveWrites;
  windows: readonly FaultWindow[];
  /** The window of the instance kill, and which instance it killed (its direct subscribers must reconnect elsewhere). */
  instanceKill?: { window: string; instance: number };
  /** The window of the LISTEN connections' kill. */
  listenerKill?: { window: string; instances: number };
  /** A window all subscribers lived through (the failover proof's primary kill). */
  across?: string;
}

export function liveChecks(input: LiveCheckInput): { checks: Check[]; figures: LiveFigures; lines: string[] } {
  const dialogs = new Map(input.dialogs.map((d) => [d.id, d]));
  const { subscribers, events } = input;
  const tallies = subscribers.map((s) => tally(s, events, dialogs));
  const sum = (k: keyof Omit<Tally, 'firsts'>) => tallies.reduce((n, t) => n + t[k], 0);
  const owed = sum('owed');
  const delivered = subscribers.reduce((n, s) => n + s.deliveries.length, 0);
  const errors = subscribers.flatMap((s) => s.errors);
  const eventBy = new Map(events.map((e) => [e.cursor, e]));

  // Latency: live deliveries (the event was written after the socket that brought it was acknowledged), and the replayed ones.
  const live: { ms: number; at: number }[] = [];
  let replayed = 0;
  for (const s of subscribers) {
    for (const d of s.deliveries) {
      const event = eventBy.get(d.cursor);
      if (!event) continue;
      const acked = s.connections[d.connection]!.acked ?? d.at;
      if (event.createdAt < acked) replayed++;
      else live.push({ ms: d.at - event.createdAt, at: event.createdAt });
    }
  }
  const steady = live.filter((l) => !input.windows.some((w) => inWindow(w, l.at)));
  const reconnects = subscribers.reduce((n, s) => n + s.connections.length - 1, 0);
  const closeCodes: Record<string, number> = {};
  for (const s of subscribers)
    for (const c of s.connections) if (c.lost !== undefined) closeCodes[String(c.code ?? 'none')] = (closeCodes[String(c.code ?? 'none')] ?? 0) + 1;
  const figures: LiveFigures = {
    subscribers: subscribers.length,
    owed,
    delivered,
    liveDeliveries: live.length,
    replayed,
    latencyP50: percentile(
      live.map((l) => l.ms),
      50,
    ),
    latencyP99: percentile(
      live.map((l) => l.ms),
      99,
    ),
    latencyMax: live.length === 0 ? NaN : Math.max(...live.map((l) => l.ms)),
    steadyP50: percentile(
      steady.map((l) => l.ms),
      50,
    ),
    steadyP99: percentile(
      steady.map((l) => l.ms),
      99,
    ),
    reconnects,
    closeCodes,
  };

  // Minimums: the live writes' deletes at least half of those scheduled, every subscriber owed something.
  const scheduledDeletes = Math.floor((input.writes.scheduled * (LIVE_MIX['delete for everyone'] + LIVE_MIX['delete for me'])) / 100);
  const minimumDeletes = enough(scheduledDeletes);
  const ackDeletes = input.writes.acknowledged.filter((w) => w.kind !== 'send');
  const leastOwed = Math.min(...tallies.map((t) => t.owed));
  const firsts = tallies.flatMap((t) => t.firsts).slice(0, 5);
  const checks: Check[] = [
    {
      name: `live: every subscriber received every event it is owed exactly once, as stored, in order per dialog (${subscribers.length} subscribers, each owed at least 1)`,
      ok: subscribers.length > 0 && leastOwed >= 1 && sum('missing') + sum('duplicates') + sum('extra') + sum('disagreeing') + sum('outOfOrder') === 0,
      detail:
        `${owed} owed, ${delivered} delivered: missing ${sum('missing')}, twice ${sum('duplicates')}, not owed ${sum('extra')}, ` +
        `unlike the table ${sum('disagreeing')}, out of order ${sum('outOfOrder')}; least owed to one subscriber ${leastOwed}` +
        (firsts.length > 0 ? `; ${firsts.join('; ')}` : ''),
    },
    {
      name: 'live: no subscription refused or failed (RESYNC_REQUIRED, FORBIDDEN, completed by the server)',
      ok: errors.length === 0,
      detail: errors.length === 0 ? '0' : `${errors.length}: ${errors.slice(0, 3).join('; ')}`,
    },
    publishedOnce(input.writes, events, minimumDeletes, ackDeletes.length),
  ];

  if (input.instanceKill) {
    const { window: name, instance } = input.instanceKill;
    const w = input.windows.find((one) => one.name === name);
    // A socket the instance's death ended (it was open on it), and the first one acknowledged after it (an attempt in
    // between may have failed: 4408 when a busy instance did not read connection_init in time; the client went on).
    const killedOn = (s: Subscriber, c: Connection) =>
      c.url.endsWith(`:${portOf(s, instance)}`) && c.acked !== undefined && c.lost !== undefined && w !== undefined && inWindow(w, c.lost);
    // Direct subscribers whose socket was on the killed instance when it died.
    const onIt = subscribers.filter((s) => s.placement.kind === 'direct' && s.connections.some((c) => killedOn(s, c)));
    const movedAndReplayed = onIt.map((s) => {
      const index = s.connections.findIndex((c) => killedOn(s, c));
      const resumed = s.connections.findIndex((c, i) => i > index && c.acked !== undefined);
      const next = resumed < 0 ? undefined : s.connections[resumed]!;
      const got = next ? s.deliveries.filter((d) => d.connection === resumed && (eventBy.get(d.cursor)?.createdAt ?? Infinity) < next.acked!).length : 0;
      return { elsewhere: next !== undefined && !next.url.endsWith(`:${portOf(s, instance)}`), got };
    });
    const replayedToThem = movedAndReplayed.reduce((n, m) => n + m.got, 0);
    const missingThem = onIt.reduce((n, s) => n + tally(s, events, dialogs).missing, 0);
    checks.push({
      name: `live: instance ${instance} killed: its direct subscribers reconnected elsewhere with after, events written meanwhile replayed to them, none missed`,
      ok: onIt.length >= 1 && movedAndReplayed.every((m) => m.elsewhere) && replayedToThem >= 1 && missingThem === 0,
      detail: `${onIt.length} subscribers, ${movedAndReplayed.filter((m) => m.elsewhere).length} reconnected on another instance with after, ${replayedToThem} events replayed to them, ${missingThem} missed`,
    });
  }
  if (input.listenerKill) {
    const w = input.windows.find((one) => one.name === input.listenerKill!.window);
    const terminated = Number(w?.figures.terminated ?? 0);
    const during = w ? events.filter((e) => inWindow(w, e.createdAt)) : [];
    const missingDuring = subscribers.reduce((n, s) => n + tally(s, during, dialogs).missing, 0);
    const owedDuring = subscribers.reduce((n, s) => n + tally(s, during, dialogs).owed, 0);
    checks.push({
      name: `live: every instance's LISTEN connection killed (pg_terminate_backend): each listened again, the events written meanwhile all delivered`,
      ok: w !== undefined && terminated >= input.listenerKill.instances && owedDuring >= 1 && missingDuring === 0,
      detail: `${terminated} LISTEN backends terminated (${input.listenerKill.instances} instances), listening again in ${w?.figures.listeningAgainMs ?? '?'} ms; ${during.length} events written in the window, owed ${owedDuring} times, missed ${missingDuring}`,
    });
  }
  if (input.across) {
    const w = input.windows.find((one) => one.name === input.across);
    const during = w ? events.filter((e) => inWindow(w, e.createdAt)) : [];
    const owedDuring = subscribers.reduce((n, s) => n + tally(s, during, dialogs).owed, 0);
    const missingDuring = subscribers.reduce((n, s) => n + tally(s, during, dialogs).missing, 0);
    checks.push({
      name: `live: subscribers connected across "${input.across}": 0 events lost`,
      ok: w !== undefined && owedDuring >= 1 && missingDuring === 0,
      detail: `${during.length} events written in the window, owed ${owedDuring} times, lost ${missingDuring}`,
    });
  }
  const lines = [
    `live: ${subscribers.length} subscribers (${STREAMS.map((s) => s.field).join(', ')}); writes ${input.writes.acknowledged.length} acknowledged of ${input.writes.scheduled} scheduled (${countBy(input.writes.acknowledged.map((w) => `${w.kind} ${w.via}`))})`,
    `live: events owed ${owed}, delivered ${delivered} (${live.length} live, ${replayed} replayed after a reconnect); reconnects ${reconnects}, sockets lost by close code ${JSON.stringify(closeCodes)}; subscriptions answered a documented unavailability and retried: ${subscribers.reduce((n, s) => n + s.retried.length, 0)}`,
    `live: delivery latency (receipt minus the event's transaction start) p50 ${figures.latencyP50} ms, p99 ${figures.latencyP99} ms, max ${figures.latencyMax} ms; outside fault windows p50 ${figures.steadyP50} ms, p99 ${figures.steadyP99} ms (${steady.length})`,
  ];
  return { checks, figures, lines };
}

const portOf = (s: Subscriber, instance: number): string => new URL(s.urls.instances[instance]!).port;

const countBy = (values: readonly string[]): string =>
  Object.entries(values.reduce<Record<string, number>>((acc, v) => ({ ...acc, [v]: (acc[v] ?? 0) + 1 }), {}))
    .map(([k, n]) => `${k} ${n}`)
    .join(', ');

/** Each acknowledged live write made exactly one event of its kind (a send: an added event; a delete: one naming its message). */
function publishedOnce(writes: LiveWrites, events: readonly StoredEvent[], minimumDeletes: number, deletes: number): Check {
  const kindOf: Record<LiveWriteKind, string> = { send: 'added', 'delete for everyone': 'deleted', 'delete for me': 'hidden' };
  const count = new Map<string, number>();
  for (const e of events) for (const id of e.messageIds) count.set(`${e.kind} ${id}`, (count.get(`${e.kind} ${id}`) ?? 0) + 1);
  const wrong = writes.acknowledged.filter((w) => count.get(`${kindOf[w.kind]} ${w.messageId}`) !== 1);
  return {
    name: `live: every acknowledged send and delete (REST and GraphQL, random instances) made exactly one event (at least ${minimumDeletes} deletes)`,
    ok: deletes >= minimumDeletes && wrong.length === 0,
    detail: `${writes.acknowledged.length - wrong.length} of ${writes.acknowledged.length} (${deletes} deletes)${wrong.length > 0 ? `; e.g. ${JSON.stringify(wrong.slice(0, 3))}` : ''}`,
  };
}
