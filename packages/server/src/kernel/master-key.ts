// The server master key: 32 random bytes in <data_dir>/master.key (mode 0600), generated on
// first start. Purpose-specific keys are derived from it with HKDF, so one key never serves
// two purposes (presigned URLs now; webhook secret encryption later).

import { hkdfSync, randomBytes } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const MASTER_KEY_FILE = 'master.key';
const KEY_BYTES = 32;

export type KeyPurpose = 'presign' | 'webhook-secrets' | 'csrf' | 'sso';

export interface MasterKey {
  derive(purpose: KeyPurpose): Buffer;
}

export function loadOrCreateMasterKey(dataDir: string): MasterKey {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const path = join(dataDir, MASTER_KEY_FILE);
  let key: Buffer;
  try {
    writeFileSync(path, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  if ((statSync(path).mode & 0o077) !== 0) chmodSync(path, 0o600); // never readable by others
  key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`${path} must hold ${KEY_BYTES} base64-encoded bytes`);
  return {
    derive: (purpose) => Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), `guard/${purpose}`, KEY_BYTES)),
  };
}
