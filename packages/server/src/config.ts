// guard-server configuration (DESIGN §8): command-line flags over GUARD_SERVER_* environment
// variables over an optional YAML file over defaults. Loaded once, validated, passed down.

import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_BUNDLE_BYTES } from '@guard/contract';
import { parse as parseYaml } from 'yaml';
import type { SessionSettings } from './auth/index.ts';
import type { DatabaseConfig } from './db/index.ts';
import type { HttpLimits } from './http-limits.ts';
import type { LogLevel } from './logger.ts';
import type { MetricsAddress } from './metrics-listener.ts';
import type { ObjectStoreSetting } from './objects/index.ts';
import { TRACE_SAMPLERS, type TraceSampler, type TracingConfig } from './tracing/index.ts';

// Each capability owns the type of its settings; this file reads them and composes them.
export type { DatabaseConfig } from './db/index.ts';
export type { TracingConfig } from './tracing/index.ts';

export interface ServerConfig {
  dataDir: string;
  database: DatabaseConfig;
  /**
   * serve on PostgreSQL applies pending migrations itself (under the migration lock) instead
   * of refusing to start; SQLite always migrates at start (one process owns it).
   */
  migrate: boolean;
  host: string;
  port: number;
  /**
   * Base of presigned URLs and console links, without a trailing slash; undefined means
   * "http://<the address actually listened on>" (resolved once the port is known).
   */
  publicUrl: string | undefined;
  webhookAllowPrivate: boolean;
  logLevel: LogLevel;
  maxBundleBytes: number;
  /** How often unregistered, expired uploads are collected and old deliveries pruned. */
  gcIntervalSeconds: number;
  /**
   * How long each tenant's delivery log (attempts, completed deliveries) is kept
   * (retention.ts): `defaultDays` for a tenant that chose nothing, and at most `maxDays`
   * whatever it chose.
   */
  deliveryRetention: { defaultDays: number; maxDays: number };
  /** Where /metrics is served; undefined: nowhere. `explicit`: configured, not the default. */
  metricsListen: MetricsAddress | undefined;
  /** Intake limits: timeouts of slow peers, concurrent PUTs, stored bytes per tenant. */
  limits: HttpLimits;
  /** Console sign-in (auth/): session lifetimes and the lifetime of a set-password link. */
  sessions: SessionSettings;
  /** A bundle request the agent has not taken by this long after its creation expires. */
  bundleRequestTtlMs: number;
  /** The built console (index.html, assets/); undefined: packages/console/dist of this checkout. */
  consoleDir: string | undefined;
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
  };
  /** Where bundles are kept: the embedded store under the data dir, or an S3-compatible bucket. */
  objectStore: ObjectStoreSetting;
  /** PEM files of the certificate chain and key guard-server serves HTTPS with; undefined: HTTP. */
  tls: { certPath: string; keyPath: string } | undefined;
  /** OpenTelemetry tracing, from the standard OTEL_* variables (tracingConfig); undefined: off. */
  tracing: TracingConfig | undefined;
}

