// The agent's persisted config (DESIGN §3, contract — config file). Loaded once, validated,
// then passed down. support-bundle reads no GUARD_* variable, so neither does this module.

import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { AgentError, describeSystemError } from './errors.ts';

export const DEFAULT_CONFIG_PATH = '/etc/guard/agent.yaml';
export const DEFAULT_LOG_PATH = '/var/log/guard/agent.log';
export const DEFAULT_STATE_DIR = '/var/lib/guard';
/** A config file is a few KiB; refuse anything that is clearly not one. */
export const CONFIG_MAX_BYTES = 1024 * 1024;

export interface AgentConfig {
  /** The config file read, or undefined when the default path did not exist. */
  source: string | undefined;
  /** The effective config: the file's keys with the defaults filled in. */
  effective: Record<string, unknown>;
  logPath: string;
  stateDir: string;
  environment: string | undefined;
}

/**
 * Loads the config file. A missing file at the default path means "defaults" (an agent
 * that was never configured can still collect a bundle); a missing file that was named
 * with --config is an error.
 */
export async function loadConfig(path: string, explicit: boolean): Promise<AgentConfig> {
  let text: string;
  try {
    const bytes = await readFile(path);
    if (bytes.length > CONFIG_MAX_BYTES)
      throw new AgentError('config', `config file ${path} is larger than ${CONFIG_MAX_BYTES} bytes`);
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof AgentError) throw error;
    if (!explicit && (error as NodeJS.ErrnoException).code === 'ENOENT') return fromDocument(undefined, {});
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

function fromDocument(source: string | undefined, doc: Record<string, unknown>): AgentConfig {
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
  };
}
