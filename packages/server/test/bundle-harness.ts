// Real bundles for the server's tests: made by the agent's own collect code from a crafted agent
// home (a log, rotated segments, probe status, BTF or not), and uploaded as the agent uploads
// them (presign, PUT, register).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { collectBundle } from '../../agent/src/bundle/index.ts';
import type { AgentConfig } from '../../agent/src/config.ts';
import { SILENT_PROGRESS } from '../../agent/src/progress.ts';
import { api, type EnrolledAgent, type Loose, presign, putObject, register, T0, waitFor } from './harness.ts';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Uploads bytes with a manifest as the agent would; returns the bundle id. */
export async function uploadBundle(base: string, a: EnrolledAgent, bytes: Buffer, manifest: unknown): Promise<string> {
  const p = await presign(base, a.api_key, { size: bytes.length, sha256: sha256(bytes) });
  assert.equal(p.status, 200, p.text);
  const put = await putObject(p.json.url, bytes);
  assert.equal(put.status, 200, put.text);
  const r = await register(base, a.api_key, {
    object_key: p.json.object_key,
    sha256: sha256(bytes),
    size: bytes.length,
    manifest,
  });
  assert.equal(r.status, 201, r.text);
  return r.json.bundle_id;
}

/** A bundle's insights once its analysis is no longer pending (read with `token`). */
export async function analysedInsights(base: string, token: string, bundleId: string): Promise<Loose> {
  let last: Loose = {};
  await waitFor(
    async () => {
      const res = await api(base, 'GET', `/v1/support/bundles/${bundleId}/insights`, { token });
      assert.equal(res.status, 200, res.text);
      last = res.json;
      return last.state !== 'pending';
    },
    `insights of ${bundleId}`,
    30_000,
  );
  return last;
}

export interface BuiltBundle {
  bytes: Buffer;
  manifest: Loose;
  /** The members as collected, for checking evidence lines. */
  texts: Map<string, string>;
}

export interface CollectOptions {
  log: string;
  segments?: Record<string, string>;
  probeStatus?: unknown;
  btf?: boolean;
  now?: Date;
  capBytes?: number;
  version?: string;
  requestId?: string;
}

/** A real bundle made by the agent's collect, in `root` (an empty directory), from a home with these files. */
export async function collectTestBundle(root: string, options: CollectOptions): Promise<BuiltBundle> {
  const logDir = join(root, 'log');
  const stateDir = join(root, 'state');
  await mkdir(logDir, { recursive: true });
  await mkdir(stateDir, { recursive: true });
  await writeFile(join(logDir, 'agent.log'), options.log);
  for (const [name, text] of Object.entries(options.segments ?? {}))
    await writeFile(join(logDir, name), gzipSync(text));
  if (options.probeStatus !== undefined)
    await writeFile(join(stateDir, 'probe-status.json'), JSON.stringify(options.probeStatus));
  await writeFile(join(root, 'btf'), '');
  await writeFile(join(root, 'os-release'), 'ID=debian\nVERSION_ID="12"\n');
  await writeFile(join(root, 'unpriv'), '1\n');
  await symlink('/etc/hostname', join(logDir, 'agent.log.99.gz')); // left out: a collection error
  const config: AgentConfig = {
    source: undefined,
    effective: { log_path: join(logDir, 'agent.log'), state_dir: stateDir },
    logPath: join(logDir, 'agent.log'),
    stateDir,
    environment: undefined,
    extraKeys: [],
  };
  const out = join(root, 'bundle.tar.zst');
  const result = await collectBundle({
    config,
    out,
    cwd: root,
    agentVersion: options.version ?? '0.1.0',
    trigger: options.requestId ? 'console_push' : 'cli',
    requestId: options.requestId,
    now: () => options.now ?? new Date(T0 - 60_000),
    progress: SILENT_PROGRESS,
    sources: {
      osRelease: join(root, 'os-release'),
      btfVmlinux: options.btf === false ? join(root, 'no-btf-here') : join(root, 'btf'),
      unprivilegedBpfDisabled: join(root, 'unpriv'),
    },
    capBytes: options.capBytes,
  });
  const texts = new Map<string, string>([['agent.log', options.log], ...Object.entries(options.segments ?? {})]);
  return { bytes: await readFile(out), manifest: result.manifest, texts };
}
