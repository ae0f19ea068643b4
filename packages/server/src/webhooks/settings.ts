// Webhook delivery's settings (docs/guard-server.md, "Configuration"): whether endpoints may
// resolve to private addresses, how long the delivery log is kept, the retry schedule and the
// worker's concurrency, timeout, lease and poll. config.ts reads them through webhookSettings.

import { ConfigError, type SettingRow, type SettingsReader } from '../kernel/settings.ts';

export interface WebhookSettings {
  /** Endpoints may resolve to loopback and private addresses (tests and closed networks). */
  webhookAllowPrivate: boolean;
  /**
   * How long each tenant's delivery log (attempts, completed deliveries) is kept
   * (retention.ts): `defaultDays` for a tenant that chose nothing, and at most `maxDays`
   * whatever it chose.
   */
  deliveryRetention: { defaultDays: number; maxDays: number };
  webhook: {
    /** Wait before each attempt, ms; the first entry is the first try. */
    retrySchedule: number[];
    concurrency: number;
    perEndpointConcurrency: number;
    timeoutMs: number;
    disableAfterMs: number;
    leaseMs: number;
    pollMs: number;
    /** Deliveries a second a replay re-queues, at most (per replay, so per endpoint). */
    replayRate: number;
    /** Every delivery (and OAuth2 token request) leaves through this HTTP CONNECT proxy; undefined: directly. */
    proxy: WebhookProxy | undefined;
  };
}

/** An HTTP proxy that deliveries tunnel through with CONNECT (http-client.ts). */
export interface WebhookProxy {
  host: string;
  port: number;
  /** `Proxy-Authorization` for a proxy URL with user:password. */
  authorization: string | undefined;
  /** The proxy's URL without its password, for logs and /readyz. */
  shown: string;
}

/** Webhook delivery's rows of the settings table. */
export const WEBHOOK_SETTINGS = [
  {
    key: 'webhookAllowPrivate',
    flag: 'webhook-allow-private',
    env: 'GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE',
    file: 'webhook_allow_private',
    default: 'false',
    boolean: true,
  },
  {
    key: 'deliveryRetentionDays',
    flag: 'delivery-retention-days',
    env: 'GUARD_SERVER_DELIVERY_RETENTION_DAYS',
    file: 'delivery_retention_days',
    default: '30',
  },
  {
    key: 'deliveryRetentionMaxDays',
    flag: 'delivery-retention-max-days',
    env: 'GUARD_SERVER_DELIVERY_RETENTION_MAX_DAYS',
    file: 'delivery_retention_max_days',
    default: '90',
  },
  {
    key: 'webhookRetrySchedule',
    flag: 'webhook-retry-schedule',
    env: 'GUARD_SERVER_WEBHOOK_RETRY_SCHEDULE',
    file: 'webhook_retry_schedule',
    default: '0,5s,5m,30m,2h,5h,10h,10h',
  },
  {
    key: 'webhookConcurrency',
    flag: 'webhook-concurrency',
    env: 'GUARD_SERVER_WEBHOOK_CONCURRENCY',
    file: 'webhook_concurrency',
    default: '256',
  },
  {
    key: 'webhookPerEndpointConcurrency',
    flag: 'webhook-endpoint-concurrency',
    env: 'GUARD_SERVER_WEBHOOK_ENDPOINT_CONCURRENCY',
    file: 'webhook_endpoint_concurrency',
    default: '16',
  },
  {
    key: 'webhookTimeoutMs',
    flag: 'webhook-timeout-ms',
    env: 'GUARD_SERVER_WEBHOOK_TIMEOUT_MS',
    file: 'webhook_timeout_ms',
    default: '15000',
  },
  {
    key: 'webhookDisableAfterSeconds',
    flag: 'webhook-disable-after',
    env: 'GUARD_SERVER_WEBHOOK_DISABLE_AFTER',
    file: 'webhook_disable_after_seconds',
    default: String(5 * 24 * 3600),
  },
  {
    key: 'webhookLeaseMs',
    flag: 'webhook-lease-ms',
    env: 'GUARD_SERVER_WEBHOOK_LEASE_MS',
    file: 'webhook_lease_ms',
    default: '60000',
  },
  {
    key: 'webhookPollMs',
    flag: 'webhook-poll-ms',
    env: 'GUARD_SERVER_WEBHOOK_POLL_MS',
    file: 'webhook_poll_ms',
    default: '250',
  },
  {
    key: 'webhookReplayRate',
    flag: 'webhook-replay-rate',
    env: 'GUARD_SERVER_WEBHOOK_REPLAY_RATE',
    file: 'webhook_replay_rate',
    default: '100',
  },
  {
    key: 'webhookProxy',
    flag: 'webhook-proxy',
    env: 'GUARD_SERVER_WEBHOOK_PROXY',
    file: 'webhook_proxy',
    default: '',
  },
] as const satisfies readonly SettingRow[];

