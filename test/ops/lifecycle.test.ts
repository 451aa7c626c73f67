// The process as operators run it: configuration checked at start, and a
// graceful stop on SIGTERM/SIGINT that lets in-flight requests finish.
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { type AddressInfo, connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVICE_MAIN, SERVICE_NODE_FLAGS } from '../../scripts/lib/compiled';
import { loadConfig } from '../../src/config';
import { ConfigError } from '../../src/errors';

const root = path.resolve(__dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'lifecycle-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
// A test that fails half-way leaves no service running (jest would wait for its pipes).
const running = new Set<ChildProcess>();
afterEach(() => {
  for (const child of running) if (child.exitCode === null) child.kill('SIGKILL');
  running.clear();
});

jest.setTimeout(120_000);

interface Started {
  child: ChildProcess;
  dataDir: string;
  stdout: string[];
  stderr: string[];
  exited: Promise<number | null>;
}

/** `npm start`'s command (`node --max-semi-space-size=16 dist/main.js`, built by global-setup): one process, so signals reach the service itself. */
function startProcess(env: Record<string, string>, nodeFlags: string[] = []): Started {
  const serverUrl = process.env.TEST_RUN_DATABASE_URL;
  const dataDir = path.join(work, `db-${Date.now()}`);
  const child = spawn(process.execPath, [...SERVICE_NODE_FLAGS, ...nodeFlags, SERVICE_MAIN], {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: serverUrl ?? '',
      PGLITE_DIR: dataDir,
      HOST: '127.0.0.1',
      PORT: '0',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'info',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  const started: Started = {
    child,
    dataDir,
    stdout: [],
    stderr: [],
    exited: new Promise((resolve) => child.on('exit', (code) => resolve(code))),
  };
  // Whole lines, however the pipe cuts them into chunks (pino's lines and V8's --trace-gc lines interleave).
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line) started.stdout.push(line);
  });
  child.stderr.on('data', (chunk) => started.stderr.push(String(chunk)));
  return started;
}

async function listeningAddress(started: Started): Promise<URL> {
  for (let waited = 0; waited < 60_000; waited += 100) {
    for (const line of started.stdout) {
      if (line.includes('"msg":"listening"')) return new URL(JSON.parse(line).address);
    }
    if (started.child.exitCode !== null) throw new Error(`exited early: ${started.stderr.join('')}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the service did not start');
}

describe('configuration', () => {
  test('defaults apply when nothing is set, and production turns the explorer and introspection off', () => {
    expect(loadConfig({})).toMatchObject({
      PORT: 4000,
      HOST: '127.0.0.1',
      PGLITE_DIR: '.data/pglite',
      GRAPHQL_EXPLORER: true,
      GRAPHQL_INTROSPECTION: true,
      METRICS_ENABLED: true,
    });
    expect(loadConfig({ NODE_ENV: 'production' })).toMatchObject({ GRAPHQL_EXPLORER: false, GRAPHQL_INTROSPECTION: false });
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_EXPLORER: 'true' })).toMatchObject({ GRAPHQL_EXPLORER: true });
  });

  test.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['DATABASE_URL', 'mysql://localhost/db'],
    ['DB_POOL_MAX', '0'],
    ['MIGRATE_ON_START', 'maybe'],
    ['LOG_LEVEL', 'loud'],
    ['NODE_ENV', 'staging'],
    ['HEAP_GROWING_PERCENT', '-1'],
    ['HEAP_GROWING_PERCENT', '1.5'],
  ])('%s=%s is refused with a message naming the variable', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:\\n  ${name}: `));
  });

  test('a bad value stops the service before it listens, with the variable named on stderr', async () => {
    const started = startProcess({ PORT: 'not-a-port' });
    expect(await started.exited).toBe(1);
    expect(started.stderr.join('')).toMatch(/PORT: /);
    expect(started.stdout.filter((line) => line.includes('listening'))).toEqual([]);
  });
});

