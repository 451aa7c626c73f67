// Entry point of `npm start`: configuration, database, HTTP service, signals.
import pino from 'pino';
import { appOptionsFromConfig, createApp } from './app';
import { ConfigError, loadConfig } from './config';
import { openDatabase } from './db';
import { demoInstructions, prepareDemo } from './demo/seed';
import { LOG_REDACT } from './http/observability';

/** How long a shutdown may take before the process exits anyway. */
const SHUTDOWN_TIMEOUT_MS = 10_000;

async function main(): Promise<void> {
  const config = loadConfig();
  const database = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.PGLITE_DIR,
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    // The embedded database is always brought up to date: it has no other way.
    migrate: config.MIGRATE_ON_START || config.DATABASE_URL === undefined,
  });
  // The explorer opens with the demo user's token once the demo is prepared.
  let explorerHeaders: Record<string, string> = {};
  // Asynchronous log writes (lines written while a write is in flight go out
  // together in the next one): a synchronous write per line cost a
  // quarter of the CPU under load (BENCHMARKS.md). Flushed on the way out.
  const logStream = pino.destination({ dest: 1, sync: false });
  const app = await createApp({
    database,
    ...appOptionsFromConfig(config),
    explorer: { enabled: config.GRAPHQL_EXPLORER, defaultHeaders: () => explorerHeaders },
    logger: {
      level: config.LOG_LEVEL,
      stream: logStream,
      redact: LOG_REDACT,
    },
  });
  const log = app.fastify.log;
  if (database.applied.length > 0) log.info({ migrations: database.applied }, 'applied migrations');

  let shuttingDown = false;
  const shutdown = (signal: string) => {
    if (shuttingDown) return;
    shuttingDown = true;
    log.info({ signal }, 'shutting down');
    setTimeout(() => {
      log.error('shutdown timed out');
      logStream.flushSync();
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS).unref();
    app
      .close()
      .then(() => database.close())
      .then(
        () => {
          logStream.flushSync();
          process.exit(0);
        },
        (error: unknown) => {
          log.error({ err: error }, 'shutdown failed');
          process.exit(1);
        },
      );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));

  const address = await app.fastify.listen({ host: config.HOST, port: config.PORT });
  log.info({ address, database: database.embedded ? `embedded (${config.PGLITE_DIR})` : 'DATABASE_URL' }, 'listening');

  const { port } = app.fastify.server.address() as { port: number };
  const base = `http://localhost:${port}`;
  if (database.embedded && config.DEMO_SEED) {
    const demo = await prepareDemo(database, app.services);
    explorerHeaders = { 'SVC-Token': demo.userToken };
    process.stdout.write(`\n${demoInstructions(base, demo)}\n\n`);
  }
  if (config.GRAPHQL_EXPLORER) {
    const headers = Object.keys(explorerHeaders).length > 0 ? ' (opens with the demo user\'s SVC-Token)' : '';
    process.stdout.write(`GraphQL explorer: ${base}/playground${headers}\n\n`);
  }
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) {
    process.stderr.write(`${error.message}\n`);
  } else {
    process.stderr.write(`Failed to start: ${(error as Error).message ?? String(error)}\n`);
  }
  process.exit(1);
});
