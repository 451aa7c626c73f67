// One log line and one latency sample per request, labelled by route and, for
// GraphQL, by operation; Prometheus metrics at GET /metrics.
//
// Labels stay bounded: routes are route patterns ("unmatched" for unknown
// paths) and GraphQL operations are labelled by their type and root fields
// (taken from the schema), never by client-chosen operation names; and only
// known operations are (issue 31: 1,152 anonymous documents of root-field
// combinations grew the page from 10.7 KB to 1.6 MB, 742 series): a document
// of the trusted manifest, or of one root field (the REST routes' operations,
// one each), is labelled by its fields; any other document is `other`.
import type { ApolloServerPlugin, GraphQLRequestListener } from '@apollo/server';
import { type AddressInfo } from 'node:net';
import { createServer } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Kind, type OperationDefinitionNode } from 'graphql';
import type { Pool } from 'pg';
import pino from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type Context, DEFAULT_SESSION_TOKEN_HEADERS } from '../context';
import { sendUnstored } from './caching';
import { RequestDurations } from '../overrides/durations';

declare module 'fastify' {
  interface FastifyRequest {
    /** The GraphQL operation a request ran, e.g. "query userByExternalId". */
    operation?: string;
  }
}

/**
 * The fastify request of each GraphQL context, so that Apollo can label it.
 * A property rather than a WeakMap entry: Apollo hands plugins a shallow copy
 * of the context, which keeps own properties but not identity.
 */
const REQUEST = Symbol('fastify request');
type Linked = Context & { [REQUEST]?: FastifyRequest };

export function linkContext(context: Context, request: FastifyRequest): Context {
  (context as Linked)[REQUEST] = request;
  return context;
}

export function operationLabel(operation: OperationDefinitionNode): string {
  const fields = operation.selectionSet.selections.map((selection) => (selection.kind === 'Field' ? selection.name.value : '…')).sort();
  const shown = fields.length > 3 ? [...fields.slice(0, 3), '…'] : fields;
  return `${operation.operation} ${shown.join(',')}`;
}

/**
 * The label of each operation, kept per document: Apollo Server hands every
 * request of a cached document the same syntax tree.
 */
const labels = new WeakMap<OperationDefinitionNode, string>();

/** What every document that is not a known operation is labelled. */
export const OTHER_OPERATION = 'other';

/** A known operation's label: a trusted document's (by its SHA-256), or one root field's; else OTHER_OPERATION. */
function boundedLabel(operation: OperationDefinitionNode, trusted: boolean): string {
  const selections = operation.selectionSet.selections;
  if (trusted || (selections.length === 1 && selections[0]!.kind === Kind.FIELD)) return operationLabel(operation);
  return OTHER_OPERATION;
}

/** `trusted`: whether a document's SHA-256 (Apollo's queryHash) is of the trusted manifest. */
export function operationLabelPlugin(trusted: (hash: string) => boolean = () => false): ApolloServerPlugin<Context> {
  // One listener for every request (Apollo asks each plugin for one per request).
  const listener: GraphQLRequestListener<Context> = {
    async didResolveOperation({ operation, contextValue, queryHash }) {
      const request = (contextValue as Linked)[REQUEST];
      if (!request || !operation) return;
      let label = labels.get(operation);
      if (label === undefined) {
        label = boundedLabel(operation, trusted(queryHash));
        labels.set(operation, label);
      }
      request.operation = label;
    },
  };
  const listening = Promise.resolve(listener);
  return { requestDidStart: () => listening };
}

/** The fields of a request's log line. */
interface RequestLine {
  method: string;
  route: string;
  status: number;
  durationMs: number;
  operation?: string;
  applicationId?: number;
  address?: string;
}

export interface ObservabilityOptions {
  pool: Pool;
  statementCount: () => number;
  metrics: boolean;
  /** false: the duration histogram is prom-client's own Histogram (DEPENDENCY_OVERRIDES_OFF=durations; src/overrides/README.md). */
  ownDurations?: boolean;
  /**
   * Serve GET /metrics on the service's own port too (default true). False
   * where the operator serves it elsewhere (METRICS_PORT, serveMetrics) and in
   * production without METRICS_PORT: the page is the operator's, not the
   * clients' (issue 31).
   */
  metricsPublic?: boolean;
}

/** What the request hook observes through: the service's histogram, or prom-client's behind the same call. */
type Durations = Pick<RequestDurations, 'observe'>;

function durationsHistogram(name: string, help: string, buckets: number[], registry: Registry, own: boolean): Durations {
  if (own) return new RequestDurations(name, help, buckets, registry);
  const histogram = new Histogram({ name, help, buckets, labelNames: ['method', 'route', 'operation', 'status'] as const, registers: [registry] });
  return { observe: (method, route, operation, status, seconds) => histogram.observe({ method, route, operation, status }, seconds) };
}

/** Metrics that name versions (the package's, Node's): not on the service's public port, where they tell an attacker what runs. */
const VERSION_METRICS = ['build_info', 'nodejs_version_info'];

/** The page without VERSION_METRICS' families. */
function withoutVersions(page: string): string {
  return page
    .split('\n')
    .filter((line) => {
      const name = line.startsWith('# ') ? line.split(' ')[2] : /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line)?.[0];
      return name === undefined || !VERSION_METRICS.includes(name);
    })
    .join('\n');
}

