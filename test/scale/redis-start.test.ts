// With REDIS_URL, `npm start` waits for Redis before it listens (requests
// served before would pass uncounted), and gives up after
// REDIS_CONNECT_TIMEOUT_MS with a message. A redis-server of the test's own on
// a free port (skipped with a message where there is no redis-server binary).
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { SERVICE_MAIN } from '../../scripts/lib/compiled';
import { freePort } from '../../scripts/lib/ports';

const root = path.resolve(__dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'redis-start-'));
const hasRedis = spawnSync('which', ['redis-server']).status === 0;
if (!hasRedis) console.warn('redis-start.test.ts: skipped: no redis-server binary (apt-get install redis-server)');
const maybe = hasRedis ? test : test.skip;
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

maybe('the service does not listen until Redis answers, then does', async () => {
  const port = await freePort();
  const started = service(port);
  for (let waited = 0; waited < 60_000 && !started.has('waiting for redis'); waited += 100) await sleep(100);
  expect(started.has('waiting for redis')).toBe(true);
  await sleep(2_000);
  expect(started.has('"msg":"listening"')).toBe(false);
  const redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  children.push(redis);
  for (let waited = 0; waited < 30_000 && !started.has('"msg":"listening"'); waited += 100) await sleep(100);
  expect(started.has('"msg":"listening"')).toBe(true);
  started.child.kill('SIGTERM');
  expect(await started.exited).toBe(0);
  redis.kill('SIGTERM');
});

maybe('past REDIS_CONNECT_TIMEOUT_MS it stops with a message naming the settings', async () => {
  const started = service(await freePort(), { REDIS_CONNECT_TIMEOUT_MS: '1000' });
  expect(await started.exited).toBe(1);
  expect(started.lines.join('\n')).toMatch(/Redis did not answer within 1000 ms \(REDIS_URL, REDIS_CONNECT_TIMEOUT_MS\)/);
  expect(started.has('"msg":"listening"')).toBe(false);
});