/** One row per setting: the documented table in docs/guard-server.md mirrors it. */
export const SETTINGS = [
  { key: 'dataDir', flag: 'data-dir', env: 'GUARD_SERVER_DATA_DIR', file: 'data_dir', default: './data' },
  { key: 'database', flag: 'database', env: 'GUARD_SERVER_DATABASE', file: 'database', default: '' },
  {
    key: 'databasePoolSize',
    flag: 'database-pool-size',
    env: 'GUARD_SERVER_DATABASE_POOL_SIZE',
    file: 'database_pool_size',
    default: '10',
  },
  { key: 'migrate', flag: 'migrate', env: 'GUARD_SERVER_MIGRATE', file: 'migrate', default: 'false', boolean: true },
  { key: 'listen', flag: 'listen', env: 'GUARD_SERVER_LISTEN', file: 'listen', default: '127.0.0.1:8080' },
  { key: 'publicUrl', flag: 'public-url', env: 'GUARD_SERVER_PUBLIC_URL', file: 'public_url', default: '' },
  {
    key: 'webhookAllowPrivate',
    flag: 'webhook-allow-private',
    env: 'GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE',
    file: 'webhook_allow_private',
    default: 'false',
    boolean: true,
  },
  { key: 'logLevel', flag: 'log-level', env: 'GUARD_SERVER_LOG_LEVEL', file: 'log_level', default: 'info' },
  {
    key: 'maxBundleBytes',
    flag: 'max-bundle-bytes',
    env: 'GUARD_SERVER_MAX_BUNDLE_BYTES',
    file: 'max_bundle_bytes',
    default: String(DEFAULT_MAX_BUNDLE_BYTES),
  },
  {
    key: 'gcIntervalSeconds',
    flag: 'gc-interval',
    env: 'GUARD_SERVER_GC_INTERVAL',
    file: 'gc_interval_seconds',
    default: '60',
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
    key: 'metricsListen',
    flag: 'metrics-listen',
    env: 'GUARD_SERVER_METRICS_LISTEN',
    file: 'metrics_listen',
    default: '127.0.0.1:9464',
  },
  {
    key: 'headerTimeoutSeconds',
    flag: 'header-timeout',
    env: 'GUARD_SERVER_HEADER_TIMEOUT',
    file: 'header_timeout_seconds',
    default: '20',
  },
  {
    key: 'requestTimeoutSeconds',
    flag: 'request-timeout',
    env: 'GUARD_SERVER_REQUEST_TIMEOUT',
    file: 'request_timeout_seconds',
    default: '30',
  },
  {
    key: 'uploadIdleTimeoutSeconds',
    flag: 'upload-idle-timeout',
    env: 'GUARD_SERVER_UPLOAD_IDLE_TIMEOUT',
    file: 'upload_idle_timeout_seconds',
    default: '60',
  },
  {
    key: 'keepAliveTimeoutSeconds',
    flag: 'keep-alive-timeout',
    env: 'GUARD_SERVER_KEEP_ALIVE_TIMEOUT',
    file: 'keep_alive_timeout_seconds',
    default: '72',
  },
  { key: 'maxUploads', flag: 'max-uploads', env: 'GUARD_SERVER_MAX_UPLOADS', file: 'max_uploads', default: '32' },
  {
    key: 'maxUploadsPerTenant',
    flag: 'max-uploads-per-tenant',
    env: 'GUARD_SERVER_MAX_UPLOADS_PER_TENANT',
    file: 'max_uploads_per_tenant',
    default: '8',
  },
  {
    key: 'tenantQuotaBytes',
    flag: 'tenant-quota-bytes',
    env: 'GUARD_SERVER_TENANT_QUOTA_BYTES',
    file: 'tenant_quota_bytes',
    default: String(10 * 1024 ** 3),
  },
  {
    key: 'sessionIdleTimeoutSeconds',
    flag: 'session-idle-timeout',
    env: 'GUARD_SERVER_SESSION_IDLE_TIMEOUT',
    file: 'session_idle_timeout_seconds',
    default: '1800',
  },
  {
    key: 'sessionMaxAgeSeconds',
    flag: 'session-max-age',
    env: 'GUARD_SERVER_SESSION_MAX_AGE',
    file: 'session_max_age_seconds',
    default: '43200',
  },
  {
    key: 'passwordLinkTtlSeconds',
    flag: 'password-link-ttl',
    env: 'GUARD_SERVER_PASSWORD_LINK_TTL',
    file: 'password_link_ttl_seconds',
    default: '86400',
  },
  {
    key: 'bundleRequestTtlSeconds',
    flag: 'bundle-request-ttl',
    env: 'GUARD_SERVER_BUNDLE_REQUEST_TTL',
    file: 'bundle_request_ttl_seconds',
    default: '3600',
  },
  { key: 'consoleDir', flag: 'console-dir', env: 'GUARD_SERVER_CONSOLE_DIR', file: 'console_dir', default: '' },
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
    key: 'objectStore',
    flag: 'object-store',
    env: 'GUARD_SERVER_OBJECT_STORE',
    file: 'object_store',
    default: '',
  },
  { key: 'tlsCert', flag: 'tls-cert', env: 'GUARD_SERVER_TLS_CERT', file: 'tls_cert', default: '' },
  { key: 'tlsKey', flag: 'tls-key', env: 'GUARD_SERVER_TLS_KEY', file: 'tls_key', default: '' },
] as const;

