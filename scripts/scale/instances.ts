// The service instances of a proof (`npm start`'s entry point, the compiled
// dist/main.js, each on its own port), the Redis they share (one of the proof's own, so that it can be
// restarted) and HAProxy in front of them.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureBuilt, SERVICE_MAIN, SERVICE_NODE_FLAGS } from '../lib/compiled';
import { freePort } from '../lib/ports';
import { writeServiceBalancer } from './haproxy';
import { type Proc, type Runner, waitFor } from './processes';

/** Requests per credential per minute on every instance: the base proof's budget check exhausts it. */
export const CREDENTIAL_BUDGET = 1_000;

export const ready = (port: number) => async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200;

export interface RedisServer {
  readonly port: number;
  readonly url: string;
  restart(): Promise<void>;
}

/** A Redis of our own (nothing on disk), answering PING when this resolves. */
export async function startRedis(runner: Runner, port: number): Promise<RedisServer> {
  const launch = () => runner.start('redis', 'redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
  const answers = () =>
    spawnSync('redis-cli', ['-p', String(port), 'ping'])
      .stdout.toString()
      .includes('PONG');
  let proc = launch();
  await waitFor('redis', answers);
  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      proc.child.kill('SIGTERM');
      await proc.exited();
      await new Promise((resolve) => setTimeout(resolve, 500));
      proc = launch();
      await waitFor('redis back', answers);
    },
  };
}

export interface InstanceSettings {
  databaseUrl: string;
  readUrl: string;
  redisUrl: string;
  secretsKey: Buffer;
  /** Settings on top of the proof's (e.g. DB_PREPARED_STATEMENTS). */
  extra?: Record<string, string>;
}

export interface Instances {
  readonly ports: number[];
  /** The current process of each. */
  readonly procs: Proc[];
  start(i: number): void;
  /** HAProxy's address in front of them. */
  readonly base: string;
  /** Each instance's METRICS_PORT: in production /metrics is served there only (issue 31). */
  readonly metricsPorts: number[];
}

/** The settings every instance runs with: production, logs at warn, the shared Redis, a budget the budget check can exhaust. */
function instanceEnv(port: number, metricsPort: number, settings: InstanceSettings, prefix: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    PORT: String(port),
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
    DATABASE_URL: settings.databaseUrl,
    DATABASE_READ_URL: settings.readUrl,
    REDIS_URL: settings.redisUrl,
    REDIS_KEY_PREFIX: prefix,
    MIGRATE_ON_START: 'false',
    SECRETS_KEY: settings.secretsKey.toString('hex'),
    LOG_LEVEL: 'warn',
    DB_POOL_MAX: '10',
    RATE_LIMIT_PER_CREDENTIAL: String(CREDENTIAL_BUDGET),
    RATE_LIMIT_PER_ADDRESS: '100000000',
    RATE_LIMIT_WINDOW_MS: '60000',
    ...settings.extra,
  };
}

/** Starts the instances, waits until each is ready, then HAProxy in front of them. */
export async function startInstances(runner: Runner, dir: string, ports: number[], haproxyPort: number, settings: InstanceSettings): Promise<Instances> {
  const prefix = `scale-proof:${process.pid}:`;
  ensureBuilt();
  const metricsPorts: number[] = [];
  while (metricsPorts.length < ports.length) metricsPorts.push(await freePort());
  const procs: Proc[] = [];
  const start = (i: number) => {
    const env = instanceEnv(ports[i]!, metricsPorts[i]!, settings, prefix);
    procs[i] = runner.start(`instance${i}`, process.execPath, [...SERVICE_NODE_FLAGS, SERVICE_MAIN], { env, logFile: path.join(dir, `instance${i}.log`) });
  };
  ports.forEach((_, i) => start(i));
  for (const port of ports) await waitFor(`instance :${port}`, ready(port), 90_000);
  runner.start('haproxy (service)', 'haproxy', ['-f', writeServiceBalancer(dir, haproxyPort, ports), '-db']);
  const base = `http://127.0.0.1:${haproxyPort}`;
  await waitFor('haproxy', async () => (await fetch(`${base}/healthz`)).status === 200);
  return { ports, procs, start, base, metricsPorts };
}

/** Reads served by replicas, summed over the instances' current processes (a restarted one counts from 0); `metricsPorts`: their METRICS_PORT listeners. */
export async function replicaReads(metricsPorts: number[]): Promise<number> {
  let total = 0;
  for (const port of metricsPorts) {
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    total += Number(/db_reads_routed_total\{route="replica"\} (\d+)/.exec(metrics)?.[1] ?? 0);
  }
  return total;
}
