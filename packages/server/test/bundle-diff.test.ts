// The bundle diff (DESIGN §4, bundles second round) against the real server on loopback: two
// real bundles collected by the agent's own collect from one agent home that changed between
// them (a segment rotated away, another added, the exec detector back up, a signal waiting in
// the daemon's real spool, BTF gone, a newer agent), uploaded, analysed by the worker, then
// compared: members, findings, system.json fields; who may ask and what is refused.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { collectBundle } from '../../agent/src/bundle/index.ts';
import type { AgentConfig } from '../../agent/src/config.ts';
import { DetectionStore } from '../../agent/src/detect/store.ts';
import { SILENT_PROGRESS } from '../../agent/src/progress.ts';
import { analysedInsights } from './bundle-harness.ts';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  type Loose,
  presign,
  putObject,
  register,
  setupTenant,
  startTestServer,
  T0,
  type TestServer,
} from './harness.ts';

const HOUR = 3_600_000;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

let server: TestServer;
let base: string;
let tenant: Awaited<ReturnType<typeof setupTenant>>;
let other: Awaited<ReturnType<typeof setupTenant>>;
let support: string;
let agent: EnrolledAgent;
let root: string;

before(async () => {
  server = await startTestServer();
  base = server.url;
  tenant = await setupTenant(server);
  other = await setupTenant(server);
  support = server.supportToken as string;
  agent = await enrollAgent(base, tenant.enroll_token, { hostname: 'web-01', agent_version: '0.1.0' });
  root = await mkdtemp(join(os.tmpdir(), 'guard-diff-'));
});
after(async () => {
  await server.cleanup();
  await rm(root, { recursive: true, force: true });
});

/** One agent home: the same config, log and state paths for every collect. */
const home = () => ({
  logDir: join(root, 'log'),
  stateDir: join(root, 'state'),
  config: {
    source: undefined,
    effective: { log_path: join(root, 'log', 'agent.log'), state_dir: join(root, 'state') },
    logPath: join(root, 'log', 'agent.log'),
    stateDir: join(root, 'state'),
    environment: undefined,
    extraKeys: [],
  } satisfies AgentConfig,
});

async function collectAndUpload(a: EnrolledAgent, version: string, btf: boolean): Promise<string> {
  const { config } = home();
  const out = join(root, `bundle-${version}-${Date.now()}.tar.zst`);
  const result = await collectBundle({
    config,
    out,
    cwd: root,
    agentVersion: version,
    trigger: 'cli',
    now: () => server.clock.now(),
    progress: SILENT_PROGRESS,
    sources: {
      osRelease: join(root, 'os-release'),
      btfVmlinux: btf ? join(root, 'btf') : join(root, 'no-btf'),
      unprivilegedBpfDisabled: join(root, 'unpriv'),
    },
  });
  const bytes = await readFile(out);
  const p = await presign(base, a.api_key, { size: bytes.length, sha256: sha256(bytes) });
  assert.equal(p.status, 200, p.text);
  assert.equal((await putObject(p.json.url, bytes)).status, 200);
  const r = await register(base, a.api_key, {
    object_key: p.json.object_key,
    sha256: sha256(bytes),
    size: bytes.length,
    manifest: result.manifest,
  });
  assert.equal(r.status, 201, r.text);
  return r.json.bundle_id as string;
}

const analysed = (id: string) => analysedInsights(base, support, id);

const diff = (id: string, token: string, against?: string) =>
  api(base, 'GET', `/v1/support/bundles/${id}/diff${against ? `?against=${encodeURIComponent(against)}` : ''}`, {
    token,
  });

