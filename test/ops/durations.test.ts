// The request-duration histogram is the service's own (src/overrides/durations.ts,
// cheaper per request than prom-client's observe): /metrics must read exactly
// as prom-client's Histogram gives it for the same observations, text and JSON.
import fc from 'fast-check';
import { Histogram, Registry } from 'prom-client';
import { RequestDurations } from '../../src/overrides/durations';

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const NAME = 'http_request_duration_seconds';
const HELP = 'HTTP request latency by route, GraphQL operation and status (its _count is the request count)';

test('the same text and JSON as prom-client for any observations, in any order', async () => {
  const observation = fc.record({
    method: fc.constantFrom('GET', 'POST', 'DELETE', 'OPTIONS'),
    route: fc.constantFrom('/graphql', '/users/external/:file', 'unmatched', '/session.json'),
    operation: fc.constantFrom('', 'query userByExternalId', 'mutation deleteMessages', 'query a,b,c,…', 'q "quoted" \\ back\nslash'),
    status: fc.constantFrom(200, 201, 400, 401, 404, 500, 503),
    seconds: fc.oneof(fc.double({ min: 0, max: 10, noNaN: true }), fc.constantFrom(...BUCKETS, 0, 7.5)),
  });
  await fc.assert(
    fc.asyncProperty(fc.array(observation, { maxLength: 60 }), async (observations) => {
      const ours = new Registry();
      const theirs = new Registry();
      const durations = new RequestDurations(NAME, HELP, BUCKETS, ours);
      const histogram = new Histogram({
        name: NAME,
        help: HELP,
        labelNames: ['method', 'route', 'operation', 'status'] as const,
        buckets: BUCKETS,
        registers: [theirs],
      });
      for (const { method, route, operation, status, seconds } of observations) {
        durations.observe(method, route, operation, status, seconds);
        histogram.labels({ method, route, operation, status: String(status) }).observe(seconds);
      }
      expect(await ours.metrics()).toBe(await theirs.metrics());
      expect(JSON.stringify(await ours.getMetricsAsJSON())).toBe(JSON.stringify(await theirs.getMetricsAsJSON()));
    }),
    { numRuns: 300 },
  );
});

test('reset empties it, as prom-client resetMetrics does', async () => {
  const registry = new Registry();
  const durations = new RequestDurations(NAME, HELP, BUCKETS, registry);
  durations.observe('GET', '/healthz', '', 200, 0.002);
  registry.resetMetrics();
  expect(await registry.metrics()).toBe(`# HELP ${NAME} ${HELP}\n# TYPE ${NAME} histogram\n`);
});
