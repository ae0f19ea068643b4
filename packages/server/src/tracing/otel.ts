// The OpenTelemetry SDK behind the Tracer interface (tracer.ts), imported only when tracing is
// on (index.ts: startTracing). Spans go through a batch processor to an OTLP/HTTP exporter
// (protobuf or JSON), every setting from the TracingConfig that config.ts read from the
// standard OTEL_* variables. No global provider, context manager or propagator is
// registered: parents come explicitly from a traceparent (W3C trace context), so nothing else
// in the process is instrumented behind the server's back.

import { type Context, ROOT_CONTEXT, type Span, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtobufExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { SERVER_VERSION } from '../kernel/version.ts';
import type { TracingConfig } from './settings.ts';
import type { SpanAttributes, SpanHandle, SpanOptions, Tracer } from './tracer.ts';

const KINDS = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL } as const;
const w3c = new W3CTraceContextPropagator();
const getter = { get: (carrier: Record<string, string>, key: string) => carrier[key], keys: Object.keys };
const setter = {
  set: (carrier: Record<string, string>, key: string, value: string) => {
    carrier[key] = value;
  },
};

function sampler(config: TracingConfig): Sampler {
  const ratio = new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio;
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function parentContext(traceparent: string | undefined): Context {
  return traceparent === undefined ? ROOT_CONTEXT : w3c.extract(ROOT_CONTEXT, { traceparent }, getter);
}

function traceparentOf(span: Span): string | undefined {
  const carrier: Record<string, string> = {};
  w3c.inject(trace.setSpan(ROOT_CONTEXT, span), carrier, setter);
  return carrier.traceparent;
}

class OtelSpan implements SpanHandle {
  readonly traceparent: string | undefined;
  readonly #span: Span;
  constructor(span: Span) {
    this.#span = span;
    this.traceparent = traceparentOf(span);
  }
  setAttributes(attributes: SpanAttributes): void {
    this.#span.setAttributes(attributes);
  }
  fail(message: string): void {
    this.#span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  end(): void {
    this.#span.end();
  }
}

export function openTelemetryTracer(config: TracingConfig): Tracer {
  const exporterOptions = { url: config.url, headers: config.headers, timeoutMillis: config.timeoutMs };
  const exporter =
    config.protocol === 'http/json' ? new JsonExporter(exporterOptions) : new ProtobufExporter(exporterOptions);
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      ...config.resourceAttributes,
      'service.name': config.serviceName,
      'service.version': SERVER_VERSION,
    }),
    sampler: sampler(config),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter,
        scheduledDelayMillis: config.batch.scheduleDelayMs,
        maxQueueSize: config.batch.maxQueueSize,
        maxExportBatchSize: Math.min(config.batch.maxExportBatchSize, config.batch.maxQueueSize),
        exportTimeoutMillis: config.batch.exportTimeoutMs,
      }),
    ],
  });
  const tracer = provider.getTracer('guard-server', SERVER_VERSION);
  return {
    enabled: true,
    startSpan(name: string, options: SpanOptions): SpanHandle {
      const span = tracer.startSpan(
        name,
        { kind: KINDS[options.kind], attributes: options.attributes },
        parentContext(options.parent),
      );
      return new OtelSpan(span);
    },
    async shutdown() {
      await provider.shutdown();
    },
  };
}
