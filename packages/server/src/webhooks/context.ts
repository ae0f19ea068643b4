import type { Db, SignalTable } from '../db/index.ts';
import type { MasterKey } from '../kernel/master-key.ts';
import type { DeliveriesRepository } from './deliveries-repository.ts';
import type { EndpointsRepository } from './endpoints-repository.ts';
import type { ReplaysRepository } from './replays-repository.ts';

/** Writes a signal with its deliveries (signals/outbox.ts), to one endpoint only when named. */
export interface SignalWriter {
  write(signal: SignalTable, onlyEndpointId?: string): Promise<string[]>;
}

/** What the webhook routes need of the server (app.ts hands them AppDeps, which has all of it). */
export interface WebhooksDeps {
  db: Db;
  now: () => Date;
  /** Base of console links in envelopes (--public-url). */
  publicUrl: () => string;
  /** The key sealing endpoint secrets is derived from it. */
  masterKey: MasterKey;
  outbox: SignalWriter;
  wakeDeliveries: () => void;
  webhooks: { wakeReplays: () => void };
  config: { webhookAllowPrivate: boolean; webhook: { disableAfterMs: number } };
}

/** What the webhook handlers work with; built once by webhookRoutes. */
export interface WebhookContext {
  endpoints: EndpointsRepository;
  deliveries: DeliveriesRepository;
  replays: ReplaysRepository;
  /** The audit log's database (audit/): replays are audited. */
  db: Db;
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
  outbox: SignalWriter;
  /** Tells the worker a delivery is due now. */
  wakeDeliveries: () => void;
  /** Tells the replay feeder a replay was started. */
  wakeReplays: () => void;
}
