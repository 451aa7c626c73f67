// OpenTelemetry tracing (src/tracing), read back from an in-memory exporter:
// the span tree of a REST call and of a GraphQL call (HTTP request → GraphQL
// operation → one span per SQL statement), an incoming W3C traceparent
// continued, the trace id on the request's log line; then the production
// set-up (OTEL_EXPORTER_OTLP_ENDPOINT) exporting to a collector over HTTP.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { SpanKind, SpanStatusCode } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { loadConfig } from '../../src/config';
import { startTracing, startTracingFromConfig, type Tracing } from '../../src/tracing';
import { traceLogFields } from '../../src/tracing/spans';
import { seedTenant, type Tenant } from '../support/seed';
import { startService, useService } from '../support/service';

const SERVICE_NAME = 'chat-user-service-under-test';

function capturedLog(): { stream: Writable; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { stream, lines };
}

/** Spans of one trace, once its root (the HTTP request's span, which ends after the response is sent) is exported. */
async function traceOf(exporter: InMemorySpanExporter, find: (span: ReadableSpan) => boolean): Promise<ReadableSpan[]> {
  for (let waited = 0; waited < 5_000; waited += 10) {
    const root = exporter.getFinishedSpans().find((span) => span.kind === SpanKind.SERVER && find(span));
    if (root) return exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === root.spanContext().traceId);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error('no server span was exported');
}

const childrenOf = (spans: ReadableSpan[], parent: ReadableSpan) => spans.filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);

/** The tree as [name, kind] pairs, children sorted, SQL statements folded into one entry. */
function shape(spans: ReadableSpan[], span: ReadableSpan): unknown {
  const children = childrenOf(spans, span);
  const sql = children.filter((child) => child.attributes['db.system'] === 'postgresql' || child.attributes['db.system.name'] === 'postgresql');
  const others = children.filter((child) => !sql.includes(child));
  return {
    name: span.name,
    ...(others.length > 0 ? { children: others.map((child) => shape(spans, child)) } : {}),
    ...(sql.length > 0 ? { sqlStatements: sql.length } : {}),
  };
}

