import type { AppDeps } from '../deps.ts';
import type { DeliveriesRepository } from './deliveries-repository.ts';
import type { EndpointsRepository } from './endpoints-repository.ts';
import type { ReplaysRepository } from './replays-repository.ts';

/** What the webhook handlers work with; built once by webhookRoutes. */
export interface WebhookContext {
  endpoints: EndpointsRepository;
  deliveries: DeliveriesRepository;
  replays: ReplaysRepository;
  /** The audit log's database (audit/): replays are audited. */
  db: AppDeps['db'];
  /** Seals endpoint secrets and custom headers (secret-box.ts, endpoint-headers.ts). */
  secretKey: Buffer;
  /** --webhook-allow-private: endpoint URLs may name loopback and private addresses. */
  allowPrivate: boolean;
  now: () => Date;
  /** --webhook-disable-after: an endpoint's health shows when it would be disabled. */
  disableAfterMs: number;
  /** Base of console links in envelopes (--public-url): an attempt's request is rebuilt with it. */
  consoleBaseUrl: () => string;
  /** Writes a test event's signal with its one delivery. */
  outbox: AppDeps['outbox'];
  /** Tells the worker a delivery is due now. */
  wakeDeliveries: () => void;
  /** Tells the replay feeder a replay was started. */
  wakeReplays: () => void;
}
