// With REDIS_URL, `npm start` waits for Redis before it listens (requests
// served before would pass uncounted), and gives up after
// REDIS_CONNECT_TIMEOUT_MS with a message. A redis-server of the test's own on
// a free port (skipped with a message where there is no redis-server binary,
// a failure under CI=true).
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVICE_MAIN } from '../../scripts/lib/compiled';
import { freePort } from '../../scripts/lib/ports';
import { needOnPath, requires } from '../support/requires';

const root = path.resolve(__dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'redis-start-'));
const withRedisServer = requires(needOnPath('redis-server', 'apt-get install redis-server'));
const children: ChildProcess[] = [];

jest.setTimeout(120_000);
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function service(redisPort: number, env: Record<string, string> = {}) {
  const lines: string[] = [];
  const child = spawn(process.execPath, [SERVICE_MAIN], {
    cwd: root,
    env: {
      ...process.env,
      NODE_OPTIONS: '',
      DATABASE_URL: process.env.TEST_RUN_DATABASE_URL ?? '',
      MIGRATE_ON_START: 'false',
      PGLITE_DIR: path.join(work, `db-${Date.now()}`),
      HOST: '127.0.0.1',
      PORT: '0',
      DEMO_SEED: 'false',
      LOG_LEVEL: 'info',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      REDIS_KEY_PREFIX: `chatsvc-test-start:${process.pid}:`,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  // Whole lines, however the pipe cuts them into chunks.
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line) lines.push(line);
  });
  child.stderr.on('data', (chunk) => lines.push(String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, lines, exited, has: (text: string) => lines.some((line) => line.includes(text)) };
}

/** Until `done()` or `limitMs`, checking every 100 ms. */
async function until(done: () => boolean, limitMs: number): Promise<void> {
  for (let waited = 0; waited < limitMs && !done(); waited += 100) await sleep(100);
}

/**
 * A listener on `port` that closes every connection it takes without a word,
 * as a Redis that is not answering yet looks to a client: how many
 * connections the service has tried.
 */
async function silentRedis(port: number): Promise<{ attempts(): number; close(): Promise<void> }> {
  let attempts = 0;
  const listener = createServer((socket) => {
    attempts++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => listener.listen(port, '127.0.0.1', resolve));
  return { attempts: () => attempts, close: () => new Promise((resolve) => listener.close(() => resolve())) };
}

withRedisServer.test('the service does not listen until Redis answers, then does', async () => {
  const port = await freePort();
  const silent = await silentRedis(port);
  // A bound far past this test's waits: it is the waiting that is tested, not giving up.
  const started = service(port, { REDIS_CONNECT_TIMEOUT_MS: '300000' });
  await until(() => started.has('waiting for redis'), 60_000);
  expect(started.has('waiting for redis')).toBe(true);
  // Not a fixed sleep: the service has tried Redis several times (both of its
  // connections, retrying), found nothing answering, and still does not listen.
  await until(() => silent.attempts() >= 6, 60_000);
  expect(silent.attempts()).toBeGreaterThanOrEqual(6);
  expect(started.has('"msg":"listening"')).toBe(false);
  await silent.close();
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.push(redis);
  await until(() => started.has('"msg":"listening"'), 60_000);
  expect(started.has('"msg":"listening"')).toBe(true);
  started.child.kill('SIGTERM');
  expect(await started.exited).toBe(0);
  redis.kill('SIGTERM');
});

withRedisServer.test('past REDIS_CONNECT_TIMEOUT_MS it stops with a message naming the settings', async () => {
  const started = service(await freePort(), { REDIS_CONNECT_TIMEOUT_MS: '1000' });
  expect(await started.exited).toBe(1);
  expect(started.lines.join('\n')).toMatch(/Redis did not answer within 1000 ms \(REDIS_URL, REDIS_CONNECT_TIMEOUT_MS\)/);
  expect(started.has('"msg":"listening"')).toBe(false);
});
