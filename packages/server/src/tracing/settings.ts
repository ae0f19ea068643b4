/**
 * OpenTelemetry tracing (OTLP over HTTP), as the standard OTEL_* environment variables set it.
 * Read once by config.ts (tracingConfig); the SDK is handed these values and loaded only when
 * this is set.
 */
export interface TracingConfig {
  protocol: 'http/protobuf' | 'http/json';
  /** Where spans are POSTed: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, or OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  url: string;
  headers: Record<string, string>;
  timeoutMs: number;
  serviceName: string;
  resourceAttributes: Record<string, string>;
  sampler: TraceSampler;
  /** Ratio of the *traceidratio samplers (OTEL_TRACES_SAMPLER_ARG), 0 … 1. */
  samplerRatio: number;
  batch: { scheduleDelayMs: number; maxQueueSize: number; maxExportBatchSize: number; exportTimeoutMs: number };
}

export const TRACE_SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];
