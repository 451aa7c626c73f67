// Whether tracing is on, for the code that runs on every request: this module
// needs only the OpenTelemetry API, so that a service with tracing off never
// loads the SDK, its exporter and its instrumentations (src/tracing/index.ts,
// loaded by main only when OTEL_EXPORTER_OTLP_ENDPOINT is set; ~14 MB).
import type { Tracer } from '@opentelemetry/api';

let tracer: Tracer | undefined;

/** The service's tracer while tracing is on; undefined when it is off. */
export function activeTracer(): Tracer | undefined {
  return tracer;
}

/** Set by startTracing, cleared by its shutdown. */
export function setActiveTracer(value: Tracer | undefined): void {
  tracer = value;
}
