// What the rest of the server knows of tracing: a Tracer that starts spans from a W3C
// traceparent and hands out the traceparent of each span, so that it can be stored with a
// signal and sent with its deliveries. No OpenTelemetry import here: with tracing off (the
// default) the SDK is never loaded (otel.ts, imported only by startTracing), and the no-op
// tracer passes a traceparent through unchanged, so a receiver still sees the agent's trace.

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  kind: 'server' | 'client' | 'internal';
  /** The W3C traceparent of the parent span, from another process; undefined: a new trace. */
  parent: string | undefined;
  attributes?: SpanAttributes;
}

export interface SpanHandle {
  /** The traceparent to propagate: this span's; with tracing off, the parent's (undefined: none). */
  readonly traceparent: string | undefined;
  setAttributes(attributes: SpanAttributes): void;
  /** Marks the span failed (status ERROR) with `message`. */
  fail(message: string): void;
  end(): void;
}

export interface Tracer {
  readonly enabled: boolean;
  startSpan(name: string, options: SpanOptions): SpanHandle;
  /** Exports what is left and stops (server close). */
  shutdown(): Promise<void>;
}

/** W3C trace context, version 00: `00-<32 hex trace id>-<16 hex parent id>-<2 hex flags>`, ids not all zero. */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The traceparent header if it is a valid version-00 one, else undefined: an invalid one is
 * ignored, as the W3C recommendation says (a new trace starts).
 */
export function validTraceparent(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const v = value.trim().toLowerCase();
  return TRACEPARENT.test(v) ? v : undefined;
}

/** Tracing off: no spans, the parent passed through. */
export const NO_TRACER: Tracer = {
  enabled: false,
  startSpan: (_name, options) => ({
    traceparent: options.parent,
    setAttributes() {},
    fail() {},
    end() {},
  }),
  shutdown: async () => {},
};
