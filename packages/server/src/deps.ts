import type { ArchivePool } from './analysis/index.ts';
import type { CommandHub } from './bundle-requests/index.ts';
import type { ServerConfig } from './config.ts';
import type { Db } from './db/index.ts';
import type { DetectionPolicies } from './detection/index.ts';
import type { MasterKey } from './kernel/master-key.ts';
import type { ObjectStore } from './objects/index.ts';
import type { SignalOutbox } from './signals/index.ts';
import type { Tracer } from './tracing/index.ts';
import type { WebhookMetrics } from './webhooks/index.ts';

/**
 * Everything server.ts opens, in one bag that app.ts hands to each capability: no module
 * reaches for globals, env or the clock itself. This is wiring: a capability never imports it
 * (layout.test.ts) but declares the narrow deps it reads (AgentsDeps, WebhooksDeps, …), which
 * this satisfies structurally.
 */
export interface AppDeps {
  config: ServerConfig;
  db: Db;
  store: ObjectStore;
  masterKey: MasterKey;
  now: () => Date;
  /** Base URL of presigned URLs: --public-url, or the address listened on. */
  publicUrl: () => string;
  /** Delivery machinery: the worker claims due deliveries, metrics count them; the feeder re-queues replays. */
  webhooks: { wake: () => void; metrics: WebhookMetrics; wakeReplays: () => void };
  /** Writes signals with their deliveries (group commit). */
  outbox: SignalOutbox;
  /** Wakes the held command polls of `guard-agent daemon` when a bundle request is created. */
  commands: CommandHub;
  /** Tenants' detection policies (cached briefly): ingest applies them, the agent channel hands them out. */
  detection: DetectionPolicies;
  /**
   * Bundle analysis: wake() when a bundle was registered (its analysis is queued with it);
   * archives runs untrusted archive work (the analysis, evidence lines) in worker threads.
   */
  insights: { wake: () => void; archives: ArchivePool };
  /** OpenTelemetry spans (tracing/): the no-op tracer unless OTEL_* turned tracing on. */
  tracer: Tracer;
}
