// Live events (issue 33): each instance's listener, and the fan-out to this
// instance's subscribers.
//
// Triggers write every deletion and new message to live_events in the
// writing transaction and NOTIFY live_events at its commit (the migration
// live_events). Each instance follows the table in (xid, id) order from the
// last event it handed out, below the oldest running transaction (the
// statements in src/db/statements/live.ts): a NOTIFY only says "read now".
// So a lost notification, a lost connection, a restart or a failover loses
// nothing: the next read (after the reconnect, or the periodic one) starts
// from the position, and nothing is handed out twice, because the position
// only moves forward over events already handed out.
//
// The signal arrives on one connection of the instance's own (LISTEN does
// not survive a transaction pooler: `listenUrl` names the server directly).
// On the embedded database, whose socket serves one connection, the pool's
// connection listens instead (PGlite forwards the notifications of its one
// backend to it). A read every `pollMs` backs both up.
//
// Who is told (issue 33, item 3): a subscriber is a user of an application;
// a delete for everyone and a new message reach the dialog's current
// occupants (read once per batch of events), a delete for me only the
// sockets of the user who made it, another application's events no one.
import { Client, Pool, type PoolClient } from 'pg';
import { query } from '../db/sql';
import { IS_OCCUPANT, LATEST, OCCUPANTS, READ_AFTER, REPLAY } from '../db/statements/live';
import { AppError, badInput, MESSAGES } from '../errors';
import { KEEPALIVE } from '../db';
import { PG_TYPES } from '../db/types';

/** The NOTIFY channel the triggers signal on (the migration live_events). */
export const LIVE_CHANNEL = 'live_events';

export type LiveEventKind = 'deleted' | 'hidden' | 'added';

/** A position in the events' order: (transaction id, id). */
export interface EventKey {
  readonly xid: bigint;
  readonly id: bigint;
}

export interface LiveEvent {
  readonly key: EventKey;
  readonly applicationId: number;
  /** 24-hex. */
  readonly dialogId: string;
  readonly kind: LiveEventKind;
  /** Who hid the messages (hidden), who sent the message (added); null for a delete for everyone. */
  readonly userId: number | null;
  readonly messageIds: readonly string[];
  readonly createdAt: Date;
}