export class ConfigError extends Error {}

/**
 * The delivery lease must outlast an attempt: the request (at most the delivery timeout) and
 * the write of its outcome. A lease that runs out first lets another claim send the same
 * delivery while the first attempt is still running.
 */
export const LEASE_MARGIN_MS = 5_000;

/** The names a config file may use: each setting's `file` key. */
const FILE_KEYS: ReadonlySet<string> = new Set(SETTINGS.map((s) => s.file));

/** The file key nearest to `key` (same words in another spelling, or a typo), if any is near. */
function nearestFileKey(key: string): string | undefined {
  const plain = (k: string) => k.toLowerCase().replace(/[-_.\s]/g, '');
  let best: { key: string; distance: number } | undefined;
  for (const known of FILE_KEYS) {
    const distance = plain(known) === plain(key) ? 0 : editDistance(plain(known), plain(key));
    if (!best || distance < best.distance) best = { key: known, distance };
  }
  return best && best.distance <= Math.max(1, Math.floor(key.length / 4)) ? best.key : undefined;
}

/** Levenshtein distance (short strings: the setting names). */
function editDistance(a: string, b: string): number {
  let row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const next = [i];
    for (let j = 1; j <= b.length; j++)
      next[j] = Math.min(row[j] + 1, next[j - 1] + 1, row[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    row = next;
  }
  return row[b.length];
}

/**
 * Reads the YAML config file: a mapping of known keys to scalar values. An unknown key is an
 * error naming it (a misspelt setting would otherwise be silently ignored), and so is a list
 * or a mapping where a setting takes one value.
 */
function readConfigFile(path: string): Record<string, string | number | boolean> {
  let doc: unknown;
  try {
    doc = parseYaml(readFileSync(path, 'utf8')) ?? {};
  } catch (error) {
    throw new ConfigError(`config file ${path}: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new ConfigError(`config file ${path}: must be a YAML mapping`);
  const file: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(doc)) {
    if (!FILE_KEYS.has(key)) {
      const near = nearestFileKey(key);
      throw new ConfigError(
        `config file ${path}: unknown key "${key}"${near ? ` (did you mean "${near}"?)` : ''}; the keys are listed in docs/guard-server.md`,
      );
    }
    if (value === null) continue; // `key:` with no value: as if absent
    if (!['string', 'number', 'boolean'].includes(typeof value))
      throw new ConfigError(`config file ${path}: ${key} must be a single value, not a list or a mapping`);
    file[key] = value as string | number | boolean;
  }
  return file;
}

/**
 * A retry schedule setting, "0,5s,5m,30m,2h" → ms (webhooks/retry-schedule.ts applies it); for
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

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/**
 * The whole vocabulary of guard-server's flags, checked token by token in our own words (every
 * command takes every setting). `commandAt`: where in argv the first positional (the command)
 * stands, or -1.
 */
export function parseServerArgs(argv: string[]): {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
  commandAt: number;
} {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string }> = {
    config: { type: 'string' },
    json: { type: 'boolean' },
    out: { type: 'string' },
    in: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
    version: { type: 'boolean', short: 'V' },
  };
  for (const s of SETTINGS) options[s.flag] = { type: 'boolean' in s ? 'boolean' : 'string' };
  // Parsed leniently, then checked token by token, so that every mistake gets our own words
  // (parseArgs' strict messages speak of its internals).
  const { values, positionals, tokens } = parseArgs({
    args: argv,
    options,
    allowPositionals: true,
    strict: false,
    tokens: true,
  });
  for (const t of tokens) {
    if (t.kind !== 'option') continue;
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    if (!spec) throw new ConfigError(`unknown option ${t.rawName}`);
    if (spec.type === 'boolean' && t.value !== undefined) throw new ConfigError(`${t.rawName} takes no value`);
    if (spec.type === 'string' && (t.value === undefined || (!t.inlineValue && /^-./.test(t.value))))
      throw new ConfigError(`${t.rawName} needs a value`);
  }
  const command = tokens.find((t) => t.kind === 'positional');
  return {
    values: values as Record<string, string | boolean | undefined>,
    positionals,
    commandAt: command ? command.index : -1,
  };
}

export function loadServerConfig(
  flags: Record<string, string | boolean | undefined>,
  env: NodeJS.ProcessEnv,
  cwd: string,
): ServerConfig {
  const configPath = (flags.config as string | undefined) ?? env.GUARD_SERVER_CONFIG;
  const file = configPath ? readConfigFile(resolve(cwd, configPath)) : {};
  const raw: Record<string, string> = {};
  for (const s of SETTINGS) {
    const v = flags[s.flag] ?? env[s.env] ?? file[s.file] ?? s.default;
    raw[s.key] = String(v);
  }
  const listen = /^(.+):(\d{1,5})$/.exec(raw.listen);
  if (!listen || Number(listen[2]) > 65535) throw new ConfigError(`listen must be HOST:PORT, got ${raw.listen}`);
  const host = listen[1].replace(/^\[(.*)\]$/, '$1');
  const port = Number(listen[2]);
  const bool = (key: string): boolean => {
    if (!['true', 'false', '1', '0'].includes(raw[key])) throw new ConfigError(`${named(key)} must be true or false`);
    return raw[key] === 'true' || raw[key] === '1';
  };
  // Every refusal names its setting: flag, environment variable, file key.
  const integer = (key: string, min: number, max = Number.MAX_SAFE_INTEGER): number => {
    const n = Number(raw[key]);
    if (raw[key].trim() === '' || !Number.isSafeInteger(n) || n < min || n > max)
      throw new ConfigError(`${named(key)} must be an integer from ${min} to ${max}, got "${raw[key]}"`);
    return n;
  };
  /** Timeouts in seconds, at most a day (a timer of more than 2^31 ms would fire at once). */
  const timeoutMs = (key: string): number => integer(key, 1, 86_400) * 1000;
  let metricsListen: ServerConfig['metricsListen'];
  if (raw.metricsListen !== '') {
    const m = /^(.+):(\d{1,5})$/.exec(raw.metricsListen);
    if (!m || Number(m[2]) > 65535)
      throw new ConfigError(
        `--metrics-listen must be HOST:PORT, or empty for no metrics listener, got "${raw.metricsListen}"`,
      );
    const given = flags['metrics-listen'] ?? env.GUARD_SERVER_METRICS_LISTEN ?? file.metrics_listen;
    metricsListen = { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]), explicit: given != null };
  }
  if (!LOG_LEVELS.includes(raw.logLevel as ServerConfig['logLevel']))
    throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(', ')}`);
  const publicUrl = raw.publicUrl === '' ? undefined : raw.publicUrl;
  if (publicUrl !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(publicUrl);
    } catch {
      throw new ConfigError(`public URL must be an absolute http(s) URL, got ${publicUrl}`);
    }
    if (!['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.search || parsed.hash)
      throw new ConfigError(
        `public URL must be an http(s) URL without credentials, query or fragment, got ${publicUrl}`,
      );
  }
  const config: ServerConfig = {
    dataDir: isAbsolute(raw.dataDir) ? raw.dataDir : resolve(cwd, raw.dataDir),
    database: databaseConfig(raw.database, integer('databasePoolSize', 2, 1000), env),
    migrate: bool('migrate'),
    host,
    port,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    webhookAllowPrivate: bool('webhookAllowPrivate'),
    logLevel: raw.logLevel as ServerConfig['logLevel'],
    maxBundleBytes: integer('maxBundleBytes', 1),
    gcIntervalSeconds: integer('gcIntervalSeconds', 1, 86_400),
    deliveryRetention: {
      defaultDays: integer('deliveryRetentionDays', 1, 36_500),
      maxDays: integer('deliveryRetentionMaxDays', 1, 36_500),
    },
    metricsListen,
    limits: {
      headerTimeoutMs: timeoutMs('headerTimeoutSeconds'),
      requestTimeoutMs: timeoutMs('requestTimeoutSeconds'),
      uploadIdleTimeoutMs: timeoutMs('uploadIdleTimeoutSeconds'),
      keepAliveTimeoutMs: timeoutMs('keepAliveTimeoutSeconds'),
      maxUploads: integer('maxUploads', 1),
      maxUploadsPerTenant: integer('maxUploadsPerTenant', 1),
      tenantQuotaBytes: integer('tenantQuotaBytes', 0),
    },
    sessions: {
      idleTimeoutMs: integer('sessionIdleTimeoutSeconds', 60, 7 * 86_400) * 1000,
      maxAgeMs: integer('sessionMaxAgeSeconds', 60, 30 * 86_400) * 1000,
      passwordLinkTtlMs: integer('passwordLinkTtlSeconds', 300, 30 * 86_400) * 1000,
    },
    bundleRequestTtlMs: integer('bundleRequestTtlSeconds', 60, 7 * 86_400) * 1000,
    consoleDir:
      raw.consoleDir === '' ? undefined : isAbsolute(raw.consoleDir) ? raw.consoleDir : resolve(cwd, raw.consoleDir),
    webhook: {
      retrySchedule: schedule(raw.webhookRetrySchedule),
      concurrency: integer('webhookConcurrency', 1),
      perEndpointConcurrency: integer('webhookPerEndpointConcurrency', 1),
      timeoutMs: integer('webhookTimeoutMs', 100, 3_600_000),
      disableAfterMs: integer('webhookDisableAfterSeconds', 1) * 1000,
      leaseMs: integer('webhookLeaseMs', 1000, 86_400_000),
      pollMs: integer('webhookPollMs', 10, 3_600_000),
      replayRate: integer('webhookReplayRate', 1, 100_000),
    },
    objectStore: parseObjectStore(raw.objectStore),
    tls: tlsFiles(raw.tlsCert, raw.tlsKey, cwd),
    tracing: tracingConfig(env),
  };
  refuseContradictions(config);
  return config;
}

/**
 * `--database`: empty for the embedded SQLite database, or `postgres://USER@HOST:PORT/DB`
 * (`postgresql://` too, with libpq's query parameters such as `sslmode`). The password comes
 * from the URL or else from PGPASSWORD, the variable every PostgreSQL client reads.
 */
function databaseConfig(text: string, poolSize: number, env: NodeJS.ProcessEnv): DatabaseConfig {
  if (text === '') return { engine: 'sqlite' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${named('database')} must be a postgres://USER@HOST:PORT/DB URL, got an unparsable value`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(
      `${named('database')} must be a postgres://USER@HOST:PORT/DB URL (or empty for SQLite in the data dir), got a ${url.protocol} URL`,
    );
  if (url.hostname === '' || url.pathname.replace(/^\//, '') === '')
    throw new ConfigError(`${named('database')} must name a host and a database: postgres://USER@HOST:PORT/DB`);
  const password = url.password !== '' ? decodeURIComponent(url.password) : env.PGPASSWORD || undefined;
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return { engine: 'postgres', url: text, password, display: shown.href, poolSize };
}

const S3_PARAMS = new Set(['endpoint', 'region', 'path_style']);
/** S3's bucket naming rules (lowercase, digits, dots and hyphens; 3 to 63 characters). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `--object-store`: empty for the embedded store, or `s3://BUCKET?endpoint=URL&region=NAME&path_style=1`
 * (DESIGN §8). Credentials never go in the URL: they come from the AWS SDK's default chain.
 */
export function parseObjectStore(text: string): ObjectStoreSetting {
  if (text === '') return { kind: 'fs' };
  const fail = (why: string): never => {
    throw new ConfigError(`${named('objectStore')} ${why}, got "${text}"`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('must be empty (the embedded store) or s3://BUCKET?endpoint=…&region=…&path_style=1');
  }
  if (url.protocol !== 's3:') fail('must be an s3:// URL (or empty for the embedded store)');
  if (url.username || url.password)
    fail('must not carry credentials: they come from the AWS SDK default chain (AWS_ACCESS_KEY_ID, …)');
  if (!BUCKET_NAME.test(url.hostname)) fail('must name a valid bucket (s3://BUCKET)');
  if (url.pathname !== '' && url.pathname !== '/') fail('takes no path after the bucket');
  for (const name of url.searchParams.keys())
    if (!S3_PARAMS.has(name)) fail(`has an unknown parameter "${name}" (known: ${[...S3_PARAMS].join(', ')})`);
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined) {
    let e: URL | undefined;
    try {
      e = new URL(endpoint);
    } catch {
      e = undefined;
    }
    if (!e || !['http:', 'https:'].includes(e.protocol) || e.username || e.search)
      fail('needs endpoint= to be an http(s) URL without credentials or query');
  }
  const pathStyle = url.searchParams.get('path_style') ?? '0';
  if (!['0', '1', 'true', 'false'].includes(pathStyle)) fail('needs path_style= to be 1 or 0');
  return {
    kind: 's3',
    bucket: url.hostname,
    endpoint: endpoint?.replace(/\/+$/, ''),
    region: url.searchParams.get('region') || undefined,
    pathStyle: pathStyle === '1' || pathStyle === 'true',
  };
}

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

/** `--tls-cert` and `--tls-key` come together; paths are resolved against the working directory. */
function tlsFiles(cert: string, key: string, cwd: string): ServerConfig['tls'] {
  if (cert === '' && key === '') return undefined;
  if (cert === '' || key === '')
    throw new ConfigError(`${named('tlsCert')} and ${named('tlsKey')} are given together or not at all`);
  return { certPath: resolve(cwd, cert), keyPath: resolve(cwd, key) };
}

/** `--flag (ENV, file_key)`: how a refusal names a setting. */
function named(key: string): string {
  const s = SETTINGS.find((x) => x.key === key) as (typeof SETTINGS)[number];
  return `--${s.flag} (${s.env}, ${s.file})`;
}

/**
 * Settings each valid alone that cannot hold together are refused at start, naming both. (A
 * per-tenant or per-endpoint cap above its total is not one: the total binds first.)
 */
function refuseContradictions(c: ServerConfig): void {
  const w = c.webhook;
  if (w.leaseMs < w.timeoutMs + LEASE_MARGIN_MS)
    throw new ConfigError(
      `${named('webhookLeaseMs')} is ${w.leaseMs} ms, but must be at least ${named('webhookTimeoutMs')} (${w.timeoutMs} ms) plus ${LEASE_MARGIN_MS / 1000} s: a lease that ends before its attempt lets a second attempt of the same delivery run at once`,
    );
  if (c.deliveryRetention.defaultDays > c.deliveryRetention.maxDays)
    throw new ConfigError(
      `${named('deliveryRetentionDays')} is ${c.deliveryRetention.defaultDays} days, more than ${named('deliveryRetentionMaxDays')} (${c.deliveryRetention.maxDays}): the default retention must lie within the maximum a tenant may choose`,
    );
  if (
    c.metricsListen &&
    c.metricsListen.port !== 0 &&
    c.metricsListen.port === c.port &&
    c.metricsListen.host === c.host
  )
    throw new ConfigError(
      `${named('metricsListen')} is the same address as ${named('listen')}: give /metrics its own port`,
    );
}
