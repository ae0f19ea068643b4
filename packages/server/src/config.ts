// guard-server configuration (DESIGN §8): command-line flags over GUARD_SERVER_* environment
// variables over an optional YAML file over defaults. Loaded once, validated, passed down.
// Each capability owns its rows of the settings table, their type and their parser (its
// settings.ts; the kernel's for the listeners and the intake limits); this file holds the
// server-wide rows, joins them all into SETTINGS and composes ServerConfig.

import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_MAX_BUNDLE_BYTES } from '@guard/contract';
import { parse as parseYaml } from 'yaml';
import { SESSION_SETTINGS, type SessionSettings, sessionSettings } from './auth/settings.ts';
import { DATABASE_SETTINGS, type DatabaseSettings, databaseSettings } from './db/settings.ts';
import { HTTP_LIMIT_SETTINGS, type HttpLimits, httpLimits } from './kernel/http-limits.ts';
import { LISTEN_SETTINGS, type ListenSettings, listenSettings } from './kernel/listen-settings.ts';
import type { LogLevel } from './kernel/logger.ts';
import { ConfigError, type SettingRow, SettingsReader } from './kernel/settings.ts';
import { OBJECT_STORE_SETTINGS, type ObjectStoreSetting, parseObjectStore } from './objects/settings.ts';
import { BUNDLE_SETTINGS, type BundleRetentionPolicy, bundleRetentionPolicy } from './support/settings.ts';
import { type TracingConfig, tracingConfig } from './tracing/settings.ts';
import { WEBHOOK_SETTINGS, type WebhookSettings, webhookSettings } from './webhooks/settings.ts';

export type { DatabaseConfig } from './db/settings.ts';
export { ConfigError } from './kernel/settings.ts';
export type { TracingConfig } from './tracing/settings.ts';

export interface ServerConfig extends ListenSettings, DatabaseSettings, WebhookSettings {
  dataDir: string;
  logLevel: LogLevel;
  maxBundleBytes: number;
  /** How often unregistered, expired uploads are collected and old deliveries pruned. */
  gcIntervalSeconds: number;
  /** Intake limits: timeouts of slow peers, concurrent PUTs, stored bytes per tenant. */
  limits: HttpLimits;
  /** Console sign-in (auth/): session lifetimes and the lifetime of a set-password link. */
  sessions: SessionSettings;
  /** A bundle request the agent has not taken by this long after its creation expires. */
  bundleRequestTtlMs: number;
  /** How long tenants keep their support bundles (support/retention.ts). */
  bundleRetention: BundleRetentionPolicy;
  /** The built console (index.html, assets/); undefined: packages/console/dist of this checkout. */
  consoleDir: string | undefined;
  /** The master key's file when it is not <dataDir>/master.key (a secret every replica mounts); never created. */
  masterKeyFile: string | undefined;
  /** Where bundles are kept: the embedded store under the data dir, or an S3-compatible bucket. */
  objectStore: ObjectStoreSetting;
  /** OpenTelemetry tracing, from the standard OTEL_* variables (tracingConfig); undefined: off. */
  tracing: TracingConfig | undefined;
}

/** The server-wide rows: the data dir, the log, bundles' size, the sweeps, the console. */
const SERVER_SETTINGS = [
  { key: 'dataDir', flag: 'data-dir', env: 'GUARD_SERVER_DATA_DIR', file: 'data_dir', default: './data' },
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
    key: 'bundleRequestTtlSeconds',
    flag: 'bundle-request-ttl',
    env: 'GUARD_SERVER_BUNDLE_REQUEST_TTL',
    file: 'bundle_request_ttl_seconds',
    default: '3600',
  },
  { key: 'consoleDir', flag: 'console-dir', env: 'GUARD_SERVER_CONSOLE_DIR', file: 'console_dir', default: '' },
  {
    key: 'masterKeyFile',
    flag: 'master-key-file',
    env: 'GUARD_SERVER_MASTER_KEY_FILE',
    file: 'master_key_file',
    default: '',
  },
] as const satisfies readonly SettingRow[];

/** Every setting, one row each: the documented table in docs/guard-server.md lists them in this order. */
export const SETTINGS = [
  ...SERVER_SETTINGS,
  ...LISTEN_SETTINGS,
  ...DATABASE_SETTINGS,
  ...HTTP_LIMIT_SETTINGS,
  ...SESSION_SETTINGS,
  ...WEBHOOK_SETTINGS,
  ...OBJECT_STORE_SETTINGS,
  ...BUNDLE_SETTINGS,
] as const;

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
    email: { type: 'string' },
    'tenant-id': { type: 'string' },
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
  const given = new Set<string>();
  for (const s of SETTINGS) {
    const v = flags[s.flag] ?? env[s.env] ?? file[s.file];
    if (v != null) given.add(s.key);
    raw[s.key] = String(v ?? s.default);
  }
  const r = new SettingsReader(SETTINGS, raw, given);
  const listen = listenSettings(r, cwd);
  if (!LOG_LEVELS.includes(raw.logLevel as LogLevel))
    throw new ConfigError(`log level must be one of ${LOG_LEVELS.join(', ')}`);
  return {
    dataDir: isAbsolute(raw.dataDir) ? raw.dataDir : resolve(cwd, raw.dataDir),
    ...listen,
    ...databaseSettings(r, env),
    ...webhookSettings(r),
    logLevel: raw.logLevel as LogLevel,
    maxBundleBytes: r.integer('maxBundleBytes', 1),
    gcIntervalSeconds: r.integer('gcIntervalSeconds', 1, 86_400),
    limits: httpLimits(r),
    sessions: sessionSettings(r),
    bundleRequestTtlMs: r.integer('bundleRequestTtlSeconds', 60, 7 * 86_400) * 1000,
    bundleRetention: bundleRetentionPolicy(r),
    consoleDir:
      raw.consoleDir === '' ? undefined : isAbsolute(raw.consoleDir) ? raw.consoleDir : resolve(cwd, raw.consoleDir),
    masterKeyFile:
      raw.masterKeyFile === ''
        ? undefined
        : isAbsolute(raw.masterKeyFile)
          ? raw.masterKeyFile
          : resolve(cwd, raw.masterKeyFile),
    objectStore: parseObjectStore(raw.objectStore),
    tracing: tracingConfig(env),
  };
}