/**
 * The delivery lease must outlast an attempt: the request (at most the delivery timeout) and
 * the write of its outcome. A lease that runs out first lets another claim send the same
 * delivery while the first attempt is still running.
 */
export const LEASE_MARGIN_MS = 5_000;

/**
 * A retry schedule setting, "0,5s,5m,30m,2h" → ms (retry-schedule.ts applies it); for
 * tests and operators who need another schedule.
 */
export function parseSchedule(text: string): number[] {
  const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return text.split(',').map((part) => {
    const m = /^\s*(\d+)(ms|s|m|h)?\s*$/.exec(part);
    if (!m) throw new Error(`bad retry schedule entry ${JSON.stringify(part)} (use e.g. 0,5s,5m,30m,2h)`);
    return Number(m[1]) * units[m[2] ?? 'ms'];
  });
}

function schedule(text: string): number[] {
  try {
    const ms = parseSchedule(text);
    if (ms.length === 0 || ms.length > 50) throw new Error('give 1 to 50 entries');
    return ms;
  } catch (error) {
    throw new ConfigError(`webhook retry schedule: ${(error as Error).message}`);
  }
}

/** `http://[user:password@]host:port`: the proxy deliveries tunnel through, or undefined. */
function proxySetting(r: SettingsReader): WebhookProxy | undefined {
  const text = r.text('webhookProxy').trim();
  if (text === '') return undefined;
  const refuse = (why: string): never => {
    throw new ConfigError(`${r.named('webhookProxy')} ${why}`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse(`is not a URL: give http://host:port`);
  }
  if (url.protocol !== 'http:')
    refuse(`must be http://host:port (the tunnel carries TLS end to end; ${url.protocol} proxies are not supported)`);
  if (url.pathname !== '/' || url.search || url.hash) refuse('must be http://host:port, without a path or query');
  const port = url.port === '' ? 80 : Number(url.port);
  const user = decodeURIComponent(url.username);
  const authorization = url.username
    ? `Basic ${Buffer.from(`${user}:${decodeURIComponent(url.password)}`, 'utf8').toString('base64')}`
    : undefined;
  return {
    host: url.hostname.replace(/^\[|\]$/g, ''),
    port,
    authorization,
    shown: `http://${url.username ? `${url.username}:***@` : ''}${url.host}`,
  };
}

/** Webhook delivery's settings, each checked alone and against the others. */
export function webhookSettings(r: SettingsReader): WebhookSettings {
  const settings: WebhookSettings = {
    webhookAllowPrivate: r.bool('webhookAllowPrivate'),
    deliveryRetention: {
      defaultDays: r.integer('deliveryRetentionDays', 1, 36_500),
      maxDays: r.integer('deliveryRetentionMaxDays', 1, 36_500),
    },
    webhook: {
      retrySchedule: schedule(r.text('webhookRetrySchedule')),
      concurrency: r.integer('webhookConcurrency', 1),
      perEndpointConcurrency: r.integer('webhookPerEndpointConcurrency', 1),
      timeoutMs: r.integer('webhookTimeoutMs', 100, 3_600_000),
      disableAfterMs: r.integer('webhookDisableAfterSeconds', 1) * 1000,
      leaseMs: r.integer('webhookLeaseMs', 1000, 86_400_000),
      pollMs: r.integer('webhookPollMs', 10, 3_600_000),
      replayRate: r.integer('webhookReplayRate', 1, 100_000),
      proxy: proxySetting(r),
    },
  };
  const w = settings.webhook;
  if (w.leaseMs < w.timeoutMs + LEASE_MARGIN_MS)
    throw new ConfigError(
      `${r.named('webhookLeaseMs')} is ${w.leaseMs} ms, but must be at least ${r.named('webhookTimeoutMs')} (${w.timeoutMs} ms) plus ${LEASE_MARGIN_MS / 1000} s: a lease that ends before its attempt lets a second attempt of the same delivery run at once`,
    );
  const retention = settings.deliveryRetention;
  if (retention.defaultDays > retention.maxDays)
    throw new ConfigError(
      `${r.named('deliveryRetentionDays')} is ${retention.defaultDays} days, more than ${r.named('deliveryRetentionMaxDays')} (${retention.maxDays}): the default retention must lie within the maximum a tenant may choose`,
    );
  return settings;
}
