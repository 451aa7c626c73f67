// A rolling restart under keep-alive load fails no request (issue 35, Drain).
// Two instances of the compiled service (`node dist/main.js`, as operators run
// it) serve a steady load through a client that balances as Kubernetes'
// endpoints or HAProxy's checks do: it polls each instance's /readyz every
// 100 ms and sends to the ready ones only, over kept-alive connections. Each
// instance in turn is replaced: a new one started, then the old one sent
// SIGTERM. With SHUTDOWN_DELAY_MS the old one fails /readyz at once, serves
// until the balancer has moved, then stops accepting, ends its kept-alive
// connections after their next answer (`Connection: close`) and exits 0.
// Every request of the load gets its normal answer: 0 failed.
//
// Beside it, a client that never looks at /readyz and keeps sending on one
// kept-alive connection to the stopping instance: its requests are answered
// through the delay, the connection ends with a `Connection: close` answer,
// never with a reset, and a new connection is then refused (which a client
// may retry anywhere: nothing was sent).
//
// The instances run on the run's PostgreSQL database when there is one, else
// on a test-managed instance (the embedded database belongs to one process).
import { type ChildProcess, spawn } from 'node:child_process';
import http from 'node:http';
import { openDatabase } from '../../src/db';
import { SERVICE_MAIN, SERVICE_NODE_FLAGS } from '../../scripts/lib/compiled';
import { freePort } from '../../scripts/lib/ports';
import { recordFigures } from '../support/figures';
import { createPostgresInstance, type PostgresInstance } from '../support/postgres-instance';
import { seedTenant, servicesOver, type Tenant } from '../support/seed';

/** How long a stopping instance serves with /readyz failing: well above the balancer's 100 ms poll. */
const DELAY_MS = 1_500;
const POLL_MS = 100;
const CONCURRENCY = 12;

jest.setTimeout(180_000);

let instance: PostgresInstance | undefined;
let url: string;
let poolMax = 10;
let t: Tenant;

beforeAll(async () => {
  const runUrl = process.env.TEST_RUN_DATABASE_URL;
  if (runUrl) {
    url = runUrl;
  } else {
    instance = createPostgresInstance();
    await instance.start();
    url = instance.url;
    poolMax = instance.poolMax;
  }
  const db = await openDatabase({ url, migrate: !runUrl, poolMax: Math.min(poolMax, 2) });
  try {
    const { services, provisioning } = servicesOver(db);
    t = await seedTenant(provisioning);
    await services.close();
  } finally {
    await db.close();
  }
}, 90_000);

const running = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  agent.destroy();
  await instance?.destroy();
});

interface Instance {
  port: number;
  child: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

async function startInstance(): Promise<Instance> {
  const port = await freePort();
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, SERVICE_MAIN], {
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      NODE_ENV: 'production',
      DATABASE_URL: url,
      DB_POOL_MAX: String(Math.max(1, Math.floor(poolMax / 3))),
      MIGRATE_ON_START: 'false',
      SECRETS_KEY: 'a'.repeat(64),
      HOST: '127.0.0.1',
      PORT: String(port),
      RATE_LIMIT_ENABLED: 'false',
      SWEEP_INTERVAL_MS: '0',
      LOG_LEVEL: 'warn',
      SHUTDOWN_DELAY_MS: String(DELAY_MS),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const output: string[] = [];
  child.stdout.on('data', (chunk) => output.push(String(chunk)));
  child.stderr.on('data', (chunk) => output.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  for (let waited = 0; waited < 60_000; waited += 100) {
    if (child.exitCode !== null) throw new Error(`the instance exited at start: ${output.join('')}`);
    if ((await readiness(port)) === 200) return { port, child, output, exited };
    await sleep(100);
  }
  throw new Error(`the instance did not become ready: ${output.join('')}`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** /readyz's status on a connection of its own (0: no answer). */
async function readiness(port: number): Promise<number> {
  try {
    return (await fetch(`http://127.0.0.1:${port}/readyz`, { signal: AbortSignal.timeout(1_000) })).status;
  } catch {
    return 0;
  }
}

/** Kept-alive connections, as a proxy keeps them to its upstreams. */
const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });

interface Answer {
  status: number;
  body: string;
  /** The answer's Connection header. */
  connection: string | undefined;
  /** The client's error code when no complete answer came (ECONNREFUSED, ECONNRESET, …). */
  error?: string;
}

function get(port: number, path: string, headers: Record<string, string>, via: http.Agent = agent): Promise<Answer> {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path, headers, agent: via }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, connection: response.headers.connection }));
      response.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: '', connection: undefined, error: error.code ?? error.message }));
    });
    request.on('error', (error: NodeJS.ErrnoException) => resolve({ status: 0, body: '', connection: undefined, error: error.code ?? error.message }));
  });
}

/** The balancer: the ready instances, as its last poll saw them. */
class Balancer {
  private readonly ready = new Map<number, boolean>();
  private next = 0;
  private polling = true;
  private readonly loop: Promise<void>;

