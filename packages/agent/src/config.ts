// The agent's persisted config (DESIGN §3, contract — config file). Loaded once, validated,
// then passed down. support-bundle reads no GUARD_* variable, so neither does this module.

import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AgentError, describeSystemError } from './errors.ts';
import { compileExtraKeys } from './redaction-keys.ts';
import { NotRegularFileError, openRegularFile } from './regular-file.ts';

export const DEFAULT_CONFIG_PATH = '/etc/guard/agent.yaml';
export const DEFAULT_LOG_PATH = '/var/log/guard/agent.log';
export const DEFAULT_STATE_DIR = '/var/lib/guard';
/** A config file is a few KiB; refuse anything that is clearly not one. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

export interface AgentConfig {
  /** The config file read, or undefined when it was not (absent at the default path, or `unread`). */
  source: string | undefined;
  /** The effective config: the file's keys with the defaults filled in. */
  effective: Record<string, unknown>;
  logPath: string;
  stateDir: string;
  environment: string | undefined;
  /** `redaction.extra_keys` as written: key names and anchored patterns (`^...$`), validated. */
  extraKeys: string[];
  /** `detect:` (DESIGN §3, contract — detection), defaults filled in (absent in configs built by hand: the defaults). */
  detect?: DetectSettings;
  /**
   * Set when the config file was left unread because it is a symlink, FIFO, socket or device
   * and the caller reads it as a bundle source (collect): why, in collection_errors form. The
   * defaults apply and config.redacted.json is left out.
   */
  unread?: { source: string; message: string };
}

export interface DetectSettings {
  /** A syslog file, 'journal' (the systemd journal), or false (off). */
  authLog: string | false;
  /** Files, or directories meaning the files in them. */
  watch: string[];
  /** The eBPF exec probe. */
  exec: boolean;
  /** At most this many signals of one type a minute; the rest go into one summary signal (docs/detection.md). */
  floodPerMinute: number;
}

export const DEFAULT_DETECT: DetectSettings = {
  authLog: '/var/log/auth.log',
  watch: [
    '/etc/passwd',
    '/etc/shadow',
    '/etc/group',
    '/etc/sudoers',
    '/etc/sudoers.d',
    '/etc/ssh/sshd_config',
    '/root/.ssh/authorized_keys',
  ],
  exec: true,
  floodPerMinute: 20,
};
/** More watch entries than this is a mistake (each is hashed at every scan). */
export const WATCH_MAX = 200;

export interface LoadConfigOptions {
  /**
   * Read the file as collect reads every bundle source (DESIGN §3, contract — what collect
   * reads): a symlink in the last component is not followed, and a symlink, FIFO, socket or
   * device is left unread (AgentConfig.unread) instead of failing the command. Otherwise a
   * symlink is followed and anything but a regular file is a config error.
   */
  asBundleSource?: boolean;
}

/**
 * Loads the config file. A missing file at the default path means "defaults" (an agent
 * that was never configured can still collect a bundle); a missing file that was named
 * with --config is an error. Never blocks: a FIFO is refused, not waited on.
 */