describe('graceful shutdown', () => {
  test.each(['SIGTERM', 'SIGINT'] as const)(
    'on %s the service stops accepting, finishes the request in flight, closes the database and exits 0',
    async (signal) => {
      const started = startProcess({});
      const address = await listeningAddress(started);
      const port = Number(address.port);

      // A request in flight: headers and half of the body sent, the rest held back.
      const body = JSON.stringify({ query: '{ __typename }' });
      const socket = connect(port, '127.0.0.1');
      let response = '';
      socket.on('data', (chunk) => (response += String(chunk)));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      await new Promise((resolve) => socket.on('connect', resolve));
      socket.write(`POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`);
      await new Promise((resolve) => setTimeout(resolve, 300));

      const signalledAt = Date.now();
      started.child.kill(signal);
      await new Promise((resolve) => setTimeout(resolve, 500));

      // No new connections once the stop has begun.
      const refused = await new Promise<string>((resolve) => {
        const probe = connect(port, '127.0.0.1');
        probe.on('connect', () => {
          probe.destroy();
          resolve('accepted');
        });
        probe.on('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
      });
      expect(refused).toBe('ECONNREFUSED');

      socket.end(body.slice(5));
      await closed;
      expect(response).toMatch(/^HTTP\/1\.1 200 /);
      expect(response).toContain('{"data":{"__typename":"Query"}}');

      expect(await started.exited).toBe(0);
      expect(Date.now() - signalledAt).toBeLessThan(10_000);
      expect(started.stdout.some((line) => line.includes('"msg":"shutting down"'))).toBe(true);
      // The embedded database releases its folder only when closed.
      if (!process.env.TEST_RUN_DATABASE_URL) expect(existsSync(`${started.dataDir}.lock`)).toBe(false);
    },
  );
});

describe('log lines', () => {
  // Lines are written in batches (src/http/observability.ts): an idle service
  // must still show a request within LOG_FLUSH_MS, and a stop must not lose
  // the lines still in the buffer.
  test("an idle service writes a request's line with no other request or stop to push it out; a stop writes what is still buffered", async () => {
    const started = startProcess({});
    const address = await listeningAddress(started);
    const lineOf = (requestId: string) => started.stdout.find((line) => line.includes(`"reqId":"${requestId}"`));
    const ask = (requestId: string) =>
      fetch(new URL('/graphql', address), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-request-id': requestId },
        body: JSON.stringify({ query: '{ __typename }' }),
      }).then((response) => expect(response.status).toBe(200));

    await ask('idle-1');
    const answeredAt = Date.now();
    // LOG_FLUSH_MS is 1 s: the bound only ends the wait for a line that never comes (how soon it came is no claim of a loaded machine's).
    while (!lineOf('idle-1') && Date.now() - answeredAt < 20_000) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(JSON.parse(lineOf('idle-1') ?? '{}')).toMatchObject({ msg: 'request', route: '/graphql', status: 200 });

    await ask('last-1');
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    expect(JSON.parse(lineOf('last-1') ?? '{}')).toMatchObject({ msg: 'request', status: 200 });
    // The stop's own lines come after it, in order.
    const order = ['"reqId":"last-1"', '"msg":"shutting down"'].map((text) => started.stdout.findIndex((line) => line.includes(text)));
    expect(order[0]).toBeGreaterThanOrEqual(0);
    expect(order[1]).toBeGreaterThan(order[0]!);
  });
});

describe('memory at rest', () => {
  // src/startup-gc.ts. V8 prints each collection with --trace-gc, a gc()'s
  // with the reason "testing", which nothing else in the service triggers.
  const isOurs = (line: string) => /Mark-Compact.* testing;/.test(line);

  test("a second after listening the service runs a full collection of its own (start-up's garbage given back); with GC_AFTER_START=false it runs none", async () => {
    const collecting = startProcess({}, ['--trace-gc']);
    const skipping = startProcess({ GC_AFTER_START: 'false' }, ['--trace-gc']);
    await Promise.all([listeningAddress(collecting), listeningAddress(skipping)]);
    const waitedFrom = Date.now();
    while (!collecting.stdout.some(isOurs) && Date.now() - waitedFrom < 15_000) await new Promise((resolve) => setTimeout(resolve, 50));
    // As long again (two seconds at least) for the other: it would have run one by now.
    await new Promise((resolve) => setTimeout(resolve, Math.max(2_000, Date.now() - waitedFrom)));
    const listened = collecting.stdout.findIndex((line) => line.includes('"msg":"listening"'));
    expect(collecting.stdout.findIndex(isOurs)).toBeGreaterThan(listened);
    expect(skipping.stdout.filter(isOurs)).toEqual([]);
    for (const s of [collecting, skipping]) {
      s.child.kill('SIGTERM');
      expect(await s.exited).toBe(0);
    }
  });
});

describe('the bundle', () => {
  // dist/main.js is one bundle (scripts/build.mjs) holding its own copies of
  // graphql and the service's modules: tracing must patch those, not copies it
  // would load from node_modules, which nothing calls.
  test('traces the GraphQL operation and its SQL statements, as the sources do (OTLP to a collector)', async () => {
    const bodies: Buffer[] = [];
    const collector = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        bodies.push(Buffer.concat(chunks));
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    try {
      // The embedded database and its demo data: a token to call with, whatever database the suite uses.
      const started = startProcess({
        DATABASE_URL: '',
        DEMO_SEED: 'true',
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
      });
      const address = await listeningAddress(started);
      let token: string | undefined;
      for (let waited = 0; token === undefined && waited < 60_000; waited += 100) {
        token = started.stdout.map((line) => /SVC-Token: ([\w-]+)/.exec(line)?.[1]).find(Boolean);
        if (token === undefined) await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const response = await fetch(new URL('/graphql', address), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'svc-token': token! },
        body: JSON.stringify({ query: 'query BundleLookup { userByExternalId(externalUserId: 1002) { login } }' }),
      });
      expect(await response.json()).toEqual({ data: { userByExternalId: { login: 'bob' } } });
      // Shutting down flushes the batch.
      started.child.kill('SIGTERM');
      expect(await started.exited).toBe(0);
    } finally {
      await new Promise((resolve) => collector.close(resolve));
    }
    // Protobuf keeps strings as they are.
    const payload = Buffer.concat(bodies).toString('latin1');
    expect(payload).toContain('POST /graphql');
    expect(payload).toContain('query BundleLookup');
    expect(payload).toContain('postgresql');
  });
});