describe('with an in-memory exporter', () => {
  const exporter = new InMemorySpanExporter();
  const log = capturedLog();
  let tracing: Tracing;
  let tenant: Tenant;

  beforeAll(() => {
    // Before the database opens, as main does: its connections' statements are traced.
    tracing = startTracing({ exporter, serviceName: SERVICE_NAME, batch: false });
  });
  // Declared between the tracing's hooks: started after it, closed before it is shut down.
  const service = useService({ logger: { level: 'info', stream: log.stream, mixin: traceLogFields } });
  afterAll(async () => {
    await tracing?.shutdown();
  });
  beforeAll(async () => {
    tenant = await seedTenant(service.app.provisioning);
  });
  beforeEach(() => exporter.reset());

  test('a REST call is one trace: the HTTP request, the GraphQL operation it runs, and its SQL statements', async () => {
    const res = await service.rest('GET', '/users/external/102.json', { headers: tenant.as.owner });
    expect(res.status).toBe(200);
    const spans = await traceOf(exporter, (span) => span.name === 'GET /users/external/:file');
    const root = spans.find((span) => span.parentSpanContext === undefined)!;
    expect(root.kind).toBe(SpanKind.SERVER);
    expect(root.attributes).toMatchObject({ 'http.route': '/users/external/:file' });
    expect(root.resource.attributes['service.name']).toBe(SERVICE_NAME);

    const [operation, ...others] = childrenOf(spans, root);
    expect(others).toEqual([]);
    expect(operation!.name).toBe('query RestUserByExternalId');
    expect(operation!.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'RestUserByExternalId' });
    const statements = childrenOf(spans, operation!);
    expect(statements.length).toBeGreaterThanOrEqual(1);
    for (const statement of statements) {
      expect(statement.kind).toBe(SpanKind.CLIENT);
      expect(childrenOf(spans, statement)).toEqual([]);
    }
    // The lookup itself, with its parameters left out (they are values: ids, hashed tokens).
    const texts = statements.map((s) => String(s.attributes['db.statement'] ?? s.attributes['db.query.text']));
    expect(texts.some((text) => /external_user_id/i.test(text))).toBe(true);
    expect(JSON.stringify(spans.map((s) => s.attributes))).not.toContain(tenant.ownerToken);
    // Every span of the request is in the tree.
    expect(spans).toHaveLength(2 + statements.length);
  });

  test('a GraphQL call is one trace: the HTTP request, the operation instrumentation-graphql sees, and its SQL statements', async () => {
    const res = await service.graphql('query Lookup { userByExternalId(externalUserId: 101) { login } }', undefined, tenant.as.member);
    expect(res.body).toEqual({ data: { userByExternalId: { login: 'owner' } } });
    const spans = await traceOf(exporter, (span) => span.name === 'POST /graphql');
    const root = spans.find((span) => span.parentSpanContext === undefined)!;
    expect(shape(spans, root)).toEqual({
      name: 'POST /graphql',
      children: [{ name: 'query Lookup', sqlStatements: expect.any(Number) }],
    });
    const operation = childrenOf(spans, root)[0]!;
    expect(operation.attributes).toMatchObject({ 'graphql.operation.type': 'query', 'graphql.operation.name': 'Lookup' });
    // Literal values are masked in the recorded document.
    expect(String(operation.attributes['graphql.source'])).not.toContain('101');
  });

  test('an operation that fails marks its span as an error, and the HTTP span carries the status', async () => {
    const res = await service.rest('GET', '/users/external/999.json', { headers: tenant.as.owner });
    expect(res.status).toBe(404);
    const spans = await traceOf(exporter, (span) => span.name === 'GET /users/external/:file');
    const root = spans.find((span) => span.parentSpanContext === undefined)!;
    expect(root.attributes['http.status_code'] ?? root.attributes['http.response.status_code']).toBe(404);
    expect(childrenOf(spans, root)[0]!.status.code).toBe(SpanStatusCode.ERROR);
  });

  test('an incoming W3C traceparent is continued, and the request log line carries its trace id', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const parentId = '00f067aa0ba902b7';
    const res = await service.rest('GET', '/address_book/registered_users.json', {
      headers: { ...tenant.as.owner, traceparent: `00-${traceId}-${parentId}-01`, 'x-request-id': 'continued-trace' },
    });
    expect(res.status).toBe(200);
    const spans = await traceOf(exporter, (span) => span.spanContext().traceId === traceId);
    const root = spans.find((span) => span.kind === SpanKind.SERVER)!;
    expect(root.parentSpanContext).toMatchObject({ traceId, spanId: parentId, isRemote: true });
    expect(shape(spans, root)).toEqual({
      name: 'GET /address_book/registered_users.json',
      children: [{ name: 'query RestRegisteredUsers', sqlStatements: expect.any(Number) }],
    });

    const line = log.lines.find((l) => l.msg === 'request' && l.reqId === 'continued-trace');
    expect(line).toMatchObject({ trace_id: traceId, span_id: root.spanContext().spanId, trace_flags: '01' });
  });

  test('health probes and metric scrapes are not traced', async () => {
    expect((await service.rest('GET', '/healthz')).status).toBe(200);
    expect((await service.rest('GET', '/metrics')).status).toBe(200);
    await service.rest('GET', '/users/external/102.json', { headers: tenant.as.owner });
    await traceOf(exporter, (span) => span.name === 'GET /users/external/:file');
    expect(exporter.getFinishedSpans().filter((span) => /healthz|metrics/.test(span.name))).toEqual([]);
  });
});

describe('configured by OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  test('tracing is off when OTEL_EXPORTER_OTLP_ENDPOINT is unset', () => {
    expect(startTracingFromConfig(loadConfig({}))).toBeUndefined();
  });

  test('spans are exported to the collector over OTLP/HTTP (protobuf)', async () => {
    const received: { path: string; contentType: string | undefined; body: Buffer }[] = [];
    const collector: Server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        received.push({ path: request.url ?? '', contentType: request.headers['content-type'], body: Buffer.concat(chunks) });
        response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
    const tracing = startTracingFromConfig(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_SERVICE_NAME: SERVICE_NAME }))!;
    const service = await startService();
    try {
      const tenant = await seedTenant(service.app.provisioning);
      expect((await service.rest('GET', '/users/external/102.json', { headers: tenant.as.owner })).status).toBe(200);
    } finally {
      await service.close();
      // Flushes the batch.
      await tracing.shutdown();
      await new Promise((resolve) => collector.close(resolve));
    }
    expect(received.length).toBeGreaterThanOrEqual(1);
    expect(received[0]).toMatchObject({ path: '/v1/traces', contentType: 'application/x-protobuf' });
    // Protobuf keeps strings as they are: the service's name and the span names are in the payload.
    const payload = Buffer.concat(received.map((r) => r.body)).toString('latin1');
    expect(payload).toContain(SERVICE_NAME);
    expect(payload).toContain('GET /users/external/:file');
    expect(payload).toContain('query RestUserByExternalId');
  });
});