export const compareKeys = (a: EventKey, b: EventKey): number => (a.xid < b.xid ? -1 : a.xid > b.xid ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

const START: EventKey = { xid: 0n, id: 0n };

// ---------------------------------------------------------------------------
// Cursors: opaque to clients (base64url of "e:<xid>:<id>"), exact encodings only.

export const encodeCursor = (key: EventKey): string => Buffer.from(`e:${key.xid}:${key.id}`, 'latin1').toString('base64url');

export function decodeCursor(cursor: string, field = 'after'): EventKey {
  const match = cursor.length <= 64 ? /^e:([0-9]{1,19}):([0-9]{1,19})$/.exec(Buffer.from(cursor, 'base64url').toString('latin1')) : null;
  if (match) {
    const key = { xid: BigInt(match[1]!), id: BigInt(match[2]!) };
    if (encodeCursor(key) === cursor) return key;
  }
  throw badInput(field, `${field} must be a cursor that a live event carried`);
}

// ---------------------------------------------------------------------------

/** What a WebSocket's context offers the subscription resolvers (src/graphql/subscriptions.ts). */
export interface LiveSocket {
  /** The events of `kinds` owed to the socket's user (one dialog, or all), after `after`, each mapped to what the field yields. */
  subscribe<T>(request: {
    kinds: readonly LiveEventKind[];
    dialogId: string | undefined;
    after: EventKey | undefined;
    map: (event: LiveEvent) => T;
  }): Promise<AsyncIterableIterator<T>>;
}

/** What a subscription wants. */
export interface LiveSubscription {
  readonly applicationId: number;
  readonly userId: number;
  /** One dialog (24-hex), or every dialog of the user. */
  readonly dialogId: string | undefined;
  readonly kinds: ReadonlySet<LiveEventKind>;
  /** Hands an event over (in order, each once). */
  deliver(event: LiveEvent): void;
}

/** Adds `member` to the set of `key` (made when missing); returns that set. */
function addTo<K>(map: Map<K, Set<Member>>, key: K, member: Member): Set<Member> {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(member);
  return set;
}

/** Removes `member` from `set`, and the set from the map once empty (if it is still the key's). */
function removeFrom<K>(map: Map<K, Set<Member>>, key: K, set: Set<Member>, member: Member): void {
  set.delete(member);
  if (set.size === 0 && map.get(key) === set) map.delete(key);
}

interface Member {
  readonly subscription: LiveSubscription;
  /** Live events that arrived while its replay ran: handed over after it. */
  pending: LiveEvent[] | undefined;
  /**
   * Without `after`: the last event stored when it subscribed. The listener
   * may still be behind it (a busy instance reads in batches): the events up
   * to it were written before the subscription began and are not its own.
   */
  readonly from: EventKey | undefined;
}

export interface LiveHubOptions {
  pool: Pool;
  /** A server to LISTEN on (a direct connection, not through a transaction pooler); undefined: the embedded database's pool connection. */
  listenUrl: string | undefined;
  /** The periodic read, whatever the notifications (default 1000 ms). */
  pollMs?: number;
  /** Events per read (default 500). */
  batchSize?: number;
  /** Told of a listener failure (main logs it). */
  onError?: (error: unknown) => void;
}

export interface LiveHubStats {
  /** Events read from the table by this instance. */
  eventsRead: number;
  /** Events handed to subscriptions. */
  eventsDelivered: number;
  /** Seconds between the last event's commit and its read here. */
  lagSeconds: number;
  /** Whether the LISTEN connection is up. */
  listening: boolean;
  /** Times the LISTEN connection was (re)established after a loss. */
  reconnects: number;
}

export class LiveHub {
  private readonly pool: Pool;
  /**
   * The listener's reads (READ_AFTER, OCCUPANTS): a connection of its own
   * beside the LISTEN one on a server, so that a burst of requests queued for
   * the service's pool never delays delivery (measured: a bench writing 200
   * events/s through the same pool on a loaded machine waited seconds behind
   * it). The embedded database's one connection otherwise.
   */
  private readonly readPool: Pool;
  private readonly listenUrl: string | undefined;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly onError: (error: unknown) => void;
  private readonly members = new Map<number, Set<Member>>();
  /**
   * The same members by what they listen to: one dialog (by its id, unique
   * across applications), or every dialog of their user (by application).
   * An event is offered only to its dialog's and its application's
   * every-dialog members: with 10,000 sockets of one application on an
   * instance, trying each event on every member cost 10,000 checks an event
   * (the benchmark's 1,000 events/s: 10 million a second, on the event loop).
   */
  private readonly byDialog = new Map<string, Set<Member>>();
  private readonly everyDialog = new Map<number, Set<Member>>();
  private position: EventKey = START;
  private started = false;
  private closed = false;
  private reading: Promise<void> | undefined;
  private again = false;
  private client: Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  private readonly listeningClients = new WeakSet<PoolClient>();
  private readonly onPoolConnect = (client: PoolClient): void => void this.listenOn(client).catch(this.onError);
  readonly stats: LiveHubStats = { eventsRead: 0, eventsDelivered: 0, lagSeconds: 0, listening: false, reconnects: 0 };

  constructor(options: LiveHubOptions) {
    this.pool = options.pool;
    this.listenUrl = options.listenUrl;
    this.readPool =
      options.listenUrl === undefined
        ? options.pool
        : new Pool({ connectionString: options.listenUrl, max: 1, types: PG_TYPES, statement_timeout: 5_000, ...KEEPALIVE });
    // An idle connection that failed is replaced at the next read; the error must not reach the process.
    if (this.readPool !== this.pool) this.readPool.on('error', (error) => this.onError(error));
    this.pollMs = options.pollMs ?? 1_000;
    this.batchSize = options.batchSize ?? 500;
    this.onError = options.onError ?? (() => {});
  }

  /**
   * Starts listening. Reads run only while this instance has subscriptions:
   * an instance without any costs the database nothing (no statement on the
   * pool, which request counts and benchmarks measure), and its first
   * subscription starts from the last event stored then (earlier ones reach
   * only subscribers that ask with `after`).
   */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    await this.listen().catch((error: unknown) => {
      this.onError(error);
      this.scheduleReconnect();
    });
    this.poll = setInterval(() => this.read(), this.pollMs);
    this.poll.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const timer of [this.retry, this.soon]) if (timer) clearTimeout(timer);
    if (this.poll) clearInterval(this.poll);
    await this.reading?.catch(() => {});
    await this.client?.end().catch(() => {});
    this.pool.off('connect', this.onPoolConnect);
    if (this.readPool !== this.pool) await this.readPool.end().catch(() => {});
    this.members.clear();
    this.byDialog.clear();
    this.everyDialog.clear();
  }

  /** The position this instance has handed events out to. */
  get current(): EventKey {
    return this.position;
  }

  get subscriptionCount(): number {
    let count = 0;
    for (const set of this.members.values()) count += set.size;
    return count;
  }

  /**
   * Adds a subscription (after checking that its user occupies its dialog);
   * with `after`, hands it the stored events after that cursor first, then
   * the live ones, each once; without, the events stored after it began. RESYNC_REQUIRED when the cursor's event is past
   * retention. Returns the function that removes it.
   */
  async subscribe(subscription: LiveSubscription, after: EventKey | undefined): Promise<() => void> {
    const { applicationId, userId, dialogId } = subscription;
    if (dialogId !== undefined) {
      const [row] = await query(this.pool, IS_OCCUPANT, [dialogId, applicationId, userId]);
      // Another application's dialog, or one the user is not in: the same answer (nothing told about it).
      if (!row?.occupant) throw new AppError('FORBIDDEN', 'Not an occupant of this dialog');
    }
    const first = this.members.size === 0;
    if (first) await this.catchUp();
    // The first one's start is the listener's (catchUp); a later one's the last event stored now.
    const from = after === undefined && !first ? await this.latest() : undefined;
    const member: Member = { subscription, pending: after === undefined ? undefined : [], from };
    const set = addTo(this.members, applicationId, member);
    const index = dialogId === undefined ? addTo(this.everyDialog, applicationId, member) : addTo(this.byDialog, dialogId, member);
    // A notification that came while nobody here listened was not acted on.
    if (first) this.read();
    const remove = () => {
      removeFrom(this.members, applicationId, set, member);
      if (dialogId === undefined) removeFrom(this.everyDialog, applicationId, index, member);
      else removeFrom(this.byDialog, dialogId, index, member);
    };
    if (after === undefined) return remove;
    try {
      await this.replay(member, after, this.position);
    } catch (error) {
      remove();
      throw error;
    }
    return remove;
  }

  /** An idle instance's position moved to the last event stored now: nobody here was owed the ones before it. */
  private async catchUp(): Promise<void> {
    await this.reading?.catch(() => {});
    const key = await this.latest();
    if (key && this.members.size === 0 && compareKeys(key, this.position) > 0) this.position = key;
  }

  /** The last event below the horizon now (LATEST), if any. */
  private async latest(): Promise<EventKey | undefined> {
    const [latest] = await query(this.pool, LATEST, []);
    return latest ? { xid: BigInt(latest.xid), id: BigInt(latest.id) } : undefined;
  }

  private async replay(member: Member, after: EventKey, upTo: EventKey): Promise<void> {
    const { subscription } = member;
    let from = after;
    for (;;) {
      const rows = await query(this.pool, REPLAY, [
        String(from.xid),
        String(from.id),
        String(upTo.xid),
        String(upTo.id),
        subscription.applicationId,
        this.batchSize,
      ]);
      if (!rows[0]?.known) throw new AppError('RESYNC_REQUIRED', MESSAGES.resyncRequired);
      const events: LiveEvent[] = [];
      for (const row of rows) {
        if (row.xid === null) continue;
        events.push({
          key: { xid: BigInt(row.xid), id: BigInt(row.id!) },
          applicationId: row.applicationId!,
          dialogId: row.dialogId!,
          kind: row.kind as LiveEventKind,
          userId: row.userId,
          messageIds: row.messageIds ?? [],
          createdAt: row.createdAt!,
        });
      }
      if (events.length === 0) break;
      const occupants = await this.occupantsOf(subscription.applicationId, events);
      for (const event of events) if (this.owed(subscription, event, occupants)) this.hand(subscription, event);
      from = events.at(-1)!.key;
      if (events.length < this.batchSize) break;
    }
    // Live events that came meanwhile: all after upTo (the listener hands out only events after its position).
    const pending = member.pending ?? [];
    member.pending = undefined;
    for (const event of pending) this.hand(subscription, event);
  }

  private hand(subscription: LiveSubscription, event: LiveEvent): void {
    this.stats.eventsDelivered++;
    subscription.deliver(event);
  }

  /** Reads now (a notification, the periodic read, a reconnect); a read running already reads again after. */
  read(): void {
    if (this.closed || !this.started || this.members.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readAll()
      .catch((error: unknown) => this.onError(error))
      .finally(() => {
        this.reading = undefined;
        if (this.again) {
          this.again = false;
          this.read();
        }
      });
  }

  private async readAll(): Promise<void> {
    for (;;) {
      const rows = await query(this.readPool, READ_AFTER, [String(this.position.xid), String(this.position.id), this.batchSize]);
      const events: LiveEvent[] = [];
      let held = false;
      for (const row of rows) {
        if (!row.ready) {
          held = true;
          break;
        }
        events.push({
          key: { xid: BigInt(row.xid), id: BigInt(row.id) },
          applicationId: row.applicationId,
          dialogId: row.dialogId,
          kind: row.kind as LiveEventKind,
          userId: row.userId,
          messageIds: row.messageIds,
          createdAt: row.createdAt,
        });
      }
      if (events.length > 0) {
        this.stats.eventsRead += events.length;
        this.stats.lagSeconds = Math.max(0, (Date.now() - events.at(-1)!.createdAt.getTime()) / 1000);
        await this.dispatch(events);
        const last = events.at(-1)!.key;
        if (compareKeys(last, this.position) > 0) this.position = last;
      }
      if (held) {
        // A transaction older than the next event still runs: read again shortly.
        if (!this.soon && !this.closed) {
          this.soon = setTimeout(() => {
            this.soon = undefined;
            this.read();
          }, 20);
          this.soon.unref();
        }
        return;
      }
      if (rows.length < this.batchSize) return;
    }
  }

  private async dispatch(events: LiveEvent[]): Promise<void> {
    const byApplication = new Map<number, LiveEvent[]>();
    for (const event of events) {
      if (!this.members.has(event.applicationId)) continue;
      const list = byApplication.get(event.applicationId);
      if (list) list.push(event);
      else byApplication.set(event.applicationId, [event]);
    }
    for (const [applicationId, list] of byApplication) {
      const occupants = await this.occupantsOf(applicationId, list);
      for (const event of list) {
        for (const set of [this.byDialog.get(event.dialogId), this.everyDialog.get(applicationId)]) {
          if (!set) continue;
          for (const member of set) {
            if (member.from !== undefined && compareKeys(event.key, member.from) <= 0) continue;
            if (!this.owed(member.subscription, event, occupants)) continue;
            if (member.pending) member.pending.push(event);
            else this.hand(member.subscription, event);
          }
        }
      }
    }
  }

  /** The current occupants of the dialogs of those events that reach occupants. */
  private async occupantsOf(applicationId: number, events: readonly LiveEvent[]): Promise<Map<string, Set<number>>> {
    const dialogs = [...new Set(events.filter((event) => event.kind !== 'hidden').map((event) => event.dialogId))];
    const occupants = new Map<string, Set<number>>();
    if (dialogs.length === 0) return occupants;
    for (const row of await query(this.readPool, OCCUPANTS, [dialogs, applicationId])) occupants.set(row.dialogId, new Set(row.userIds));
    return occupants;
  }

  private owed(subscription: LiveSubscription, event: LiveEvent, occupants: Map<string, Set<number>>): boolean {
    if (event.applicationId !== subscription.applicationId || !subscription.kinds.has(event.kind)) return false;
    if (subscription.dialogId !== undefined && subscription.dialogId !== event.dialogId) return false;
    if (event.kind === 'hidden') return event.userId === subscription.userId;
    return occupants.get(event.dialogId)?.has(subscription.userId) ?? false;
  }

  private async listen(): Promise<void> {
    if (this.listenUrl === undefined) {
      // The embedded database: its one connection, and every one the pool makes after it.
      this.pool.on('connect', this.onPoolConnect);
      const client = await this.pool.connect();
      try {
        await this.listenOn(client);
      } finally {
        client.release();
      }
      this.stats.listening = true;
      return;
    }
    const next = new Client({ connectionString: this.listenUrl, ...KEEPALIVE });
    next.on('notification', (message) => {
      if (message.channel === LIVE_CHANNEL) this.read();
    });
    next.on('error', (error) => {
      if (this.client !== next || this.closed) return;
      this.onError(error);
      this.client = undefined;
      this.stats.listening = false;
      next.end().catch(() => {});
      this.scheduleReconnect();
    });
    await next.connect();
    await next.query(`LISTEN ${LIVE_CHANNEL}`);
    this.client = next;
    this.stats.listening = true;
    // Whatever was written while not listening.
    this.read();
  }

  private async listenOn(client: PoolClient): Promise<void> {
    if (this.listeningClients.has(client)) return;
    this.listeningClients.add(client);
    client.on('notification', (message) => {
      if (message.channel === LIVE_CHANNEL && !this.closed) this.read();
    });
    await client.query(`LISTEN ${LIVE_CHANNEL}`);
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.listen().then(
        () => this.stats.reconnects++,
        (error: unknown) => {
          this.onError(error);
          this.scheduleReconnect();
        },
      );
    }, 500);
    this.retry.unref();
  }
}
