// Entry point of `npm start`: configuration, database, HTTP service, signals.
import './compile-cache';
import { readFileSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';
import pino from 'pino';
import { type App, appOptionsFromConfig, createApp } from './app';
import { type Config, loadConfig, resolveSecretsKey } from './config';
import { ConfigError } from './errors';
import { toAppError } from './errors';
import { type Database, openDatabase } from './db';
import { demoInstructions, prepareDemo } from './demo/seed';
import { logDestination, logRedact, serveMetrics } from './http/observability';
import type { SharedRedis } from './scale/redis';
import { ReadReplicas } from './scale/replicas';
import { collectStartupGarbage } from './startup-gc';
import { traceLogFields } from './tracing/spans';

/**
 * After the delay, how long idle kept-alive connections may still bring one
 * more request (answered with Connection: close) before they are closed: a
 * client that has not yet moved elsewhere gets an answer, not a reset.
 */
const IDLE_GRACE_MS = 1_000;

async function main(): Promise<void> {
  const config = loadConfig();
  // Under load most garbage is promoted (requests are in flight across
  // scavenges), and V8's default growth let the old generation reach ~4× the
  // live set before collecting it: the peak RSS of the benchmark fell from
  // 298 to 182 MB at 50%, the lookups' throughput unchanged. V8 reads the
  // flag at each full GC, so setting it now (before the load) takes effect.
  if (config.HEAP_GROWING_PERCENT > 0) setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWING_PERCENT}`);
  const secrets = resolveSecretsKey(config);
  // Before anything starts: reads files the configuration names (the trusted-documents manifest).
  const appOptions = appOptionsFromConfig(config);
  // Before the database opens, so that its connections' statements are traced.
  // Loaded only then: with tracing off the SDK never is (src/tracing/active.ts).
  // require, not import(): the service is CommonJS (dist/, compiled; and the
  // sources under jest and tsx), where Node's import() of './tracing' would
  // find neither a .js nor a .ts file without its extension.
  const tracing =
    config.OTEL_EXPORTER_OTLP_ENDPOINT === undefined ? undefined : (require('./tracing') as typeof import('./tracing')).startTracingFromConfig(config);
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.PGLITE_DIR,
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    preparedStatements: config.DB_PREPARED_STATEMENTS,
    describeOnce: !config.DEPENDENCY_OVERRIDES_OFF.includes('described-query'),
    // The embedded database is always brought up to date: it has no other way.
    migrate: config.MIGRATE_ON_START || config.DATABASE_URL === undefined,
  });
  const startLog = pino({ level: config.LOG_LEVEL, redact: logRedact(config.SESSION_TOKEN_HEADERS) });
  const redis = await connectSharedRedis(config, database, startLog);
  const reads = await openReadReplicas(config, database, redis);
  // The explorer opens with the demo user's token once the demo is prepared.
  let explorerHeaders: Record<string, string> = {};
  const logStream = openLogStream();
  // The sweeper's log lines go through the app's logger (set once it exists).
  let log: pino.Logger = startLog;
  const app = await createApp({
    database,
    ...appOptions,
    sweeper: {
      ...appOptions.sweeper,
      onRun: (result) => log.info({ removed: result.removed, batches: result.batches }, 'swept'),
      // Logged, not thrown: the next run tries again (the database may be briefly away).
      onError: (error) => log.warn({ err: toAppError(error) }, 'sweep failed'),
    },
    redis,
    reads,
    secretsKey: secrets.key,
    ...(config.TLS_CERT_FILE && config.TLS_KEY_FILE ? { https: { cert: readFileSync(config.TLS_CERT_FILE), key: readFileSync(config.TLS_KEY_FILE) } } : {}),
    explorer: { enabled: config.GRAPHQL_EXPLORER, defaultHeaders: () => explorerHeaders },
    logger: {
      level: config.LOG_LEVEL,
      stream: logStream,
      // Trace ids on log lines only when there are traces (pino calls a mixin for every line).
      ...(tracing ? { mixin: traceLogFields } : {}),
    },
  });
  // Fastify's logger is the pino instance made from the options above.
  // eslint-disable-next-line @typescript-eslint/no-unsafe-class-instance-assignment
  log = app.fastify.log as pino.Logger;
  reportSetup(log, config, database, secrets);
  // Readiness fails at once, requests are served for the delay; then each is
  // closed after what uses it: the app (its requests drained), then what it used.
  let metricsServer: Awaited<ReturnType<typeof serveMetrics>> | undefined;
  stopOnSignals(log, config, app, [
    () => app.close({ idleGraceMs: IDLE_GRACE_MS }),
    () => metricsServer?.close(),
    () => reads?.close(),
    () => redis?.close(),
    () => database.close(),
    () => tracing?.shutdown(),
  ]);

  const address = await app.fastify.listen({ host: config.HOST, port: config.PORT });
  log.info({ address, database: database.embedded ? `embedded (${config.PGLITE_DIR})` : 'DATABASE_URL' }, 'listening');
  if (config.METRICS_ENABLED && config.METRICS_PORT !== undefined) {
    metricsServer = await serveMetrics(app.metrics, config.METRICS_HOST ?? config.HOST, config.METRICS_PORT);
    log.info({ address: metricsServer.address }, 'metrics listening');
  } else if (config.METRICS_ENABLED && config.NODE_ENV === 'production') {
    log.warn('/metrics is not served: set METRICS_PORT (production keeps it off the service port)');
  }
  // Supervisors and scripts wait for this line: out now, not with the next batch.
  logStream.flushSync();
  // Every instance runs one; the sweep lock lets one of them work at a time.
  app.services.sweeper.start();

  explorerHeaders = await welcome(app, config, database);
  // After the demo's seeding (start-up's garbage too), and a second on, so
  // that the first readiness probe does not wait for the collection.
  if (config.GC_AFTER_START) setTimeout(collectStartupGarbage, 1_000).unref();
}

/**
 * Before listening: requests that arrived before Redis answered would pass
 * uncounted (and miss revocations), so an instance waits for it (up to
 * REDIS_CONNECT_TIMEOUT_MS, then fails to start, for the supervisor to retry).
 */
async function connectSharedRedis(config: Config, database: Database, log: pino.Logger): Promise<SharedRedis | undefined> {
  if (config.REDIS_URL === undefined) return undefined;
  log.info({ timeoutMs: config.REDIS_CONNECT_TIMEOUT_MS }, 'waiting for redis');
  try {
    // ioredis is loaded only when there is a Redis (~9 MB otherwise resident for nothing).
    const { connectRedis } = require('./scale/redis') as typeof import('./scale/redis');
    return await connectRedis({
      url: config.REDIS_URL,
      prefix: config.REDIS_KEY_PREFIX,
      connectTimeoutMs: config.REDIS_CONNECT_TIMEOUT_MS,
      log,
    });
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** Replicas that are down at start are not waited for: they are skipped until they answer. */
async function openReadReplicas(config: Config, database: Database, redis: SharedRedis | undefined): Promise<ReadReplicas | undefined> {
  if (config.DATABASE_READ_URL === undefined) return undefined;
  const reads = new ReadReplicas({
    urls: config.DATABASE_READ_URL,
    primary: database.pool,
    redis,
    maxLagMs: config.READ_REPLICA_MAX_LAG_MS,
    waitMs: config.READ_YOUR_WRITES_WAIT_MS,
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
  });
  await reads.start();
  return reads;
}

/**
 * Asynchronous, batched log writes (logDestination): a write per line cost a
 * fifth of a lookup's CPU and more under load (BENCHMARKS.md). Whatever is
 * still buffered goes out on every exit Node runs handlers for (a stop, a
 * failed start, an uncaught error); a SIGKILL loses at most LOG_FLUSH_MS of lines.
 */
function openLogStream(): ReturnType<typeof logDestination> {
  const logStream = logDestination();
  process.on('exit', () => {
    try {
      logStream.flushSync();
    } catch {
      // Not open yet, or stdout is gone: nothing more can be written.
    }
  });
  return logStream;
}

/** What an operator should know of this start: a generated secrets key, migrations applied, a setting that defeats another. */
function reportSetup(log: pino.Logger, config: Config, database: Database, secrets: ReturnType<typeof resolveSecretsKey>): void {
  if (secrets.generated) {
    log.warn({ file: secrets.file }, "generated the key that seals applications' auth secrets: keep it with the database (SECRETS_KEY)");
  }
  if (database.applied.length > 0) log.info({ migrations: database.applied }, 'applied migrations');
  if (config.DATABASE_URL !== undefined && config.REDIS_URL === undefined && config.DB_PREPARED_STATEMENTS === 'unnamed') {
    // unnamed is the transaction-pooler setting, and LISTEN does not survive
    // one: another instance's revocations would then wait for the cache's 5 s.
    log.warn('revocations across instances use LISTEN/NOTIFY, which PgBouncer in transaction mode does not carry: set REDIS_URL (see SCALING.md)');
  }
}

/**
 * SIGTERM or SIGINT: readiness fails at once (app.drain()), requests are
 * served for SHUTDOWN_DELAY_MS (a second signal ends the delay), then each
 * step in turn, then exit 0; exit 1 if one fails or they take over
 * SHUTDOWN_TIMEOUT_MS after the delay.
 */
function stopOnSignals(log: pino.Logger, config: Config, app: App, steps: (() => Promise<unknown> | undefined)[]): void {
  let endDelay: (() => void) | undefined;
  const shutdown = (signal: string) => {
    if (endDelay) {
      log.info({ signal }, 'second signal: ending the shutdown delay');
      endDelay();
      return;
    }
    const delayed = new Promise<void>((resolve) => {
      endDelay = resolve;
      setTimeout(resolve, config.SHUTDOWN_DELAY_MS);
    });
    app.drain();
    log.info({ signal, delayMs: config.SHUTDOWN_DELAY_MS, phase: 'not ready, serving until the delay is over' }, 'shutting down');
    void delayed
      .then(() => {
        log.info({ phase: 'no new connections, draining' }, 'shutting down');
        setTimeout(() => {
          log.error('shutdown timed out');
          process.exit(1);
        }, config.SHUTDOWN_TIMEOUT_MS).unref();
        return steps.reduce<Promise<unknown>>((done, step) => done.then(step), Promise.resolve());
      })
      .then(
        () => process.exit(0),
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * Once listening: on the embedded database the demo (its instructions printed),
 * and where the explorer is. Returns the headers the explorer opens with (the
 * demo user's token, or none).
 */
async function welcome(app: App, config: Config, database: Database): Promise<Record<string, string>> {
  let explorerHeaders: Record<string, string> = {};
  const { port } = app.fastify.server.address() as { port: number };
  const base = `${config.TLS_CERT_FILE ? 'https' : 'http'}://localhost:${port}`;
  if (database.embedded && config.DEMO_SEED) {
    const demo = await prepareDemo(app.provisioning, app.services);
    explorerHeaders = { 'SVC-Token': demo.userToken };
    process.stdout.write(`\n${demoInstructions(base, demo)}\n\n`);
  }
  if (config.GRAPHQL_EXPLORER) {
    const headers = Object.keys(explorerHeaders).length > 0 ? " (opens with the demo user's SVC-Token)" : '';
    process.stdout.write(`GraphQL explorer: ${base}/playground${headers}\n\n`);
  }
  return explorerHeaders;
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${(error as { message?: string } | null | undefined)?.message ?? String(error)}\n`);
  }
  process.exit(1);
});
