import { ConfigError } from '../kernel/settings.ts';

/**
 * OpenTelemetry tracing (OTLP over HTTP), as the standard OTEL_* environment variables set it.
 * Read once by config.ts (tracingConfig below); the SDK is handed these values and loaded only when
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

/**
 * Tracing is off unless OTEL_TRACES_EXPORTER is `otlp`, or it is unset and an OTLP endpoint is
 * (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT); OTEL_SDK_DISABLED=true
 * turns it off whatever else is set. Only OTLP over HTTP (protobuf, the default, or JSON).
 */
export function tracingConfig(env: NodeJS.ProcessEnv): TracingConfig | undefined {
  const get = (name: string) => {
    const v = env[name]?.trim();
    return v === '' ? undefined : v;
  };
  const fail = (name: string, why: string): never => {
    throw new ConfigError(`${name}: ${why}, got "${env[name]}"`);
  };
  if (get('OTEL_SDK_DISABLED')?.toLowerCase() === 'true') return undefined;
  const exporters = (get('OTEL_TRACES_EXPORTER') ?? '').split(',').map((e) => e.trim().toLowerCase());
  const endpoint = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT') ?? get('OTEL_EXPORTER_OTLP_ENDPOINT');
  for (const e of exporters)
    if (!['', 'otlp', 'none'].includes(e))
      fail('OTEL_TRACES_EXPORTER', 'guard-server exports traces over OTLP only: give otlp, or none');
  const on = exporters.includes('otlp') || (exporters.every((e) => e === '') && endpoint !== undefined);
  if (!on) return undefined;

  const protocol = get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ?? get('OTEL_EXPORTER_OTLP_PROTOCOL') ?? 'http/protobuf';
  if (protocol !== 'http/protobuf' && protocol !== 'http/json')
    fail(
      get('OTEL_EXPORTER_OTLP_TRACES_PROTOCOL') ? 'OTEL_EXPORTER_OTLP_TRACES_PROTOCOL' : 'OTEL_EXPORTER_OTLP_PROTOCOL',
      'guard-server exports over HTTP: give http/protobuf (the default) or http/json',
    );
  const specific = get('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
  const base = get('OTEL_EXPORTER_OTLP_ENDPOINT') ?? 'http://localhost:4318';
  const url = specific ?? `${base.replace(/\/+$/, '')}/v1/traces`;
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    fail(specific ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT', 'must be an http(s) URL');
  }
  const pairs = (name: string): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const part of (get(name) ?? '').split(',')) {
      if (part.trim() === '') continue;
      const eq = part.indexOf('=');
      if (eq <= 0) fail(name, 'must be a comma-separated list of key=value');
      try {
        out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim());
      } catch {
        fail(name, 'holds a malformed percent-encoding');
      }
    }
    return out;
  };
  const number = (name: string, fallback: number, min: number, max: number): number => {
    const v = get(name);
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isFinite(n) || n < min || n > max) fail(name, `must be a number from ${min} to ${max}`);
    return n;
  };
  const sampler = (get('OTEL_TRACES_SAMPLER') ?? 'parentbased_always_on').toLowerCase();
  if (!(TRACE_SAMPLERS as readonly string[]).includes(sampler))
    fail('OTEL_TRACES_SAMPLER', `must be one of ${TRACE_SAMPLERS.join(', ')}`);
  const resourceAttributes = pairs('OTEL_RESOURCE_ATTRIBUTES');
  const timeoutMs = number(
    get('OTEL_EXPORTER_OTLP_TRACES_TIMEOUT') ? 'OTEL_EXPORTER_OTLP_TRACES_TIMEOUT' : 'OTEL_EXPORTER_OTLP_TIMEOUT',
    10_000,
    1,
    600_000,
  );
  return {
    protocol: protocol as TracingConfig['protocol'],
    url,
    headers: { ...pairs('OTEL_EXPORTER_OTLP_HEADERS'), ...pairs('OTEL_EXPORTER_OTLP_TRACES_HEADERS') },
    timeoutMs,
    serviceName: get('OTEL_SERVICE_NAME') ?? resourceAttributes['service.name'] ?? 'guard-server',
    resourceAttributes,
    sampler: sampler as TraceSampler,
    samplerRatio: sampler.endsWith('traceidratio') ? number('OTEL_TRACES_SAMPLER_ARG', 1, 0, 1) : 1,
    batch: {
      scheduleDelayMs: number('OTEL_BSP_SCHEDULE_DELAY', 5000, 0, 3_600_000),
      maxQueueSize: number('OTEL_BSP_MAX_QUEUE_SIZE', 2048, 1, 1_000_000),
      maxExportBatchSize: number('OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512, 1, 1_000_000),
      exportTimeoutMs: number('OTEL_BSP_EXPORT_TIMEOUT', 30_000, 1, 600_000),
    },
  };
}