export async function loadConfig(
  path: string,
  explicit: boolean,
  options: LoadConfigOptions = {},
): Promise<AgentConfig> {
  const asSource = options.asBundleSource ?? false;
  let text: string;
  try {
    text = await readConfigText(path, !asSource);
  } catch (error) {
    if (error instanceof AgentError) throw error;
    if (!explicit && (error as NodeJS.ErrnoException).code === 'ENOENT') return fromDocument(undefined, {});
    if (error instanceof NotRegularFileError) {
      // A directory is a mistake in --config, never a file someone planted: always an error.
      if (asSource && error.kind !== 'directory')
        return {
          ...(await fromDocument(undefined, {})),
          unread: { source: path, message: `left out: ${error.message} (log_path and state_dir took their defaults)` },
        };
      throw new AgentError('config', `config file ${path} is ${error.message}`);
    }
    throw new AgentError('config', `cannot read config file ${path}: ${describeSystemError(error)}`, {
      cause: error,
    });
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 }) ?? {};
  } catch (error) {
    throw new AgentError('config', `config file ${path} is not valid YAML: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
    throw new AgentError('config', `config file ${path} must be a YAML mapping of keys to values`);
  return fromDocument(path, doc as Record<string, unknown>);
}

/** The file's text, read through one descriptor and never more than CONFIG_MAX_BYTES + 1 bytes. */
async function readConfigText(path: string, followLinks: boolean): Promise<string> {
  const file = await openRegularFile(path, { followLinks });
  try {
    const buffer = Buffer.alloc(CONFIG_MAX_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await file.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > CONFIG_MAX_BYTES)
      throw new AgentError('config', `config file ${path} is larger than ${CONFIG_MAX_BYTES} bytes`);
    return buffer.toString('utf8', 0, length);
  } finally {
    await file.close();
  }
}

async function fromDocument(source: string | undefined, doc: Record<string, unknown>): Promise<AgentConfig> {
  const base = source ? dirname(source) : '/';
  const pathKey = (key: string, fallback: string): string => {
    const value = doc[key] ?? fallback;
    if (typeof value !== 'string' || value === '' || value.includes('\0'))
      throw new AgentError('config', `config key ${key} must be a non-empty path (in ${source})`);
    return isAbsolute(value) ? value : resolve(base, value);
  };
  const logPath = pathKey('log_path', DEFAULT_LOG_PATH);
  const stateDir = pathKey('state_dir', DEFAULT_STATE_DIR);
  const environment = doc.environment;
  if (environment !== undefined && typeof environment !== 'string')
    throw new AgentError('config', `config key environment must be a string (in ${source})`);
  return {
    source,
    effective: { ...doc, log_path: logPath, state_dir: stateDir },
    logPath,
    stateDir,
    environment,
    extraKeys: extraKeysOf(doc.redaction, source),
    detect: detectOf(doc.detect, source, base),
  };
}

/** `detect: {auth_log, watch, exec}`; a key left out takes its default, a wrong one is an error. */
function detectOf(value: unknown, source: string | undefined, base: string): DetectSettings {
  const fail = (what: string): never => {
    throw new AgentError('config', `config key detect${what} (in ${source})`);
  };
  if (value === undefined || value === null) return { ...DEFAULT_DETECT, watch: [...DEFAULT_DETECT.watch] };
  if (typeof value !== 'object' || Array.isArray(value))
    return fail(' must be a mapping, e.g. {auth_log: /var/log/auth.log, watch: [/etc/passwd], exec: true}');
  const doc = value as Record<string, unknown>;
  for (const key of Object.keys(doc))
    if (!['auth_log', 'watch', 'exec', 'flood_per_minute'].includes(key))
      fail(`.${key} is not a known key (auth_log, watch, exec, flood_per_minute)`);
  const path = (v: unknown, what: string): string => {
    if (typeof v !== 'string' || v === '' || v.includes('\0') || v.length > 4096) return fail(`${what} must be a path`);
    return isAbsolute(v) ? v : resolve(base, v);
  };
  let authLog: string | false = DEFAULT_DETECT.authLog;
  if (doc.auth_log === false || doc.auth_log === 'off') authLog = false;
  else if (doc.auth_log === 'journal') authLog = 'journal';
  else if (doc.auth_log !== undefined) authLog = path(doc.auth_log, '.auth_log (a syslog file, journal, or false)');
  let watch = [...DEFAULT_DETECT.watch];
  if (doc.watch !== undefined && doc.watch !== null) {
    if (!Array.isArray(doc.watch)) return fail('.watch must be a list of files or directories');
    if (doc.watch.length > WATCH_MAX) fail(`.watch has more than ${WATCH_MAX} entries`);
    watch = [...new Set(doc.watch.map((p, i) => path(p, `.watch[${i}]`).replace(/\/+$/, '') || '/'))];
  }
  let exec = DEFAULT_DETECT.exec;
  if (doc.exec !== undefined) {
    if (typeof doc.exec !== 'boolean') fail('.exec must be true or false');
    exec = doc.exec as boolean;
  }
  let floodPerMinute = DEFAULT_DETECT.floodPerMinute;
  if (doc.flood_per_minute !== undefined) {
    const n = doc.flood_per_minute;
    if (!Number.isInteger(n) || (n as number) < 1 || (n as number) > 100_000)
      fail('.flood_per_minute must be a whole number from 1 to 100000');
    floodPerMinute = n as number;
  }
  return { authLog, watch, exec, floodPerMinute };
}

/**
 * `redaction: {extra_keys: [...]}`: attribute keys masked in log members on top of the
 * contract pattern. The entries are checked by the redactor's own compileExtraKeys
 * (redaction-keys.ts), so what loads here is exactly what collect can compile. A
 * typo here would let a secret through silently, so anything unexpected is an error.
 */
function extraKeysOf(value: unknown, source: string | undefined): string[] {
  const fail = (what: string): never => {
    throw new AgentError('config', `config key redaction${what} (in ${source})`);
  };
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object' || Array.isArray(value))
    return fail(' must be a mapping, e.g. {extra_keys: [password]}');
  for (const key of Object.keys(value))
    if (key !== 'extra_keys') fail(`.${key} is not a known key (only extra_keys is)`);
  const list = (value as { extra_keys?: unknown }).extra_keys;
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) return fail('.extra_keys must be a list of key names or ^...$ patterns');
  if (list.length === 0) return [];
  try {
    compileExtraKeys(list);
  } catch (error) {
    throw new AgentError('config', `config file ${source}: ${(error as Error).message}`);
  }
  return [...(list as string[])];
}