/**
 * GET /metrics (the whole page, versions included) on a listener of its own,
 * METRICS_HOST:METRICS_PORT: where the operator's scraper reaches and
 * clients do not. Anything else answers 404.
 */
export async function serveMetrics(registry: Registry, host: string, port: number): Promise<{ address: AddressInfo; close(): Promise<void> }> {
  const server = createServer((request, response) => {
    const path = (request.url ?? '').split('?')[0];
    if (request.method !== 'GET' || path !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('Not found\n');
      return;
    }
    registry.metrics().then(
      (page) => response.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(page),
      () => response.writeHead(500).end(),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    address: server.address() as AddressInfo,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

export function registerObservability(fastify: FastifyInstance, options: ObservabilityOptions): Registry {
  const registry = new Registry();
  const duration = durationsHistogram(
    'http_request_duration_seconds',
    'HTTP request latency by route, GraphQL operation and status (its _count is the request count)',
    [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registry,
    options.ownDurations ?? true,
  );
  const { pool } = options;
  new Gauge({
    name: 'db_pool_connections',
    help: 'Database pool connections by state (total, idle, waiting clients, max)',
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.set({ state: 'total' }, pool.totalCount);
      this.set({ state: 'idle' }, pool.idleCount);
      this.set({ state: 'waiting' }, pool.waitingCount);
      // pg-pool sets max (default 10) when the pool is made.
      this.set({ state: 'max' }, pool.options.max);
    },
  });
  new Counter({
    name: 'db_statements_total',
    help: 'SQL statements sent to the database',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(options.statementCount());
    },
  });
  collectDefaultMetrics({ register: registry });

  // A callback hook, not an async one: no promise per request.
  fastify.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url ?? 'unmatched';
    const durationMs = reply.elapsedTime;
    const operation = request.operation;
    duration.observe(request.method, route, operation ?? '', reply.statusCode, durationMs / 1000);
    // Deliberately no headers, query values or bodies: they carry credentials.
    // The caller's application (once its credentials were checked) and the
    // client's address (X-Forwarded-For's only with TRUST_PROXY), so that an
    // operator can follow one tenant or one client through the log.
    const context = request.context;
    const line: RequestLine = { method: request.method, route, status: reply.statusCode, durationMs: Math.round(durationMs * 100) / 100 };
    if (operation) line.operation = operation;
    const applicationId = context?.authenticated?.applicationId;
    if (applicationId !== undefined) line.applicationId = applicationId;
    line.address = context?.address ?? request.ip;
    request.log.info(line, 'request');
    done();
  });

  if (options.metrics && options.metricsPublic !== false) {
    fastify.get('/metrics', async (_request, reply) =>
      sendUnstored(reply.header('content-type', registry.contentType), withoutVersions(await registry.metrics())),
    );
  }
  return registry;
}

/**
 * pino paths main's logger redacts: the headers that carry a secret — the
 * configured session-token headers (SESSION_TOKEN_HEADERS) and Authorization.
 * The request lines carry no headers, but a logged request object (a
 * plugin's, an error's) would: its credentials never reach a log
 * (test/security/secrets.test.ts; test/rest/sessions.test.ts for a configured
 * header). On-Behalf-Of names a user, not a secret: it stays.
 */
export const logRedact = (tokenHeaders: readonly string[] = DEFAULT_SESSION_TOKEN_HEADERS): string[] =>
  [...tokenHeaders, 'authorization'].map((name) => `req.headers[${JSON.stringify(name)}]`);

/**
 * How long a log line may wait in the buffer before it is written, at most:
 * an idle service still shows its last requests within this.
 */
export const LOG_FLUSH_MS = 1000;

/** Where main's log lines go: what pino writes to, and what main flushes on exit. */
export interface LogDestination {
  write(line: string): void;
  /** Writes what is still buffered, synchronously (on exit). */
  flushSync(): void;
}

/**
 * Where main's log lines go (stdout, or `dest`): written asynchronously and in
 * batches of at least 4 KiB (about 20 request lines), or every LOG_FLUSH_MS.
 * A write per line cost about a fifth of a lookup's CPU in process (REST
 * 738 → 579 µs per request batched, `npm run bench:cpu`) and more across a pipe
 * (BENCHMARKS.md, "Logging"). What is still buffered is written on exit
 * (main: `flushSync`).
 *
 * sonic-boom in its buffer mode, each line handed over as bytes: in its
 * string mode it appended every line to the batch's string and measured the
 * whole batch (Buffer.byteLength, which flattens it) on every write, about
 * 2 KB copied and scanned per line; in buffer mode it adds up the lines'
 * lengths and joins them once per write (2.3 → 0.6 µs per line in a
 * micro-benchmark here; BENCHMARKS.md, "Logging"). The batching, the periodic
 * flush, the exit's flush and pino's handling of a closed pipe are
 * sonic-boom's as before.
 */
export function logDestination(dest: number | string = 1): LogDestination {
  const sonic = pino.destination({ dest, sync: false, minLength: 4096, periodicFlush: LOG_FLUSH_MS, contentMode: 'buffer' });
  return {
    // `sonic.write` looked up on each call: pino replaces it with a no-op on EPIPE.
    write: (line) => {
      // Buffer mode takes Buffers; its type declares only strings.
      sonic.write(Buffer.from(line) as unknown as string);
    },
    flushSync: () => sonic.flushSync(),
  };
}