  constructor(private readonly ports: () => number[]) {
    this.loop = (async () => {
      while (this.polling) {
        for (const port of this.ports()) this.ready.set(port, (await readiness(port)) === 200);
        await sleep(POLL_MS);
      }
    })();
  }

  pick(): number | undefined {
    const ready = this.ports().filter((port) => this.ready.get(port));
    return ready.length === 0 ? undefined : ready[this.next++ % ready.length];
  }

  async stop(): Promise<void> {
    this.polling = false;
    await this.loop;
  }
}

interface Outcome extends Answer {
  at: number;
  normal: boolean;
}

test('replacing each of two instances in turn under keep-alive load fails no request', async () => {
  let instances = [await startInstance(), await startInstance()];
  const balancer = new Balancer(() => instances.map((i) => i.port));
  await sleep(3 * POLL_MS);
  const outcomes: Outcome[] = [];
  let loading = true;
  const loops = Array.from({ length: CONCURRENCY }, async () => {
    while (loading) {
      const port = balancer.pick();
      if (port === undefined) {
        await sleep(10);
        continue;
      }
      const answer = await get(port, '/users/external/101.json', t.as.apiKey);
      const normal = answer.status === 200 && (JSON.parse(answer.body || 'null') as { user?: { id?: number } } | null)?.user?.id === t.owner.id;
      outcomes.push({ ...answer, at: Date.now(), normal });
      await sleep(2);
    }
  });

  const stops: { readyzAfterSignal: number; exitCode: number | null; exitMs: number }[] = [];
  try {
    await sleep(1_000);
    for (let i = 0; i < 2; i++) {
      const replacement = await startInstance();
      const old = instances[i]!;
      instances = instances.map((x) => (x === old ? replacement : x)).concat(old);
      await sleep(3 * POLL_MS);
      const signalAt = Date.now();
      old.child.kill('SIGTERM');
      // Readiness fails at once, while the instance still serves.
      await sleep(50);
      const readyzAfterSignal = await readiness(old.port);
      const exitCode = await old.exited;
      stops.push({ readyzAfterSignal, exitCode, exitMs: Date.now() - signalAt });
      instances = instances.filter((x) => x !== old);
      await sleep(500);
    }
  } finally {
    loading = false;
    await Promise.all(loops);
    await balancer.stop();
  }

  const failed = outcomes.filter((o) => !o.normal);
  recordFigures('faults-rolling-restart', {
    requests: outcomes.length,
    failed: failed.length,
    connectionCloseAnswers: outcomes.filter((o) => o.connection === 'close').length,
    stops,
    delayMs: DELAY_MS,
  });
  expect(outcomes.length).toBeGreaterThan(200);
  expect(failed.map((o) => `${o.status} ${o.error ?? ''} ${o.body.slice(0, 120)}`)).toEqual([]);
  for (const stop of stops) {
    expect(stop.readyzAfterSignal).toBe(503);
    expect(stop.exitCode).toBe(0);
    // The delay, then a drain of at most the idle grace (1 s) and the requests in flight.
    expect(stop.exitMs).toBeGreaterThanOrEqual(DELAY_MS);
    expect(stop.exitMs).toBeLessThan(DELAY_MS + 5_000);
  }
});

test('a client that ignores readiness is served through the delay, then its kept-alive connection ends with Connection: close, never a reset', async () => {
  const stopping = await startInstance();
  // One connection, kept alive, as a client that holds on to its upstream.
  const own = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    expect((await get(stopping.port, '/users/external/101.json', t.as.apiKey, own)).status).toBe(200);
    const signalAt = Date.now();
    stopping.child.kill('SIGTERM');
    const answers: (Answer & { ms: number })[] = [];
    while (Date.now() - signalAt < DELAY_MS + 3_000) {
      const answer = await get(stopping.port, '/users/external/101.json', t.as.apiKey, own);
      answers.push({ ...answer, ms: Date.now() - signalAt });
      if (answer.status === 0) break;
      await sleep(20);
    }
    expect(await stopping.exited).toBe(0);
    const served = answers.filter((a) => a.status === 200);
    const closing = served.filter((a) => a.connection === 'close');
    // Served throughout the delay, kept alive until it was over.
    expect(served.filter((a) => a.ms < DELAY_MS - 100).every((a) => a.connection !== 'close')).toBe(true);
    expect(Math.max(...served.map((a) => a.ms))).toBeGreaterThanOrEqual(DELAY_MS - 100);
    // Then one answer said Connection: close, and the next request found no listener: refused, not reset.
    expect(closing).toHaveLength(1);
    expect(answers.at(-1)).toMatchObject({ status: 0, error: 'ECONNREFUSED' });
    expect(answers.filter((a) => a.status !== 200 && a.error !== 'ECONNREFUSED')).toEqual([]);
  } finally {
    own.destroy();
  }
});
