// OpenTelemetry tracing: off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
//
// Spans: the HTTP request (instrumentation-http, which also continues an
// incoming W3C `traceparent`), the GraphQL operation (instrumentation-graphql's
// execute span for /graphql; src/tracing/spans.ts's span of the same shape for
// the REST paths, which run compiled operations the instrumentation never
// sees) and each SQL statement (instrumentation-pg, Prisma's included: it sends
// them through the same pg pool).
//
// The instrumentations are applied to the modules this process has loaded,
// explicitly, rather than through their require hooks: those patch only
// modules loaded after they are installed, which main cannot promise (it loads
// the app first) and jest, with a module registry of its own, never triggers.
import { context, propagation, trace } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { InstrumentationBase } from '@opentelemetry/instrumentation';
import { GraphQLInstrumentation } from '@opentelemetry/instrumentation-graphql';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SimpleSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { Config } from '../config';
import { activeTracer, setActiveTracer } from './active';

export interface TracingOptions {
  /** Where finished spans go: OTLP in production, an in-memory exporter in tests. */
  exporter: SpanExporter;
  serviceName: string;
  /** Export in batches (production); false exports each span as it ends (tests). */
  batch?: boolean;
}

export interface Tracing {
  /** Exports what is pending, then removes the instrumentation. */
  shutdown(): Promise<void>;
}

/** Probes and scrapes: traced, they would drown the requests of clients. */
const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Starts tracing when OTEL_EXPORTER_OTLP_ENDPOINT is set (call before the database opens). */
export function startTracingFromConfig(config: Config): Tracing | undefined {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (endpoint === undefined) return undefined;
  // The traces path under the base endpoint, as the OpenTelemetry SDKs derive it. The
  // exporter itself reads the other OTEL_EXPORTER_OTLP_* variables (headers, timeout, compression).
  const url = `${endpoint.replace(/\/+$/, '')}/v1/traces`;
  return startTracing({ exporter: new OTLPTraceExporter({ url }), serviceName: config.OTEL_SERVICE_NAME, batch: true });
}

export function startTracing(options: TracingOptions): Tracing {
  if (activeTracer()) throw new Error('tracing is already started');
  const provider = new NodeTracerProvider({
    // OTEL_RESOURCE_ATTRIBUTES adds attributes; the service name is the configuration's.
    resource: defaultResource()
      .merge(detectResources({ detectors: [envDetector] }))
      .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName })),
    spanProcessors: [options.batch === false ? new SimpleSpanProcessor(options.exporter) : new BatchSpanProcessor(options.exporter)],
  });
  // Global tracer provider, AsyncLocalStorage context, W3C trace context propagation.
  provider.register();

  // Each with the modules (or module files) it patches, loaded by a literal
  // require: in dist/main.js that is the copy bundled into it (scripts/build.mjs),
  // the one the service runs, where require(name) at run time would load another
  // from node_modules, which nothing calls (pg is not bundled: the same either way).
  const instrumentations: [InstrumentationBase, Modules][] = [
    [
      new HttpInstrumentation({
        enabled: false,
        // The service calls no HTTP service; the exporter's own requests must not be traced.
        disableOutgoingRequestInstrumentation: true,
        ignoreIncomingRequestHook: (request) => UNTRACED_PATHS.has((request.url ?? '').split('?')[0] ?? ''),
      }),
      { http: () => require('node:http') as unknown },
    ],
    // Statements outside a request (migrations, the batched session touches) have no trace to join.
    [new PgInstrumentation({ enabled: false, requireParentSpan: true, ignoreConnectSpans: true }), { pg: () => require('pg') as unknown }],
    // The operation's execution only: parse and validate are cached by Apollo, and
    // resolver spans would have no counterpart on the REST paths.
    [
      new GraphQLInstrumentation({ enabled: false, ignoreResolveSpans: true }),
      { 'graphql/execution/execute.js': () => require('graphql/execution/execute.js') as unknown },
    ],
  ];
  const unpatches: (() => void)[] = [];
  for (const [instrumentation, modules] of instrumentations) {
    instrumentation.setTracerProvider(provider);
    unpatches.push(...patchLoaded(instrumentation, modules));
  }
  setActiveTracer(trace.getTracer('chat-user-service'));

  return {
    async shutdown() {
      setActiveTracer(undefined);
      for (const unpatch of unpatches.reverse()) unpatch();
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
    },
  };
}

/** Module (or module file) names an instrumentation knows, each with how to load it. */
type Modules = Record<string, () => unknown>;

/**
 * Applies an instrumentation's patches to the modules (or module files) named,
 * as loaded by this process; returns the undo of each.
 */
function patchLoaded(instrumentation: InstrumentationBase, modules: Modules): (() => void)[] {
  const undo: (() => void)[] = [];
  for (const module of instrumentation.getModuleDefinitions()) {
    const version = packageVersion(module.name);
    // The definitions' patch and unpatch are plain functions (closures or bound), never called on their definition here.
    /* eslint-disable @typescript-eslint/unbound-method */
    const targets = [
      { name: module.name, patch: module.patch, unpatch: module.unpatch },
      ...module.files.map((file) => ({ name: file.name, patch: file.patch, unpatch: file.unpatch })),
    ];
    /* eslint-enable @typescript-eslint/unbound-method */
    for (const target of targets) {
      const load = modules[target.name];
      if (!target.patch || !load) continue;
      const exports = load();
      target.patch(exports, version);
      undo.push(() => target.unpatch?.(exports, version));
    }
  }
  return undo;
}

function packageVersion(name: string): string | undefined {
  try {
    return (require(`${name}/package.json`) as { version?: string }).version;
  } catch {
    // Node's own modules have none.
    return undefined;
  }
}
