// The server master key: 32 random bytes in <data_dir>/master.key (mode 0600), generated on
// first start. Purpose-specific keys are derived from it with HKDF, so one key never serves
// two purposes (presigned URLs now; webhook secret encryption later).

import { hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';
const KEY_BYTES = 32;

export type KeyPurpose = 'presign' | 'webhook-secrets' | 'csrf' | 'totp' | 'sso';

export interface MasterKey {
  derive(purpose: KeyPurpose): Buffer;
}

/**
 * The master key: from `keyFile` when one is given (a secret mounted into every replica, never
 * created or changed here), else <dataDir>/master.key, made on first start.
 */
export function loadMasterKey(config: { dataDir: string; masterKeyFile?: string | undefined }): MasterKey {
  if (config.masterKeyFile === undefined) return loadOrCreateMasterKey(config.dataDir);
  let text: string;
  try {
    text = readFileSync(config.masterKeyFile, 'utf8');
  } catch (error) {
    throw new Error(`the master key file ${config.masterKeyFile} cannot be read: ${(error as Error).message}`);
  }
  return masterKeyOf(text, config.masterKeyFile);
}

function masterKeyOf(text: string, path: string): MasterKey {
  const key = Buffer.from(text.trim(), 'base64');
  if (key.length !== KEY_BYTES)
    throw new Error(`${path} must hold ${KEY_BYTES} base64-encoded bytes (openssl rand -base64 ${KEY_BYTES})`);
  return {
    derive: (purpose) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `guard/${purpose}`, KEY_BYTES)),
  };
}

export function loadOrCreateMasterKey(dataDir: string): MasterKey {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, MASTER_KEY_FILE);
  try {
    writeFileSync(path, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600); // never readable by others
  return masterKeyOf(readFileSync(path, 'utf8'), path);
}
