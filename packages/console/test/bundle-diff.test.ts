// Compare with previous, on a bundle's page: two real bundles collected by the agent's own
// collect from one agent home that changed between them (a segment rotated away and another
// added, the exec detector back up, BTF gone, a newer agent) are uploaded and analysed; support
// staff open the second and compare it with the first — members, findings, system fields.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import type { BrowserContext, Page } from 'playwright-core';
import { collectBundle } from '../../agent/src/bundle/index.ts';
import { SILENT_PROGRESS } from '../../agent/src/progress.ts';
import { analysedInsights } from '../../server/test/bundle-harness.ts';
import { presign, putObject, register } from '../../server/test/harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

describe('support staff compare a bundle with the previous one of its server', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let root: string;
  let first = '';
  let second = '';

  async function collectAndUpload(version: string, btf: boolean, name: string): Promise<string> {
    const logPath = join(root, 'log', 'agent.log');
    const stateDir = join(root, 'state');
    const out = join(root, name);
    const result = await collectBundle({
      config: {
        source: undefined,
        effective: { log_path: logPath, state_dir: stateDir },
        logPath,
        stateDir,
        environment: undefined,
        extraKeys: [],
      },
      out,
      cwd: root,
      agentVersion: version,
      trigger: 'cli',
      now: () => new Date(),
      progress: SILENT_PROGRESS,
      sources: {
        osRelease: join(root, 'os-release'),
        btfVmlinux: join(root, btf ? 'btf' : 'no-btf'),
        unprivilegedBpfDisabled: join(root, 'unpriv'),
      },
    });
    const bytes = await readFile(out);
    const sha256 = createHash('sha256').update(bytes).digest('hex');
    const slot = await presign(world.base, world.tenant.agentKey, { filename: name, size: bytes.length, sha256 });
    assert.equal(slot.status, 200, slot.text);
    assert.equal((await putObject(slot.json.url, bytes, { headers: slot.json.headers })).status, 200);
    const registered = await register(world.base, world.tenant.agentKey, {
      object_key: slot.json.object_key,
      sha256,
      size: bytes.length,
      manifest: result.manifest,
    });
    assert.equal(registered.status, 201, registered.text);
    const id = registered.json.bundle_id as string;
    await analysedInsights(world.base, world.support.token, id);
    return id;
  }

  before(async () => {
    world = await startConsoleWorld();
    root = await mkdtemp(join(os.tmpdir(), 'guard-console-diff-'));
    await mkdir(join(root, 'log'), { recursive: true });
    await mkdir(join(root, 'state'), { recursive: true });
    await writeFile(join(root, 'btf'), '');
    await writeFile(join(root, 'os-release'), 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12"\n');
    await writeFile(join(root, 'unpriv'), '2\n');
    const line = (msg: string) => `time=${new Date().toISOString()} level=INFO msg="${msg}"\n`;
    const status = (exec: Record<string, string>) =>
      JSON.stringify({
        updated_at: new Date().toISOString(),
        detectors: [
          { name: 'auth_log', state: 'running' },
          { name: 'exec', ...exec },
        ],
        spool_depth: 0,
        ...(exec.state === 'failed' ? { state: 'failed', error: exec.reason } : { state: 'running' }),
      });
    await writeFile(join(root, 'log', 'agent.log'), line('started'));
    await writeFile(join(root, 'log', 'agent.log.1.gz'), gzipSync(line('older')));
    await writeFile(join(root, 'state', 'probe-status.json'), status({ state: 'failed', reason: 'no BTF' }));
    first = await collectAndUpload('0.1.0', true, '1795255200.tar.zst');
    await writeFile(join(root, 'log', 'agent.log'), line('started again'));
    await unlink(join(root, 'log', 'agent.log.1.gz'));
    await writeFile(join(root, 'log', 'agent.log.2.gz'), gzipSync(line('oldest')));
    await writeFile(join(root, 'state', 'probe-status.json'), status({ state: 'running' }));
    second = await collectAndUpload('0.2.0', false, '1795341600.tar.zst');
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('the first bundle of a server has nothing to compare with, and says so', async () => {
    await open(page, '/');
    await signIn(page, world.support.email, world.support.password);
    await page.getByRole('heading', { level: 1, name: 'Support bundles' }).waitFor();
    await open(page, `/support/bundles/${first}`);
    await page.getByRole('heading', { level: 1, name: '1795255200.tar.zst' }).waitFor();
    const compare = page.getByRole('region', { name: 'Compare with previous' });
    await compare.getByRole('button', { name: 'Compare with previous' }).click();
    await waitForText(compare, 'first bundle of its server');
  });

  test('Compare with previous shows members, findings and system fields that changed', async () => {
    await open(page, `/support/bundles/${second}`);
    await page.getByRole('heading', { level: 1, name: '1795341600.tar.zst' }).waitFor();
    const compare = page.getByRole('region', { name: 'Compare with previous' });
    await compare.getByRole('button', { name: 'Compare with previous' }).click();
    await waitForText(compare, `bundle ${first}`);
    const members = compare.getByRole('table', { name: 'Members added, removed or changed' });
    await waitForText(members.getByRole('row').filter({ hasText: 'agent.log.1.gz' }), 'removed');
    await waitForText(members.getByRole('row').filter({ hasText: 'agent.log.2.gz' }), 'added');
    await waitForText(members.getByRole('row').filter({ hasText: 'system.json' }), 'changed');
    await waitForText(compare, '1 member is the same.');
    await waitForText(compare.getByRole('list', { name: 'New findings' }), 'ebpf.btf_missing');
    await waitForText(compare.getByRole('list', { name: 'New findings' }), 'change.agent_version');
    await waitForText(compare.getByRole('list', { name: 'Resolved findings' }), 'ebpf.probe_failed');
    const system = compare.getByRole('table', { name: 'system.json fields that changed' });
    await waitForText(system.getByRole('row').filter({ hasText: 'agent_version' }), '0.1.00.2.0');
    await waitForText(system.getByRole('row').filter({ hasText: 'detectors.exec' }), 'failed: no BTFrunning');
    await waitForText(system.getByRole('row').filter({ hasText: 'ebpf.btf_present' }), 'truefalse');
    await checkPage(page, 'bundle-diff');
    // The earlier bundle is a link away.
    await compare.getByRole('link', { name: `bundle ${first}` }).click();
    await page.getByRole('heading', { level: 1, name: '1795255200.tar.zst' }).waitFor();
  });
});
