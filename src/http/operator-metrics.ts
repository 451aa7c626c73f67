// The metrics an operator watches a deployment by (deploy/grafana, the rules in
// deploy/prometheus), beside the request histogram and the pool gauge of
// observability.ts, in the same registry (served as /metrics is):
//
// - build_info{version,revision,node} 1: what runs, for dashboards and for
//   telling a rollout's two versions apart;
// - http_requests_in_flight: requests received and not yet answered (saturation);
// - db_pool_waits_total, db_pool_wait_seconds_total: requests for a database
//   connection that found the pool full and queued, and how long they waited;
// - db_replica_up{replica}, db_replica_lag_seconds{replica},
//   db_replica_lag_bytes{replica}: each read replica in use or not, and how far
//   behind (with DATABASE_READ_URL; `replica` is its place in the list);
// - redis_up: the shared Redis connection ready (with REDIS_URL).
//
// Live subscriptions (graphql-ws, src/graphql/subscriptions.ts), by
// registerLiveMetrics: sockets open (`graphql_ws_connections`), subscriptions
// (`graphql_ws_subscriptions`), events delivered (`events_delivered_total`),
// slow consumers closed (`graphql_ws_dropped_consumers_total`), connections
// refused (`graphql_ws_refused_total`), and the listener's lag and state
// (`live_events_listener_lag_seconds`, `live_events_listener_up`).
//
// The services' own counters, by registerServiceCounters: revocations the bus
// failed to send (`credential_revocations_failed_total`), session-touch
// deadlock retries, reads routed to a replica or not (`db_reads_routed_total`,
// with DATABASE_READ_URL), and the sweeper's rows, runs and busy time.
import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, type Registry } from 'prom-client';
import type { Database } from '../db';
import type { SharedRedis } from '../scale/redis';
import type { ReadReplicas } from '../scale/replicas';
import type { AuthService } from '../services/auth';
import { SWEPT_KINDS, type Sweeper } from '../services/sweeper';
import { buildInfo } from '../version';

export interface OperatorMetricsOptions {
  database: Database;
  reads?: ReadReplicas | undefined;
  redis?: SharedRedis | undefined;
}

export function registerOperatorMetrics(fastify: FastifyInstance, registry: Registry, options: OperatorMetricsOptions): void {
  const build = buildInfo();
  new Gauge({
    name: 'build_info',
    help: 'The running build: package version, source revision (BUILD_REVISION) and Node.js version; always 1',
    labelNames: ['version', 'revision', 'node'] as const,
    registers: [registry],
  }).set(build, 1);

  // Counted in two callback hooks (no promise per request); an aborted
  // request, which never finishes, is counted out when it is aborted.
  let inFlight = 0;
  fastify.addHook('onRequest', (_request, _reply, done) => {
    inFlight++;
    done();
  });
  fastify.addHook('onResponse', (_request, _reply, done) => {
    inFlight--;
    done();
  });
  fastify.addHook('onRequestAbort', (_request, done) => {
    inFlight--;
    done();
  });
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received and not yet answered',
    registers: [registry],
    collect() {
      this.set(Math.max(0, inFlight));
    },
  });

  const { database } = options;
  new Counter({
    name: 'db_pool_waits_total',
    help: 'Requests for a database connection that found the pool full (DB_POOL_MAX) and queued',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(database.poolWaits().count);
    },
  });
  new Counter({
    name: 'db_pool_wait_seconds_total',
    help: 'Seconds requests waited in the pool queue for a database connection, in all',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(database.poolWaits().seconds);
    },
  });

  const { reads } = options;
  if (reads) {
    const each = (name: string, help: string, value: (lag: ReturnType<ReadReplicas['lag']>[number]) => number | undefined) =>
      new Gauge({
        name,
        help,
        labelNames: ['replica'] as const,
        registers: [registry],
        collect() {
          this.reset();
          for (const lag of reads.lag()) {
            const v = value(lag);
            if (v !== undefined) this.set({ replica: String(lag.replica) }, v);
          }
        },
      });
    each('db_replica_up', 'Whether each read replica is in use (answering, and within READ_REPLICA_MAX_LAG_MS)', (lag) => (lag.healthy ? 1 : 0));
    each('db_replica_lag_seconds', "How far each read replica's replay is behind the primary, in seconds (sampled every health check)", (lag) => lag.seconds);
    each('db_replica_lag_bytes', "How far each read replica's replay is behind the primary's last sampled position, in bytes of WAL", (lag) => lag.bytes);
  }

  const { redis } = options;
  if (redis) {
    new Gauge({
      name: 'redis_up',
      help: 'Whether the connection to the shared Redis (REDIS_URL) is ready',
      registers: [registry],
      collect() {
        this.set(redis.client.status === 'ready' ? 1 : 0);
      },
    });
  }
}

