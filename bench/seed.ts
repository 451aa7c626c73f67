// The benchmark's database: created (dropped first) on the server, migrated
// with openDatabase({migrate: true}), and seeded through the services' own
// bulk methods, the code paths the service itself uses (the application, its
// dialogs and sessions through src/provisioning, as the admin CLI makes them).
import { Client } from 'pg';
import { openDatabase } from '../src/db';
import { createProvisioning, type Provisioning } from '../src/provisioning';
import { type Caller, createServices, type Services } from '../src/services';
import { hashPassword, newSecretsKey } from '../src/services/secrets';
import type { ImportedUser } from '../src/services/users';
import type { BenchOptions } from './options';
import { log, progress } from './progress';

export type Target = 'service' | 'baseline';
export type DeleteMode = 'me' | 'everyone';
export const DELETE_SIZES = [1, 100, 1000] as const;
export type DeleteSize = (typeof DELETE_SIZES)[number];

/** Share of a pool's messages each delete size gets. */
// 1 id a request needs few ids for many requests; 100 ids took 16% until its
// rounds were found too short to measure (bench/options.ts).
const DELETE_SHARES: Record<DeleteSize, number> = { 1: 0.02, 100: 0.18, 1000: 0.8 };

export interface DeletePlan {
  size: DeleteSize;
  /** Requests of the excluded warm-up. */
  warm: number;
  /** Requests measured. */
  measured: number;
}

/** How many requests each delete scenario gets from one pool of `perPool` messages. */
export function deletePlan(perPool: number): DeletePlan[] {
  return DELETE_SIZES.map((size) => {
    const requests = Math.floor((perPool * DELETE_SHARES[size]) / size);
    if (requests < 1) {
      throw new Error(`--messages too small: each of the 4 pools needs room for at least one ${size}-id delete`);
    }
    const warm = Math.floor(requests / 10);
    return { size, warm, measured: requests - warm };
  });
}

/** Fresh message ids, one list per request: [warm-up requests, measured requests]. */
export interface DeletePool {
  warm: string[][];
  measured: string[][];
}

export interface SeedResult {
  databaseUrl: string;
  applicationId: number;
  callerId: number;
  serviceToken: string;
  baselineToken: string;
  users: number;
  /** Registered users the caller's global book matches. */
  contactsMatching: number;
  /** Registered users the caller's book 'big' matches. */
  bigMatching: number;
  messagesSeeded: number;
  pools: Record<`${Target}:${DeleteMode}:${DeleteSize}`, DeletePool>;
  /** The application's API key (the live scenario's sockets: ApiKey with On-Behalf-Of). */
  apiKey: string;
  /** The history scenarios' dialog (null: not seeded, the group does not run). */
  history: HistorySeed | null;
  /** The live scenario's dialogs (null: not seeded). */
  live: LiveSeed | null;
  /** Seconds. */
  timings: { createDatabase: number; users: number; contacts: number; messages: number; history: number; live: number; total: number; analyze: number };
}

/**
 * One dialog of the caller's (and the other occupant's) with `messages`
 * messages, one millisecond apart: message g (1 = the oldest) has id
 * historyMessageId(g) and was sent at `firstAt` + g ms.
 */
export interface HistorySeed {
  dialogId: string;
  messages: number;
  /** ms since the epoch of message 0 (one before the oldest). */
  firstAt: number;
}

export interface LiveSeed {
  dialogs: {
    id: string;
    /** The occupants' user ids (the database's): one socket each. */
    userIds: number[];
    /** Messages the latency runs delete, oldest first. */
    messageIds: string[];
  }[];
}

/** The 24-hex id of the history dialog's message g: its own prefix, apart from the service's ObjectIds (a time first). */
export const historyMessageId = (g: number) => `f0${g.toString(16).padStart(22, '0')}`;

const seconds = (since: number) => Math.round((performance.now() - since) / 10) / 100;
const pad7 = (n: number) => String(n).padStart(7, '0');
export const userPhone = (externalId: number) => `+1555${pad7(externalId)}`;

