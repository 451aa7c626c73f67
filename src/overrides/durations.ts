// The request-duration histogram (http_request_duration_seconds), counted
// here and exposed through prom-client's registry in the form its Histogram
// gives. prom-client's observe() validates the labels and builds a string key
// from them on every call, even through a child kept per label set (1.2 µs
// against 42 ns counted here, in a micro-benchmark under load; BENCHMARKS.md,
// "Lookups and the GraphQL pipeline"); here each label set's counts are found
// through nested maps of the values themselves and incremented. test/ops/durations.test.ts checks
// that /metrics reads exactly as prom-client's Histogram would have it for the
// same observations.
import type { Registry } from 'prom-client';

type LabelNames = readonly ['method', 'route', 'operation', 'status'];

/** One label set's counts, as prom-client keeps them (`bucketValues` by upper bound, not cumulative). */
interface Series {
  labels: Record<LabelNames[number], string>;
  buckets: number[];
  sum: number;
  count: number;
}

interface Value {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
  /** As prom-client's (no exemplars here): null on buckets, undefined on _sum and _count. */
  exemplar: null | undefined;
}

export class RequestDurations {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  private readonly series: Series[] = [];
  /** route → operation → status → method → series. */
  private readonly index = new Map<string, Map<string, Map<number, Map<string, Series>>>>();

  constructor(
    readonly name: string,
    readonly help: string,
    private readonly upperBounds: readonly number[],
    registry: Registry,
  ) {
    registry.registerMetric(this as never);
  }

  /** prom-client's observe(labels, seconds) for this histogram's four labels, status as a number. */
  observe(method: string, route: string, operation: string, status: number, seconds: number): void {
    if (!Number.isFinite(seconds)) throw new TypeError(`Value is not a valid number: ${seconds}`);
    let byOperation = this.index.get(route);
    if (byOperation === undefined) this.index.set(route, (byOperation = new Map<string, Map<number, Map<string, Series>>>()));
    let byStatus = byOperation.get(operation);
    if (byStatus === undefined) byOperation.set(operation, (byStatus = new Map<number, Map<string, Series>>()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map<string, Series>()));
    let series = byMethod.get(method);
    if (series === undefined) {
      // The label order of the `labels({...})` call this replaces.
      series = { labels: { method, route, operation, status: String(status) }, buckets: this.upperBounds.map(() => 0), sum: 0, count: 0 };
      byMethod.set(method, series);
      this.series.push(series);
    }
    series.sum += seconds;
    series.count += 1;
    const bounds = this.upperBounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= bounds[i]!) {
        series.buckets[i]! += 1;
        break;
      }
    }
  }

  /** What prom-client's Histogram#getForPromString gives the registry. */
  async getForPromString(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }> {
    const bucketName = `${this.name}_bucket`;
    const values: Value[] = [];
    for (const series of this.series) {
      let cumulative = 0;
      this.upperBounds.forEach((upperBound, i) => {
        cumulative += series.buckets[i]!;
        values.push({ labels: { le: upperBound }, sharedLabels: series.labels, value: cumulative, metricName: bucketName, exemplar: null });
      });
      values.push(
        { labels: { le: '+Inf' }, sharedLabels: series.labels, value: series.count, metricName: bucketName, exemplar: null },
        { labels: {}, sharedLabels: series.labels, value: series.sum, metricName: `${this.name}_sum`, exemplar: undefined },
        { labels: {}, sharedLabels: series.labels, value: series.count, metricName: `${this.name}_count`, exemplar: undefined },
      );
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** What prom-client's Histogram#get gives (getMetricsAsJSON): the shared labels folded into each value's. */
  async get(): Promise<{ name: string; help: string; type: string; values: Value[]; aggregator: string }> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } }));
    return data;
  }

  reset(): void {
    this.series.length = 0;
    this.index.clear();
  }
}
