// One autocannon run, measured by the harness itself: every response's latency
// (autocannon's own histogram keeps whole milliseconds, too coarse for
// sub-millisecond lookups), the time from the first request to the last
// response, status codes, and the target's resident memory while it runs.
import autocannon from 'autocannon';
import { percentileOfSorted } from '../scripts/lib/percentile';
import { cpuTimeMs, memoryOf } from './processes';

export interface LoadSpec {
  url: string;
  /** Target process, for its resident memory during the run. */
  pid: number;
  method?: 'GET' | 'POST' | 'DELETE';
  headers?: Record<string, string>;
  connections: number;
  pipelining: number;
  /** Seconds; ignored when `amount` is set. */
  duration?: number;
  /** A fixed number of requests. */
  amount?: number;
  /** Requests per second over all connections (the soak). */
  overallRate?: number;
  /** Builds each request (path, body). */
  setupRequest?: (request: autocannon.Request) => autocannon.Request;
  /** Sees each response's body. */
  onResponse?: (status: number, body: string) => void;
  /** Memory samples every this many ms (default 250); `onSample` sees each. */
  sampleMs?: number;
  onSample?: (elapsedS: number, rss: number) => void;
}

export interface LoadResult {
  /** Responses received. */
  requests: number;
  /** Requests sent: the responses plus those still in flight when a timed run ended. */
  sent: number;
  /** From the start of the run to its last response. */
  seconds: number;
  reqPerSec: number;
  /** Milliseconds. */
  p50: number;
  p99: number;
  mean: number;
  max: number;
  non2xx: number;
  /** Connection errors and timeouts. */
  errors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  /** Highest resident set sampled during the run, bytes. */
  peakRss: number | null;
  /** CPU time (user + system) the target used during the run, ms (from /proc; null if unreadable). */
  cpuMs: number | null;
}

const round = (n: number, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export async function fire(spec: LoadSpec): Promise<LoadResult> {
  const latencies = new Latencies();
  const statusCounts: Record<string, number> = {};
  let non2xx = 0;
  let lastResponse = 0;

  const started = performance.now();
  const memory = sampleMemory(spec, started);
  const cpuBefore = cpuTimeMs(spec.pid);
  const result = await run(spec, (statusCode, responseTime) => {
    latencies.add(responseTime);
    lastResponse = performance.now();
    statusCounts[statusCode] = (statusCounts[statusCode] ?? 0) + 1;
    if (statusCode < 200 || statusCode >= 300) non2xx++;
  }).finally(() => memory.stop());
  const cpuAfter = cpuTimeMs(spec.pid);

  const count = latencies.count;
  const sorted = latencies.sorted();
  let sum = 0;
  for (const value of sorted) sum += value;
  const seconds = count > 0 ? (lastResponse - started) / 1000 : 0;
  return {
    requests: count,
    sent: Math.max(count, (result.requests as { sent?: number }).sent ?? count),
    seconds: round(seconds, 3),
    reqPerSec: count > 0 ? round(count / seconds, 1) : 0,
    p50: round(percentileOfSorted(sorted, 50), 3),
    p99: round(percentileOfSorted(sorted, 99), 3),
    mean: round(count > 0 ? sum / count : NaN, 3),
    max: round(count > 0 ? sorted[count - 1]! : NaN, 3),
    non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCounts,
    peakRss: memory.peakRss(),
    cpuMs: cpuBefore === null || cpuAfter === null ? null : Math.round((cpuAfter - cpuBefore) * 10) / 10,
  };
}

/** Every response's latency, ms, in an array that doubles when full. */
class Latencies {
  private values = new Float64Array(1 << 16);
  count = 0;

  add(ms: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }

  /** The latencies recorded, sorted in place. */
  sorted(): Float64Array {
    return this.values.subarray(0, this.count).sort();
  }
}

/** Samples the target's resident memory now and every `spec.sampleMs` until stopped (and once more then). */
function sampleMemory(spec: LoadSpec, started: number): { stop(): void; peakRss(): number | null } {
  let peakRss: number | null = null;
  const sample = () => {
    const memory = memoryOf(spec.pid);
    if (!memory) return;
    peakRss = Math.max(peakRss ?? 0, memory.rss);
    spec.onSample?.((performance.now() - started) / 1000, memory.rss);
  };
  sample();
  const sampler = setInterval(sample, spec.sampleMs ?? 250);
  return {
    stop() {
      clearInterval(sampler);
      sample();
    },
    peakRss: () => peakRss,
  };
}

/** One autocannon run of `spec`; `onResponse` sees each response's status and latency (ms). */
function run(spec: LoadSpec, onResponse: (statusCode: number, responseTime: number) => void): Promise<autocannon.Result> {
  const requests: autocannon.Request[] | undefined =
    spec.setupRequest || spec.onResponse
      ? [
          {
            ...(spec.setupRequest ? { setupRequest: (req: autocannon.Request) => spec.setupRequest!(req) } : {}),
            ...(spec.onResponse ? { onResponse: (status: number, body: string) => spec.onResponse!(status, body) } : {}),
          },
        ]
      : undefined;
  const connections = spec.amount !== undefined ? Math.min(spec.connections, spec.amount) : spec.connections;
  return new Promise<autocannon.Result>((resolve, reject) => {
    const instance = autocannon(
      {
        url: spec.url,
        method: spec.method ?? 'GET',
        headers: spec.headers ?? {},
        connections,
        pipelining: spec.pipelining,
        timeout: 30,
        // Ends a run within 0.2 s of its end rather than at the next whole second.
        sampleInt: 200,
        ...(spec.amount !== undefined ? { amount: spec.amount } : { duration: spec.duration ?? 10 }),
        ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
        ...(requests ? { requests } : {}),
      },
      // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- autocannon's error, as it gives it
      (error, res) => (error ? reject(error) : resolve(res)),
    );
    instance.on('response', (_client: unknown, statusCode: number, _bytes: number, responseTime: number) => onResponse(statusCode, responseTime));
  });
}
