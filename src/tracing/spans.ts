// The service's own parts of tracing: the route in the HTTP span's name, the
// GraphQL operation span of the REST paths, and the trace id on log lines.
// Each costs nothing while tracing is off.
import { context, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import type { FastifyInstance } from 'fastify';
import { type DocumentNode, type OperationDefinitionNode, print } from 'graphql';
import { activeTracer } from './active';

/** Names HTTP spans by route pattern ("GET /users/external/:file"), as instrumentation-http does with the route it is given. */
export function registerTracing(fastify: FastifyInstance): void {
  if (!activeTracer()) return;
  // Loaded only with tracing on: with @opentelemetry/semantic-conventions it
  // cost every start ~2.5 MB resident and ~6% of its module loading.
  const { getRPCMetadata, RPCType } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  fastify.addHook('onRequest', (request, _reply, done) => {
    const metadata = getRPCMetadata(context.active());
    if (metadata?.type === RPCType.HTTP && request.routeOptions.url !== undefined) metadata.route = request.routeOptions.url;
    done();
  });
}

interface OperationSpan {
  name: string;
  attributes: Record<string, string>;
}

const operations = new WeakMap<DocumentNode, OperationSpan>();

/** The span instrumentation-graphql gives an execution, for a document it cannot see executed. */
function operationSpanOf(document: DocumentNode): OperationSpan {
  let span = operations.get(document);
  if (!span) {
    const operation = document.definitions.find((d): d is OperationDefinitionNode => d.kind === 'OperationDefinition');
    const type = operation?.operation ?? 'query';
    const name = operation?.name?.value;
    span = {
      name: name === undefined ? type : `${type} ${name}`,
      attributes: {
        'graphql.operation.type': type,
        ...(name === undefined ? {} : { 'graphql.operation.name': name }),
        // The service's own document: its values come in variables, never recorded.
        'graphql.source': print(document),
      },
    };
    operations.set(document, span);
  }
  return span;
}

/** Runs a compiled operation of a REST path inside its operation span (SQL spans become its children). */
export function inOperationSpan<T extends { errors?: readonly unknown[] }>(document: DocumentNode, execute: () => Promise<T> | T): Promise<T> | T {
  const tracer = activeTracer();
  if (!tracer) return execute();
  const { name, attributes } = operationSpanOf(document);
  return tracer.startActiveSpan(name, { attributes }, async (span: Span) => {
    try {
      const result = await execute();
      // The error is the REST answer's (and in the HTTP span's status); the operation only says it failed.
      if (result.errors?.length) span.setStatus({ code: SpanStatusCode.ERROR });
      return result;
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** pino `mixin`: the trace and span of the request a line is logged in, as OpenTelemetry's log correlation names them. */
export function traceLogFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (!span) return {};
  const { traceId, spanId, traceFlags } = span.spanContext();
  return { trace_id: traceId, span_id: spanId, trace_flags: traceFlags.toString(16).padStart(2, '0') };
}
