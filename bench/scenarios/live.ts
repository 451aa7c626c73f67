// Live events (issue 33) on the measured service itself: options.liveSockets
// WebSockets (graphql-ws, the graphql-transport-ws protocol), one user each
// (an API key with On-Behalf-Of in connection_init), each with ONE
// messagesDeleted subscription to its dialog: options.liveDialogs dialogs of
// liveSockets / liveDialogs subscribers. Then:
//  1. memory: the service's resident set before the sockets open and once
//     they are open, subscribed and idle, per socket;
//  2. (after 3) delivery latency: options.liveRate deletes for everyone a second for
//     options.liveSeconds, round-robin over the dialogs, each a raw UPDATE
//     as another program would write it (the event comes from the table's
//     trigger, as for any writer); latency from the UPDATE's sending (its own
//     round trip and commit included) to the event's arrival at each of its
//     dialog's subscribers; one run per round;
//  3. the lookups (REST, GraphQL and the baseline, alternating rounds) with
//     every socket open and idle (measured before the latency runs), for
//     their ratios beside the lookups measured without sockets earlier in
//     the same run.
// The sockets are clients in the harness's own process: raw `ws` sockets
// speaking the protocol (a graphql-ws Client each would weigh on the
// harness, which also drives the load).
import { readFileSync } from 'node:fs';
import { Pool } from 'pg';
import WebSocket from 'ws';
import { percentileOfSorted } from '../../scripts/lib/percentile';
import { toGlobalId } from '../../src/services/global-id';
import type { BenchContext } from '../context';
import { type Figures, type Spread, medianFigures, median, ratio, roundOf, spreadOf } from '../figures';
import { measure, roundTag, timedLoad } from '../measure';
import { memoryOf } from '../processes';
import { log } from '../progress';
import { request, sleep } from '../requests';
import { graphqlSpec, restLookupSpec } from './lookups';
import { type Scenario, scenarioOf } from './scenario';

export interface LatencyRun {
  events: number;
  /** Deliveries owed: every event to every subscriber of its dialog. */
  expected: number;
  delivered: number;
  /** Deliveries of an event a socket had already received, or was not owed. */
  unexpected: number;
  /** The rate the writes were sent at, events/s. */
  sentPerSecond: number;
  p50: number;
  p99: number;
  max: number;
  /** The writes' own share: from the UPDATE's sending to its answer (the commit), ms. */
  commitP50: number;
  commitP99: number;
}

export interface Live {
  sockets: number;
  dialogs: number;
  subscribersPerDialog: number;
  /** Seconds to open every socket and receive its connection_ack. */
  openSeconds: number;
  /** Subscriptions answered with an error message (the socket open, no events owed to it). */
  subscribeErrors: number;
  /** Sockets the service refused (after 5 tries) or closed before the runs ended; handshakes retried after a 1013. */
  refused: number;
  retried: number;
  closedEarly: number;
  /** The service's graphql_ws_connections gauge once every socket was open. */
  serviceSockets: number | null;
  memory: { beforeMb: number | null; openMb: number | null; perSocketKb: number | null };
  rate: number;
  seconds: number;
  runs: LatencyRun[];
  /** Medians of the runs. */
  latency: { p50: number; p99: number; max: number };
  /** The lookups with every socket open: req/s over the same round's baseline. */
  lookups: { rest: Spread; graphql: Spread; rounds: number } | null;
}

interface Socket {
  ws: WebSocket;
  dialog: number;
  /** Events received, by message id (a second delivery is unexpected). */
  seen: Set<string>;
}

const SUBSCRIPTION = 'subscription Deleted($dialog: ID!) { messagesDeleted(dialogId: $dialog) { deletedMessageDatabaseIds } }';