describe('the diff of two real bundles of one server', () => {
  let first: string;
  let second: string;

  before(async () => {
    const { logDir, stateDir } = home();
    await mkdir(logDir, { recursive: true });
    await mkdir(stateDir, { recursive: true });
    await writeFile(join(root, 'btf'), '');
    await writeFile(join(root, 'os-release'), 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n');
    await writeFile(join(root, 'unpriv'), '2\n');
    const line = (msg: string) => `time=${new Date(T0).toISOString()} level=INFO msg="${msg}"\n`;
    // The first bundle: the exec detector failed (the probe's status says so), one old segment.
    await writeFile(join(logDir, 'agent.log'), line('started'));
    await writeFile(join(logDir, 'agent.log.1.gz'), gzipSync(line('older')));
    const status = (exec: Loose) => ({
      updated_at: new Date(T0).toISOString(),
      detectors: [
        { name: 'auth_log', state: 'running' },
        { name: 'exec', ...exec },
      ],
      spool_depth: 0,
      ...(exec.state === 'failed' ? { state: 'failed', error: exec.reason } : { state: 'running' }),
    });
    await writeFile(join(stateDir, 'probe-status.json'), JSON.stringify(status({ state: 'failed', reason: 'no BTF' })));
    first = await collectAndUpload(agent, '0.1.0', true);
    server.clock.advance(HOUR);

    // The second: rotated (agent.log.1.gz gone, agent.log.2.gz new), exec running, a newer
    // agent, no BTF, and one signal waiting in the daemon's real spool.
    await writeFile(join(logDir, 'agent.log'), line('started again'));
    await unlink(join(logDir, 'agent.log.1.gz'));
    await writeFile(join(logDir, 'agent.log.2.gz'), gzipSync(line('oldest')));
    await writeFile(join(stateDir, 'probe-status.json'), JSON.stringify(status({ state: 'running' })));
    const store = DetectionStore.open(stateDir);
    store.record({
      signals: [
        {
          signal_type: 'ssh_login_failed',
          severity: 2,
          description: 'Failed password for alice',
          identity_id: '1000',
          identity_name: 'alice',
          created_at: new Date(T0).toISOString(),
        },
      ],
    });
    store.close();
    second = await collectAndUpload(agent, '0.2.0', false);
    await analysed(first);
    await analysed(second);
  });

  it("compares with the server's previous bundle by default: members, findings and system.json fields", async () => {
    const res = await diff(second, support);
    assert.equal(res.status, 200, res.text);
    const body = res.json;
    assert.equal(body.bundle_id, second);
    assert.equal(body.against, first);
    assert.deepEqual(body.members, [
      { name: 'agent.log', change: 'changed' },
      { name: 'agent.log.1.gz', change: 'removed' },
      { name: 'agent.log.2.gz', change: 'added' },
      { name: 'config.redacted.json', change: 'same' },
      { name: 'system.json', change: 'changed' },
    ]);
    assert.ok(body.findings.new.includes('ebpf.btf_missing'), JSON.stringify(body.findings));
    assert.ok(body.findings.new.includes('change.agent_version'), JSON.stringify(body.findings));
    assert.deepEqual(body.findings.resolved, ['ebpf.probe_failed']);
    const changed = new Map((body.system_changes as Loose[]).map((c) => [c.field, [c.before, c.after]]));
    assert.deepEqual(changed.get('agent_version'), ['0.1.0', '0.2.0']);
    assert.deepEqual(changed.get('ebpf.btf_present'), [true, false]);
    assert.deepEqual(changed.get('detectors.exec'), ['failed: no BTF', 'running']);
    assert.deepEqual(changed.get('spool.depth'), [null, 1]);
    for (const same of ['kernel.release', 'distro', 'detectors.auth_log', 'uptime.booted_at', 'memory.total_bytes'])
      assert.equal(changed.has(same), false, `${same} did not change`);
  });

  it('compares the other way with ?against=, and audits each diff', async () => {
    const res = await diff(first, tenant.admin_token, second);
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.against, second);
    assert.deepEqual(res.json.findings.new, ['ebpf.probe_failed']);
    assert.ok(res.json.members.some((m: Loose) => m.name === 'agent.log.1.gz' && m.change === 'added'));
    const audited = await server.deps.db
      .selectFrom('audit_log')
      .select(['target', 'tenant_id'])
      .where('action', '=', 'bundle.diff')
      .execute();
    assert.deepEqual(audited.map((a) => a.target).sort(), [first, second].sort());
    assert.ok(audited.every((a) => a.tenant_id === tenant.tenant_id));
  });

  it("answers 409 no_previous_bundle for a server's first bundle and 422 same_bundle for itself", async () => {
    const none = await diff(first, support);
    assert.equal(none.status, 409, none.text);
    assert.equal(none.json.error.code, 'no_previous_bundle');
    const itself = await diff(first, support, first);
    assert.equal(itself.status, 422, itself.text);
    assert.equal(itself.json.error.code, 'same_bundle');
  });

  it("is tenant-scoped: another tenant's admin gets 404, and against is looked up in the bundle's tenant", async () => {
    const foreign = await diff(second, other.admin_token);
    assert.equal(foreign.status, 404, foreign.text);
    const stranger = await enrollAgent(base, other.enroll_token, { hostname: 'db-9' });
    const theirs = await collectAndUpload(stranger, '0.1.0', true);
    const crossed = await diff(second, support, theirs);
    assert.equal(crossed.status, 404, crossed.text);
    const mine = await diff(theirs, other.admin_token, second);
    assert.equal(mine.status, 404, mine.text);
    const unknown = await diff('bd_nope', support);
    assert.equal(unknown.status, 404, unknown.text);
    const anonymous = await api(base, 'GET', `/v1/support/bundles/${second}/diff`);
    assert.equal(anonymous.status, 401, anonymous.text);
  });

  it('answers 409 analysis_pending while either bundle is still being analysed', async () => {
    server.clock.advance(HOUR);
    const third = await collectAndUpload(agent, '0.2.0', false);
    await analysed(third);
    // Held as if a worker were on it (a lease far ahead): no worker takes it meanwhile.
    await server.deps.db
      .updateTable('bundle_insights')
      .set({ state: 'running', lease_until: new Date(T0 + 1000 * HOUR).toISOString() })
      .where('bundle_id', '=', second)
      .execute();
    const res = await diff(third, support);
    assert.equal(res.status, 409, res.text);
    assert.equal(res.json.error.code, 'analysis_pending');
    assert.match(res.json.error.message, new RegExp(second));
  });

  it('a deleted bundle is compared with nothing: 410 bundle_deleted for it or as against, and the default skips it', async () => {
    const deleted = await api(base, 'DELETE', `/v1/support/bundles/${first}`, { token: tenant.admin_token });
    assert.equal(deleted.status, 200, deleted.text);
    for (const res of [await diff(first, support), await diff(second, support, first)]) {
      assert.equal(res.status, 410, res.text);
      assert.equal(res.json.error.code, 'bundle_deleted');
    }
    const none = await diff(second, support);
    assert.equal(none.status, 409, none.text);
    assert.equal(none.json.error.code, 'no_previous_bundle');
  });
});
