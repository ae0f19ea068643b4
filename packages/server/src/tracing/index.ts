// Tracing (issue 14, item 7): OpenTelemetry spans exported over OTLP, off by default,
// configured by the standard OTEL_* variables (settings.ts: tracingConfig). A span for each
// signal ingest and one per delivery attempt; the agent's traceparent on POST /v1/signals is
// the ingest span's parent and the deliveries' traceparent comes from the attempt span.
// The SDK is imported only when tracing is on: the default server loads none of it.

import type { TracingConfig } from './settings.ts';
import type { Tracer } from './tracer.ts';

export { TRACE_SAMPLERS, type TraceSampler, type TracingConfig } from './settings.ts';

export { NO_TRACER, type SpanHandle, type Tracer, validTraceparent } from './tracer.ts';

/** The OpenTelemetry tracer for `config`, its SDK loaded now. */
export async function startTracing(config: TracingConfig): Promise<Tracer> {
  const { openTelemetryTracer } = await import('./otel.ts');
  return openTelemetryTracer(config);
}