/** Opens one socket, initialises it and subscribes; resolves at connection_ack. */
function open(
  url: string,
  apiKey: string,
  userId: number,
  dialogId: string,
  onNext: (ids: string[] | null) => void,
  onClose: (code: number) => void,
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, 'graphql-transport-ws', { perMessageDeflate: false });
    let acked = false;
    ws.on('open', () => ws.send(JSON.stringify({ type: 'connection_init', payload: { Authorization: `ApiKey ${apiKey}`, 'On-Behalf-Of': String(userId) } })));
    ws.on('message', (data: Buffer) => {
      const message = JSON.parse(data.toString('utf8')) as {
        type: string;
        payload?: { data?: { messagesDeleted?: { deletedMessageDatabaseIds?: string[] } } };
      };
      if (message.type === 'connection_ack') {
        acked = true;
        ws.send(JSON.stringify({ id: '1', type: 'subscribe', payload: { query: SUBSCRIPTION, variables: { dialog: dialogId } } }));
        resolve(ws);
      } else if (message.type === 'next') {
        const ids = message.payload?.data?.messagesDeleted?.deletedMessageDatabaseIds;
        if (ids) onNext(ids);
      } else if (message.type === 'error') {
        onNext(null);
      } else if (message.type === 'ping') {
        ws.send('{"type":"pong"}');
      }
    });
    ws.on('error', (error) => {
      if (!acked) reject(error);
    });
    ws.on('close', (code) => {
      if (!acked) reject(new Error(`closed ${code} before connection_ack`));
      else onClose(code);
    });
  });
}

/** The service's resident set, the median of three samples 300 ms apart. */
async function rssOf(pid: number): Promise<number | null> {
  const samples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const m = memoryOf(pid);
    if (m) samples.push(m.rss);
    await sleep(300);
  }
  return samples.length ? median(samples) : null;
}

async function gauge(ctx: BenchContext, name: string): Promise<number | null> {
  const metrics = ctx.servers.service.metricsUrl;
  if (!metrics) return null;
  const text = await (await request(metrics)).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

/** This process's soft limit on open files (the service inherits it), from /proc; null when unreadable. */
function openFilesLimit(): number | null {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return line ? (line[1] === 'unlimited' ? Infinity : Number(line[1])) : null;
  } catch {
    return null;
  }
}