export function databaseUrl(serverUrl: string, database: string): string {
  const url = new URL(serverUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin(serverUrl: string, sql: string): Promise<void> {
  const client = new Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function createDatabase(options: BenchOptions): Promise<void> {
  await admin(options.serverUrl, `DROP DATABASE IF EXISTS ${options.database} WITH (FORCE)`);
  await admin(options.serverUrl, `CREATE DATABASE ${options.database}`);
}

export async function dropDatabase(options: BenchOptions): Promise<void> {
  await admin(options.serverUrl, `DROP DATABASE IF EXISTS ${options.database} WITH (FORCE)`);
}

/** `count` distinct external ids drawn from 3..max (1 is the caller, 2 the other occupant). */
function sampleExternalIds(count: number, max: number): number[] {
  const candidates = new Int32Array(max - 2);
  for (let i = 0; i < candidates.length; i++) candidates[i] = i + 3;
  const n = Math.min(count, candidates.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (candidates.length - i));
    const t = candidates[i]!;
    candidates[i] = candidates[j]!;
    candidates[j] = t;
  }
  return Array.from(candidates.subarray(0, n));
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [items[i], items[j]] = [items[j]!, items[i]!];
  }
  return items;
}

interface Book {
  contacts: { name: string; phone: string }[];
  /** Contacts whose phone is a registered user's. */
  matching: number;
}

/** A book of `size` contacts of which `share` are registered users' phones. */
function book(size: number, share: number, users: number, prefix: string): Book {
  const matches = sampleExternalIds(Math.round(size * share), users);
  const contacts = matches.map((id) => ({ name: `Friend ${id}`, phone: userPhone(id) }));
  for (let k = 1; contacts.length < size; k++) contacts.push({ name: `Stranger ${k}`, phone: `${prefix}${pad7(k)}` });
  return { contacts: shuffle(contacts), matching: matches.length };
}

/** Runs `task` over `items` with at most `concurrency` in flight, in order of start. */
async function pipeline<T>(items: Iterable<T>, concurrency: number, task: (item: T) => Promise<void>): Promise<void> {
  const pending: Promise<void>[] = [];
  for (const item of items) {
    if (pending.length >= concurrency) await pending.shift();
    const p = task(item);
    p.catch(() => {}); // awaited below; this only keeps an early failure from counting as unhandled
    pending.push(p);
  }
  await Promise.all(pending);
}

export async function seed(options: BenchOptions): Promise<SeedResult> {
  const startedAll = performance.now();
  const url = databaseUrl(options.serverUrl, options.database);

  let started = performance.now();
  await createDatabase(options);
  // Seeding statements are bulk imports, not requests: on a machine busy with other work a batch can outlast the service's 5 s bound.
  const db = await openDatabase({ url, migrate: true, poolMax: 4, statementTimeoutMs: 300_000 });
  const createSeconds = seconds(started);
  const secretsKey = newSecretsKey();
  // The seed is an operator's import, not a client: no book, device-book or
  // discovery budget applies to it (the service's own answers still do).
  const services = createServices(db, {
    secretsKey,
    addressBooks: { maxContacts: 1_000_000, maxDeviceBooks: 1_000, discoveryPerDay: Number.MAX_SAFE_INTEGER },
  });
  const provisioning = createProvisioning(db, { secretsKey, services });
  try {
    const { application, apiKey } = await provisioning.applications.create('bench');
    const applicationId = application.id;
    const usersSeconds = await seedUsers(services, applicationId, options);

    const asApp = { kind: 'application', applicationId, via: 'apiKey' } as const;
    const caller = await services.users.findByExternalId(asApp, 1);
    const other = await services.users.findByExternalId(asApp, 2);
    const asCaller = { kind: 'user', applicationId, userId: caller.id, via: 'session' } as const;
    const books = await seedBooks(services, asCaller, options);
    const messages = await seedMessages({ services, provisioning }, { applicationId, ownerId: caller.id, senderId: other.id }, options);
    const history = options.only.includes('history')
      ? await seedHistory(db.pool, provisioning, { applicationId, ownerId: caller.id, senderId: other.id }, options)
      : null;
    const live = options.only.includes('live') ? await seedLive(db.pool, applicationId, options) : null;

    const serviceToken = (await provisioning.applications.createSession(applicationId, caller.id)).token;
    const baselineToken = (await provisioning.applications.createSession(applicationId, caller.id)).token;
    const total = seconds(startedAll);

    // Not part of the seeding time: what autovacuum would soon do on a
    // freshly loaded database (statistics, visibility map for index-only scans).
    started = performance.now();
    await db.pool.query('VACUUM (ANALYZE)');
    const analyze = seconds(started);

    return {
      databaseUrl: url,
      applicationId,
      callerId: caller.id,
      serviceToken,
      baselineToken,
      users: options.users,
      contactsMatching: books.global.matching,
      bigMatching: books.big.matching,
      messagesSeeded: messages.seeded,
      pools: messages.pools,
      apiKey,
      history: history?.seed ?? null,
      live: live?.seed ?? null,
      timings: {
        createDatabase: createSeconds,
        users: usersSeconds,
        contacts: books.seconds,
        messages: messages.seconds,
        history: history?.seconds ?? 0,
        live: live?.seconds ?? 0,
        total,
        analyze,
      },
    };
  } finally {
    await services.close();
    await db.close();
  }
}

/**
 * Users: one password hash for everyone (hashing is deliberately slow),
 * batches of options.userBatch, two statements in flight so that building
 * the next batch overlaps the database's work on the previous one. Returns
 * the seconds it took.
 */
async function seedUsers(services: Services, applicationId: number, options: BenchOptions): Promise<number> {
  const started = performance.now();
  const passwordHash = hashPassword('bench-password');
  const bar = progress('users (users.createMany)', options.users);
  function* batches(): Generator<ImportedUser[]> {
    for (let first = 1; first <= options.users; first += options.userBatch) {
      const last = Math.min(options.users, first + options.userBatch - 1);
      const batch: ImportedUser[] = [];
      for (let id = first; id <= last; id++) {
        batch.push({
          login: `user${id}`,
          passwordHash,
          fullName: `Bench User ${id}`,
          email: `user${id}@bench.example`,
          phone: userPhone(id),
          externalUserId: id,
        });
      }
      yield batch;
    }
  }
  await pipeline(batches(), 2, async (batch) => {
    const created = await services.users.createMany(applicationId, batch);
    if (created !== batch.length) throw new Error(`users.createMany created ${created} of ${batch.length} users`);
    bar.increment(created);
  });
  bar.stop();
  const usersSeconds = seconds(started);
  log(`seeded ${options.users.toLocaleString('en-US')} users in ${usersSeconds} s`);
  return usersSeconds;
}

/** The caller's address books: the global one for the load, 'big' for the correctness check. */
async function seedBooks(services: Services, asCaller: Caller, options: BenchOptions): Promise<{ global: Book; big: Book; seconds: number }> {
  const started = performance.now();
  const global = book(options.contacts, options.matchShare, options.users, '+1666');
  const big = book(options.bigContacts, options.matchShare, options.users, '+1777');
  const contactsBar = progress('contacts (addressBook.upload)', global.contacts.length + big.contacts.length);
  for (const [udid, { contacts }] of [
    ['', global],
    ['big', big],
  ] as const) {
    for (let i = 0; i < contacts.length; i += 10_000) {
      const slice = contacts.slice(i, i + 10_000);
      const result = await services.addressBook.upload(asCaller, slice, udid, false);
      if (result.created !== slice.length) throw new Error(`addressBook.upload created ${result.created} of ${slice.length}`);
      contactsBar.increment(slice.length);
    }
  }
  contactsBar.stop();
  return { global, big, seconds: seconds(started) };
}

/**
 * Messages: a dialog owned by the caller per target and delete mode, each
 * holding a quarter of the messages; every delete request gets ids of its own.
 */
async function seedMessages(
  writers: { services: Services; provisioning: Provisioning },
  dialog: { applicationId: number; ownerId: number; senderId: number },
  options: BenchOptions,
): Promise<{ pools: SeedResult['pools']; seeded: number; seconds: number }> {
  const started = performance.now();
  const perPool = Math.floor(options.messages / 4);
  const plan = deletePlan(perPool);
  const pools = {} as SeedResult['pools'];
  const messagesBar = progress('messages (messages.createMany)', perPool * 4);
  let seeded = 0;
  for (const target of ['service', 'baseline'] as const) {
    for (const mode of ['me', 'everyone'] as const) {
      const ids = await seedDialog(writers, dialog, perPool, (n) => messagesBar.increment(n));
      seeded += ids.length;
      let next = 0;
      const take = (size: number) => ids.slice(next, (next += size));
      for (const { size, warm, measured } of plan) {
        pools[`${target}:${mode}:${size}`] = {
          warm: Array.from({ length: warm }, () => take(size)),
          measured: Array.from({ length: measured }, () => take(size)),
        };
      }
    }
  }
  messagesBar.stop();
  return { pools, seeded, seconds: seconds(started) };
}

/** A dialog of the owner's with `count` messages from the sender; returns their ids in order. */
async function seedDialog(
  { services, provisioning }: { services: Services; provisioning: Provisioning },
  { applicationId, ownerId, senderId }: { applicationId: number; ownerId: number; senderId: number },
  count: number,
  made: (n: number) => void,
): Promise<string[]> {
  const dialog = await provisioning.chat.createDialog({ applicationId, ownerId, occupantIds: [senderId] });
  const ids: string[] = [];
  for (let i = 0; i < count; i += 10_000) {
    const bodies = Array.from({ length: Math.min(10_000, count - i) }, (_, k) => `bench message ${i + k}`);
    ids.push(...(await services.chat.createMany({ dialogId: dialog.id, senderId, bodies })));
    made(bodies.length);
  }
  return ids;
}

/** What the seeding statements need of the database's pool. */
interface Sql {
  query(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

/**
 * An operator's import of old history, not news: the insert trigger that
 * records each new message as a live event (issue 33) is off while the bulk
 * insert runs, else 1,000,000 "added" events would be written and kept for
 * the events' retention.
 */
async function withoutAddedEvents<T>(db: Sql, run: () => Promise<T>): Promise<T> {
  await db.query('ALTER TABLE messages DISABLE TRIGGER live_events_messages_inserted');
  try {
    return await run();
  } finally {
    await db.query('ALTER TABLE messages ENABLE TRIGGER live_events_messages_inserted');
  }
}

/**
 * The history scenarios' dialog: options.historyMessages messages in ONE
 * INSERT … SELECT generate_series on the server (1,000,000 in seconds, where
 * messages.createMany's 10,000-row batches would take minutes), one
 * millisecond apart so that the keyset order (created_at, id) is the order of g.
 */
async function seedHistory(
  db: Sql,
  provisioning: Provisioning,
  { applicationId, ownerId, senderId }: { applicationId: number; ownerId: number; senderId: number },
  options: BenchOptions,
): Promise<{ seed: HistorySeed; seconds: number }> {
  const started = performance.now();
  const dialog = await provisioning.chat.createDialog({ applicationId, ownerId, occupantIds: [senderId], name: 'history' });
  const firstAt = Date.UTC(2026, 0, 1);
  await withoutAddedEvents(db, () =>
    db.query(
      `INSERT INTO messages (id, dialog_id, sender_id, body, created_at)
       SELECT 'f0' || lpad(to_hex(g), 22, '0'), $1, CASE WHEN g % 2 = 0 THEN $2::int ELSE $3::int END,
              'history message ' || g, to_timestamp($4::bigint / 1000.0) + g * interval '1 millisecond'
         FROM generate_series(1, $5::int) g`,
      [dialog.id, ownerId, senderId, firstAt, options.historyMessages],
    ),
  );
  const seconds_ = seconds(started);
  log(`seeded ${options.historyMessages.toLocaleString('en-US')} messages of one dialog (INSERT … SELECT generate_series) in ${seconds_} s`);
  return { seed: { dialogId: dialog.id, messages: options.historyMessages, firstAt }, seconds: seconds_ };
}

/**
 * The live scenario's dialogs: options.liveDialogs dialogs, each with its
 * own liveSockets / liveDialogs users (external ids 3 on: one socket each),
 * and enough messages for every round's deletes (inserted in one statement).
 */
async function seedLive(db: Sql, applicationId: number, options: BenchOptions): Promise<{ seed: LiveSeed; seconds: number }> {
  const started = performance.now();
  const per = options.liveSockets / options.liveDialogs;
  const { rows } = await db.query(
    'SELECT id, external_user_id AS ext FROM users WHERE application_id = $1 AND external_user_id BETWEEN 3 AND $2 ORDER BY external_user_id',
    [applicationId, 2 + options.liveSockets],
  );
  const userIds = (rows as { id: number }[]).map((r) => r.id);
  if (userIds.length !== options.liveSockets) throw new Error(`live: found ${userIds.length} of ${options.liveSockets} users`);
  // One statement each for the dialogs and their occupants: provisioning's
  // createDialog (a Prisma transaction per dialog) made 1,000 at ~2 a second
  // on a busy machine. Ids in the service's 24-hex form, a prefix of their own.
  const dialogs: LiveSeed['dialogs'] = Array.from({ length: options.liveDialogs }, (_, d) => ({
    id: `f2${(d + 1).toString(16).padStart(22, '0')}`,
    userIds: userIds.slice(d * per, (d + 1) * per),
    messageIds: [],
  }));
  await db.query(
    `INSERT INTO dialogs (id, application_id, type, owner_id)
     SELECT id, $1, 2, owner FROM unnest($2::text[], $3::int[]) AS d(id, owner)`,
    [applicationId, dialogs.map((d) => d.id), dialogs.map((d) => d.userIds[0])],
  );
  await db.query('INSERT INTO dialog_occupants (dialog_id, user_id) SELECT * FROM unnest($1::text[], $2::int[])', [
    dialogs.flatMap((d) => d.userIds.map(() => d.id)),
    dialogs.flatMap((d) => d.userIds),
  ]);
  // Every round deletes liveRate × liveSeconds messages, round-robin over the dialogs.
  const perDialog = Math.ceil((options.liveRate * options.liveSeconds * options.rounds) / options.liveDialogs) + 1;
  await withoutAddedEvents(db, () =>
    db.query(
      `INSERT INTO messages (id, dialog_id, sender_id, body)
       SELECT 'f1' || lpad(to_hex((d.n - 1) * $3::int + g), 22, '0'), d.id, d.owner, 'live message ' || g
         FROM unnest($1::text[], $2::int[]) WITH ORDINALITY AS d(id, owner, n), generate_series(1, $3::int) g`,
      [dialogs.map((d) => d.id), dialogs.map((d) => d.userIds[0]), perDialog],
    ),
  );
  const byDialog = new Map(dialogs.map((d) => [d.id, d]));
  const messages = await db.query('SELECT dialog_id, array_agg(id ORDER BY id) AS ids FROM messages WHERE dialog_id = ANY($1::text[]) GROUP BY dialog_id', [
    dialogs.map((d) => d.id),
  ]);
  for (const row of messages.rows as { dialog_id: string; ids: string[] }[]) byDialog.get(row.dialog_id)!.messageIds = row.ids;
  const seconds_ = seconds(started);
  log(`seeded ${options.liveDialogs} live dialogs of ${per} users with ${perDialog} messages each in ${seconds_} s`);
  return { seed: { dialogs }, seconds: seconds_ };
}
