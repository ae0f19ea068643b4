// Bundle retention and deletion in the console (issue 24, item 6): the admin sets how long the
// tenant keeps its bundles (Settings > Data retention) and deletes one bundle from its page,
// asked twice; the retention sweep deletes an old one; support staff then see both as deleted —
// by whom, when, why — and nothing of their content.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { maintain } from '../../server/src/server.ts';
import { uploadBundle } from '../../server/test/harness.ts';
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

const DAY_MS = 86_400_000;
const silent = { info() {}, error() {} };

describe('an admin deletes a bundle and sets bundle retention; support sees them deleted', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let deleted: Awaited<ReturnType<typeof uploadBundle>>;
  let expired: Awaited<ReturnType<typeof uploadBundle>>;

  before(async () => {
    world = await startConsoleWorld();
    deleted = await uploadBundle(world.base, world.tenant.agentKey, { filename: 'deleted-by-admin.tar.zst' });
    expired = await uploadBundle(world.base, world.tenant.agentKey, { filename: 'past-retention.tar.zst' });
    // The second bundle arrived 40 days ago: past the 30 days the admin sets below.
    await world.server.deps.db
      .updateTable('bundles')
      .set({ uploaded_at: new Date(world.server.clock.now().getTime() - 40 * DAY_MS).toISOString() })
      .where('id', '=', expired.bundle_id)
      .execute();
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  test('Settings > Data retention: the admin keeps support bundles 30 days instead of the default 90', async () => {
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Data retention' }).click();
    const form = page.getByRole('form', { name: 'Support bundles retention' });
    const field = form.getByLabel('Retention (days)');
    assert.equal(await field.inputValue(), '90');
    await waitForText(form, "Now the server's default, 90 days.");
    await field.fill('366');
    assert.equal(await form.getByRole('button', { name: 'Save retention' }).isDisabled(), true, 'over the maximum');
    await field.fill('30');
    await form.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('Saved: support bundles are kept 30 days.').waitFor();
    await checkPage(page, 'settings-bundle-retention');
  });

  test('the admin deletes a bundle from its page, asked twice; the page then shows it deleted', async () => {
    await open(page, `/support/bundles/${deleted.bundle_id}`);
    await page.getByRole('heading', { level: 1, name: 'deleted-by-admin.tar.zst' }).waitFor();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('Delete this bundle? Its file is removed from storage').waitFor();
    await checkPage(page, 'bundle-delete-confirm');
    await page.getByRole('button', { name: 'Delete' }).click();
    const notice = page.getByRole('status').filter({ hasText: 'Deleted' });
    await waitForText(notice, `by ${world.tenant.admin_email} (admin)`);
    assert.equal(await page.getByRole('link', { name: /Download bundle/ }).count(), 0);
    assert.equal(await world.server.deps.store.verify(deleted.object_key), undefined, 'the object left the store');
  });

  test('the retention sweep deletes the bundle older than 30 days', async () => {
    await maintain(world.server.deps, world.server.deps.config, silent);
    assert.equal(await world.server.deps.store.verify(expired.object_key), undefined);
  });

  test('support staff see both bundles deleted — who, when, why — and no content', async () => {
    const supportContext = await newContext(world);
    try {
      const support = await newPage(supportContext);
      await open(support, '/');
      await signIn(support, world.support.email, world.support.password);
      const table = support.getByRole('table', { name: /Support bundles/ });
      const adminRow = table.getByRole('row').filter({ hasText: 'deleted-by-admin.tar.zst' });
      await waitForText(adminRow, `by ${world.tenant.admin_email}`);
      await waitForText(table.getByRole('row').filter({ hasText: 'past-retention.tar.zst' }), 'by retention');
      await checkPage(support, 'support-bundles-deleted');

      await table.getByRole('link', { name: 'past-retention.tar.zst' }).click();
      await support.getByRole('heading', { level: 1, name: 'past-retention.tar.zst' }).waitFor();
      await waitForText(support.getByRole('status').filter({ hasText: 'Deleted' }), 'by retention');
      assert.equal(await support.getByRole('link', { name: /Download bundle/ }).count(), 0);
      assert.equal(await support.getByRole('button', { name: 'Delete' }).count(), 0, 'support deletes nothing');
      assert.equal(await support.getByRole('region', { name: 'Insights' }).count(), 0);
      await checkPage(support, 'bundle-deleted-support');
    } finally {
      await supportContext.close();
    }
  });
});