/** What registerLiveMetrics reads (src/graphql/subscriptions.ts's Live). */
export interface LiveMetricsSource {
  readonly stats: { sockets: number; subscriptions: number; droppedConsumers: number; refused: number };
  readonly hub: { readonly stats: { eventsDelivered: number; eventsRead: number; lagSeconds: number; listening: boolean; reconnects: number } };
}

export function registerLiveMetrics(registry: Registry, live: LiveMetricsSource): void {
  const gauge = (name: string, help: string, value: () => number) =>
    new Gauge({
      name,
      help,
      registers: [registry],
      collect() {
        this.set(value());
      },
    });
  const counter = (name: string, help: string, value: () => number) =>
    new Counter({
      name,
      help,
      registers: [registry],
      collect() {
        this.reset();
        this.inc(value());
      },
    });
  gauge('graphql_ws_connections', 'WebSockets open on GET /graphql (graphql-ws), initialised or not', () => live.stats.sockets);
  gauge('graphql_ws_subscriptions', 'Subscriptions running on this instance', () => live.stats.subscriptions);
  counter('events_delivered_total', 'Live events handed to subscriptions on this instance (one per subscription told)', () => live.hub.stats.eventsDelivered);
  counter('live_events_read_total', 'Live events this instance read from live_events', () => live.hub.stats.eventsRead);
  counter(
    'graphql_ws_dropped_consumers_total',
    'Sockets closed (1013) because their client did not take events fast enough (LIVE_SOCKET_QUEUE_MAX, LIVE_SOCKET_BUFFER_BYTES)',
    () => live.stats.droppedConsumers,
  );
  counter('graphql_ws_refused_total', 'WebSocket connections refused (4403): credentials missing, unknown, or not a user', () => live.stats.refused);
  gauge(
    'live_events_listener_lag_seconds',
    'Seconds between the commit of the last live event this instance read and its read (held back while an older transaction runs)',
    () => live.hub.stats.lagSeconds,
  );
  gauge('live_events_listener_up', "Whether this instance's LISTEN connection for live events is up (the periodic read goes on without it)", () =>
    live.hub.stats.listening ? 1 : 0,
  );
  counter(
    'live_events_listener_reconnects_total',
    'Times the LISTEN connection was re-established after a loss (each followed by a catch-up read)',
    () => live.hub.stats.reconnects,
  );
}

/** What registerServiceCounters reads, at each scrape. */
export interface ServiceCountersSource {
  auth: Pick<AuthService, 'revocationFailures' | 'deadlockRetries'>;
  sweeper: Pick<Sweeper, 'removed' | 'runs' | 'busyMs'>;
  reads?: Pick<ReadReplicas, 'routes'> | undefined;
}

/** The services' own counters, read at each scrape of /metrics. */
export function registerServiceCounters(metrics: Registry, { auth, sweeper, reads }: ServiceCountersSource): void {
  new Counter({
    name: 'credential_revocations_failed_total',
    help: 'Session revocations the bus (Redis, NOTIFY) failed to send: other instances honour the session until their cache entry expires',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(auth.revocationFailures);
    },
  });
  if (reads) {
    new Counter({
      name: 'db_reads_routed_total',
      help: 'Reads that may use a replica (lookups, registered users), by where they went and why',
      labelNames: ['route'] as const,
      registers: [metrics],
      collect() {
        this.reset();
        for (const [route, count] of Object.entries(reads.routes)) this.inc({ route }, count);
      },
    });
  }
  new Counter({
    name: 'sweeper_removed_total',
    help: 'Rows the sweeper of this instance removed: expired sessions, used nonces past the window, retained content past its retention',
    labelNames: ['kind'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const kind of SWEPT_KINDS) this.inc({ kind }, sweeper.removed[kind]);
    },
  });
  new Counter({
    name: 'sweeper_runs_total',
    help: 'Sweeper runs of this instance: swept (it held the lock), skipped (another instance was sweeping), failed',
    labelNames: ['outcome'] as const,
    registers: [metrics],
    collect() {
      this.reset();
      for (const [outcome, count] of Object.entries(sweeper.runs)) this.inc({ outcome }, count);
    },
  });
  new Counter({
    name: 'sweeper_busy_seconds_total',
    help: "Time this instance's sweep statements took: its rate is the share of the time the sweeper used (at most SWEEP_MAX_SHARE percent while it works through a backlog)",
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(sweeper.busyMs / 1000);
    },
  });
  new Counter({
    name: 'session_touch_deadlock_retries_total',
    help: 'Session-touch flushes run again after losing a deadlock',
    registers: [metrics],
    collect() {
      this.reset();
      this.inc(auth.deadlockRetries);
    },
  });
}
