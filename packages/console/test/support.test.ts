// Vendor support staff find the bundle an agent uploaded — across tenants, by filter — and read
// its manifest: contents with sizes and hashes, trimmed segments, redaction counts, collection
// errors; they download it, and every read shows in the audit log.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { presign, putObject, register, validManifest } from '../../server/test/harness.ts';
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

describe('support staff read an uploaded bundle in the console', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let bundleId = '';
  const bytes = randomBytes(64 * 1024);
  const sha256 = createHash('sha256').update(bytes).digest('hex');

  before(async () => {
    world = await startConsoleWorld();
    // The agent's upload: presign, PUT the bytes, register with the manifest (DESIGN §4).
    const slot = await presign(world.base, world.tenant.agentKey, {
      filename: '1795255200.tar.zst',
      size: bytes.length,
      sha256,
    });
    assert.equal(slot.status, 200);
    const put = await putObject(slot.json.url, bytes, { headers: slot.json.headers });
    assert.equal(put.status, 200, put.text);
    const manifest = validManifest({
      trimmed_segments: ['agent.log.4.gz', 'agent.log.5.gz'],
      collection_errors: [{ source: '/var/log/guard/agent.log.2.gz', message: 'not a regular file (symlink)' }],
    });
    const registered = await register(world.base, world.tenant.agentKey, {
      object_key: slot.json.object_key,
      sha256,
      size: bytes.length,
      manifest,
    });
    assert.ok(registered.status === 200 || registered.status === 201, registered.text);
    bundleId = registered.json.bundle_id;
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  test('support signs in and lands on Support bundles; Signals is not in the navigation', async () => {
    await open(page, '/');
    await signIn(page, world.support.email, world.support.password);
    await page.getByRole('heading', { level: 1, name: 'Support bundles' }).waitFor();
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Support bundles' }).waitFor();
    assert.equal(await nav.getByRole('link', { name: 'Signals' }).count(), 0, 'support sees no Signals');
    // Servers: every tenant's, to ask one for a bundle (console push, console-push.test.ts).
    await nav.getByRole('link', { name: 'Servers' }).waitFor();
  });

  test('finds the bundle by its tenant and opens it', async () => {
    await page.getByLabel('Tenant ID').fill(world.tenant.tenant_id);
    await page.getByLabel('Trigger').selectOption('cli');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    const table = page.getByRole('table', { name: /Support bundles/ });
    await waitForText(table, world.tenant.hostname);
    assert.match(page.url(), new RegExp(`tenant_id=${world.tenant.tenant_id}`));
    await checkPage(page, 'support-bundles');
    await table.getByRole('link', { name: '1795255200.tar.zst' }).click();
    await page.getByRole('heading', { level: 1, name: '1795255200.tar.zst' }).waitFor();
  });

  test('the manifest summary shows trimmed segments, contents, redaction and collection errors', async () => {
    const trimmed = page.getByRole('region', { name: 'Trimmed segments' });
    await waitForText(trimmed, 'agent.log.4.gz');
    await waitForText(trimmed, 'agent.log.5.gz');
    const contents = page.getByRole('table', { name: /Members of the bundle/ });
    const log = contents.getByRole('row').filter({ hasText: 'agent.log' }).first();
    const manifest = validManifest() as { contents: { sha256: string }[] };
    await waitForText(log, manifest.contents[0].sha256);
    await waitForText(page.getByRole('region', { name: 'Redaction' }), '1 value masked');
    await waitForText(page.getByRole('region', { name: 'Collection errors' }), 'not a regular file (symlink)');
    await checkPage(page, 'bundle-detail');
  });

  test('downloads the bundle: the same bytes the agent uploaded', async () => {
    const download = page.waitForEvent('download');
    await page.getByRole('link', { name: /Download bundle/ }).click();
    const file = await (await download).path();
    assert.equal(
      createHash('sha256')
        .update(await readFile(file))
        .digest('hex'),
      sha256,
    );
  });

  test('the audit log shows each read', async () => {
    await page.getByRole('link', { name: 'Audit log' }).click();
    const table = page.getByRole('table', { name: /Audit entries/ });
    await waitForText(table, 'bundle.download');
    await waitForText(table, 'bundle.show');
    await waitForText(table, bundleId);
    await checkPage(page, 'audit-log');
  });
});