export async function runLive(ctx: BenchContext): Promise<{ live: Live; scenarios: Scenario[] }> {
  const { options, seeded, servers } = ctx;
  // A socket is a file descriptor on both ends: the harness and the service each need one per socket and some room.
  const limit = openFilesLimit();
  if (limit !== null && limit < options.liveSockets + 1_000) {
    throw new Error(
      `live: ulimit -n is ${limit}; ${options.liveSockets} sockets need at least ${options.liveSockets + 1_000} (raise it, or lower --live-sockets)`,
    );
  }
  const seed = seeded.live;
  if (!seed) throw new Error('live: the dialogs were not seeded');
  const per = options.liveSockets / options.liveDialogs;
  log(
    `live: ${options.liveSockets.toLocaleString('en-US')} sockets (one messagesDeleted subscription each) over ${options.liveDialogs} dialogs of ${per} subscribers; ` +
      `${options.liveRate} deletes/s for ${options.liveSeconds} s per round`,
  );
  const service = servers.service;
  const url = `${service.url.replace(/^http/, 'ws')}/graphql`;
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  let unexpected = 0;
  let closedEarly = 0;
  let refused = 0;
  let subscribeErrors = 0;
  let closing = false;

  // Let what earlier scenarios left settle before reading the resident set.
  await sleep(2_000);
  const beforeRss = await rssOf(service.pid);
  const sockets: Socket[] = [];
  const started = performance.now();
  const jobs = seed.dialogs.flatMap((dialog, d) => dialog.userIds.map((userId) => ({ d, userId, dialogId: toGlobalId('Dialog', dialog.id) })));
  // At most 50 handshakes at once, and a socket the service closes with 1013
  // (try again later: its pool busy checking credentials) retried after a
  // pause, up to 5 times, as a client would.
  let retried = 0;
  const connect = async (userId: number, dialogId: string, onNext: (ids: string[] | null) => void, onClose: (code: number) => void) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await open(url, seeded.apiKey, userId, dialogId, onNext, onClose);
      } catch (error) {
        if (attempt >= 5 || !/closed 1013/.test((error as Error).message)) throw error;
        retried++;
        await sleep(500 * attempt);
      }
    }
  };
  for (let i = 0; i < jobs.length; i += 50) {
    await Promise.all(
      jobs.slice(i, i + 50).map(async ({ d, userId, dialogId }) => {
        const socket: Socket = { ws: undefined as unknown as WebSocket, dialog: d, seen: new Set() };
        try {
          socket.ws = await connect(
            userId,
            dialogId,
            (ids) => {
              if (ids === null) {
                subscribeErrors++;
                return;
              }
              const now = performance.now();
              for (const id of ids) {
                const at = sentAt.get(id);
                if (at === undefined || socket.seen.has(id)) unexpected++;
                else {
                  socket.seen.add(id);
                  latencies.push(now - at);
                }
              }
            },
            () => {
              if (!closing) closedEarly++;
            },
          );
          sockets.push(socket);
        } catch (error) {
          refused++;
          if (refused <= 3) ctx.warn(`live: a socket was refused: ${(error as Error).message}`);
        }
      }),
    );
  }
  const openSeconds = Math.round((performance.now() - started) / 10) / 100;
  log(
    `  ${sockets.length.toLocaleString('en-US')} sockets open and subscribed in ${openSeconds} s (${refused} refused, ${retried} handshakes retried after 1013)`,
  );
  // The subscribe messages were sent at each ack: give the service time to set every subscription up, then let it idle.
  await sleep(Math.max(3_000, options.liveSockets / 2));
  const serviceSockets = await gauge(ctx, 'graphql_ws_connections');
  const openRss = await rssOf(service.pid);
  const perSocketKb =
    beforeRss !== null && openRss !== null && sockets.length > 0 ? Math.round(((openRss - beforeRss) / sockets.length / 1024) * 10) / 10 : null;
  log(`  service RSS ${mb(beforeRss)} MB before, ${mb(openRss)} MB with the sockets open: ${perSocketKb} KB per socket`);

  // The writers: 32 connections, as many users deleting at once (8 could not
  // keep 1,000 commits a second going on this machine: the writes queued).
  // The lookups with every socket open and idle, alternating with the
  // baseline: before the latency runs, whose backlog (on a machine that cannot
  // keep up) would otherwise still be read and delivered during them.
  const lookups = await lookupsWithSockets(ctx);
  const scenarios = lookups?.scenarios ?? [];

  const pool = new Pool({ connectionString: seeded.databaseUrl, max: 32 });
  pool.on('error', () => {});
  const runs: LatencyRun[] = [];
  const perRound = Math.ceil((options.liveRate * options.liveSeconds) / options.liveDialogs);
  const subscribers = new Map<number, number>();
  for (const s of sockets) subscribers.set(s.dialog, (subscribers.get(s.dialog) ?? 0) + 1);
  try {
    for (let r = 0; r < options.rounds; r++) {
      latencies.length = 0;
      unexpected = 0;
      const commits: number[] = [];
      const events = Math.round(options.liveRate * options.liveSeconds);
      let expected = 0;
      const t0 = performance.now();
      for (let i = 0; i < events; i++) {
        const due = t0 + (i * 1000) / options.liveRate;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const d = i % options.liveDialogs;
        const id = seed.dialogs[d]!.messageIds[r * perRound + Math.floor(i / options.liveDialogs)]!;
        expected += subscribers.get(d) ?? 0;
        const sent = performance.now();
        sentAt.set(id, sent);
        void pool.query('UPDATE messages SET deleted_at = now(), body = NULL WHERE id = $1', [id]).then(
          () => commits.push(performance.now() - sent),
          (error: unknown) => ctx.warn(`live: a delete failed: ${(error as Error).message}`),
        );
      }
      const sentPerSecond = Math.round(events / ((performance.now() - t0) / 1000));
      const deadline = performance.now() + 30_000;
      while (latencies.length < expected && performance.now() < deadline) await sleep(100);
      const sorted = Float64Array.from(latencies).sort();
      const committed = Float64Array.from(commits).sort();
      const run: LatencyRun = {
        events,
        expected,
        delivered: latencies.length,
        unexpected,
        sentPerSecond,
        p50: round1(percentileOfSorted(sorted, 50)),
        p99: round1(percentileOfSorted(sorted, 99)),
        max: round1(sorted.at(-1) ?? NaN),
        commitP50: round1(percentileOfSorted(committed, 50)),
        commitP99: round1(percentileOfSorted(committed, 99)),
      };
      runs.push(run);
      log(
        `  latency${roundTag(r, options.rounds)}: ${events} events at ${sentPerSecond}/s, ${run.delivered}/${expected} deliveries, ` +
          `p50 ${run.p50} ms, p99 ${run.p99} ms, max ${run.max} ms (the UPDATEs' own: p50 ${run.commitP50}, p99 ${run.commitP99} ms)${unexpected ? `, ${unexpected} unexpected` : ''}`,
      );
      if (run.delivered < expected) ctx.warn(`live${roundTag(r, options.rounds)}: ${expected - run.delivered} of ${expected} deliveries missing after 30 s`);
      if (unexpected > 0) ctx.warn(`live${roundTag(r, options.rounds)}: ${unexpected} deliveries not owed (duplicates or unknown ids)`);
    }
  } finally {
    await pool.end();
  }

  closing = true;
  for (const s of sockets) s.ws.terminate();
  if (subscribeErrors > 0) ctx.warn(`live: ${subscribeErrors} subscriptions answered with an error (their deliveries count as missing)`);
  if (closedEarly > 0) ctx.warn(`live: ${closedEarly} sockets closed by the service before the end`);
  const live: Live = {
    sockets: sockets.length,
    dialogs: options.liveDialogs,
    subscribersPerDialog: per,
    openSeconds,
    refused,
    retried,
    subscribeErrors,
    closedEarly,
    serviceSockets,
    memory: { beforeMb: mb(beforeRss), openMb: mb(openRss), perSocketKb },
    rate: options.liveRate,
    seconds: options.liveSeconds,
    runs,
    latency: { p50: median(runs.map((x) => x.p50)), p99: median(runs.map((x) => x.p99)), max: median(runs.map((x) => x.max)) },
    lookups: lookups?.ratios ?? null,
  };
  return { live, scenarios };
}

