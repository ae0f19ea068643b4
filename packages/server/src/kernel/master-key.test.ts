import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadServerConfig } from '../config.ts';
import { loadMasterKey } from './master-key.ts';

const dir = () => mkdtempSync(join(tmpdir(), 'guard-master-key-'));

test('without a key file, <data dir>/master.key is made once (0600) and read back the same', () => {
  const dataDir = join(dir(), 'data');
  const a = loadMasterKey({ dataDir });
  assert.equal(statSync(join(dataDir, 'master.key')).mode & 0o777, 0o600);
  assert.deepEqual(loadMasterKey({ dataDir }).derive('presign'), a.derive('presign'));
  assert.notDeepEqual(a.derive('presign'), a.derive('csrf'), 'one key per purpose');
});

test('two replicas given the same --master-key-file derive the same keys; neither writes master.key', () => {
  const d = dir();
  const keyFile = join(d, 'master.key.secret');
  writeFileSync(keyFile, `${randomBytes(32).toString('base64')}\n`, { mode: 0o444 });
  const config = (replica: string) =>
    loadServerConfig({}, { GUARD_SERVER_MASTER_KEY_FILE: keyFile, GUARD_SERVER_DATA_DIR: join(d, replica) }, d);
  const one = loadMasterKey(config('one'));
  const two = loadMasterKey(config('two'));
  assert.deepEqual(one.derive('webhook-secrets'), two.derive('webhook-secrets'));
  assert.equal(existsSync(join(d, 'one', 'master.key')), false);
  assert.equal(readFileSync(keyFile, 'utf8').trim().length, 44, 'the secret is never rewritten');
});

test('a missing or malformed key file is refused with what to do, never replaced by a new key', () => {
  const d = dir();
  assert.throws(
    () => loadMasterKey({ dataDir: d, masterKeyFile: join(d, 'absent') }),
    /master key file .*absent cannot be read/,
  );
  const bad = join(d, 'short');
  writeFileSync(bad, 'c2hvcnQ=\n');
  assert.throws(
    () => loadMasterKey({ dataDir: d, masterKeyFile: bad }),
    /32 base64-encoded bytes \(openssl rand -base64 32\)/,
  );
  assert.equal(existsSync(join(d, 'master.key')), false);
});