/** REST and GraphQL lookups beside the baseline, every round back to back, the order reversed every other round. */
async function lookupsWithSockets(ctx: BenchContext): Promise<{ scenarios: Scenario[]; ratios: NonNullable<Live['lookups']> } | null> {
  const { options } = ctx;
  const timed = timedLoad(options);
  const bad = { count: 0 };
  const graphql = graphqlSpec(ctx, bad);
  const rest = restLookupSpec(ctx);
  type K = 'rest' | 'graphql' | 'baseline';
  const measured: Record<K, Figures[]> = { rest: [], graphql: [], baseline: [] };
  const runners: [K, (tag: string) => Promise<Figures>][] = [
    ['rest', (tag) => measure(ctx, 'service', `REST lookup, sockets open${tag}`, rest, timed)],
    ['baseline', (tag) => measure(ctx, 'baseline', `REST lookup, sockets open${tag}`, rest, timed)],
    [
      'graphql',
      async (tag) => {
        const f = await measure(ctx, 'service', `GraphQL lookup, sockets open${tag}`, graphql, timed);
        f.badBodies = bad.count;
        return f;
      },
    ],
  ];
  for (let r = 0; r < options.rounds; r++) {
    for (const [key, run] of r % 2 === 0 ? runners : [...runners].reverse()) measured[key].push(await run(roundTag(r, options.rounds)));
  }
  const base = medianFigures(measured.baseline);
  const scenario = (name: string, description: string, key: K) =>
    scenarioOf(
      name,
      description,
      'duration',
      options.connections,
      medianFigures(measured[key]),
      base,
      key === 'graphql' ? 'rest_user_lookup_sockets_open' : undefined,
      measured[key].map((f, i) => roundOf(f, measured.baseline[i]!)),
    );
  const n = options.liveSockets.toLocaleString('en-US');
  const toBase = (key: K) => spreadOf(measured[key].map((f, i) => ratio(f.reqPerSec, measured.baseline[i]!.reqPerSec)));
  return {
    scenarios: [
      scenario('rest_user_lookup_sockets_open', `GET /users/external/{id}.json with ${n} live sockets open on the service`, 'rest'),
      scenario('graphql_user_lookup_sockets_open', `POST /graphql userByExternalId with ${n} live sockets open on the service`, 'graphql'),
    ],
    ratios: { rest: toBase('rest'), graphql: toBase('graphql'), rounds: options.rounds },
  };
}

const round1 = (n: number) => Math.round(n * 10) / 10;
const mb = (bytes: number | null) => (bytes === null ? null : Math.round((bytes / 1048576) * 10) / 10);
