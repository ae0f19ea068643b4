// Settings > Scheduled collection in the browser (issue 24, item 5), against the real server:
// the tenant's admin sets the weekly run (weekday, hour UTC) and the critical-signal trigger with
// its interval, sees when the weekly run is next and the note that support access is unchanged;
// a critical signal of the tenant's server then makes a request, and the Servers page shows why.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
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

describe('an admin schedules support bundles in the console', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;

  before(async () => {
    world = await startConsoleWorld();
    context = await newContext(world);
    page = await newPage(context);
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  test('Settings > Scheduled collection: nothing scheduled yet, and support access is said to be unchanged', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page
      .getByRole('navigation', { name: 'Settings' })
      .getByRole('link', { name: 'Scheduled collection' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Scheduled collection' }).waitFor();
    await waitForText(page.getByRole('status', { name: 'Next weekly run' }), 'No weekly run is scheduled.');
    assert.equal(await page.getByLabel('Weekday').isDisabled(), true, 'off: its pickers wait');
    await waitForText(page.locator('#schedule-consent'), 'changes nothing about support access');
    await waitForText(page.locator('#schedule-consent'), '(now: not allowed)');
  });

  test('weekly on Wednesdays at 06:00 UTC and on critical signals every 12 hours: saved, with the next run', async () => {
    await page.getByLabel('Request a bundle from every online server once a week').check();
    await page.getByLabel('Weekday').selectOption('wednesday');
    await page.getByLabel('Hour (UTC)').selectOption({ label: '06:00' });
    await page.getByLabel('Request a bundle from a server when it raises a critical signal').check();
    await page.getByLabel('At most one per server every (hours)').fill('0');
    assert.equal(await page.getByRole('button', { name: 'Save schedule' }).isDisabled(), true, '0 hours is refused');
    await page.getByLabel('At most one per server every (hours)').fill('12');
    await page.getByRole('button', { name: 'Save schedule' }).click();
    await waitForText(
      page.getByRole('status').filter({ hasText: 'Saved' }),
      'weekly on Wednesday at 06:00 UTC; on critical signals, at most one per server every 12 hours',
    );
    const next = page.getByRole('status', { name: 'Next weekly run' });
    await waitForText(next, 'Next weekly run:');
    const at = new Date((await next.locator('time').getAttribute('datetime')) as string);
    assert.equal(at.getUTCDay(), 3, 'a Wednesday');
    assert.equal(at.toISOString().slice(11), '06:00:00.000Z');
    assert.ok(at.getTime() > Date.now() && at.getTime() - Date.now() <= 7 * 86_400_000, 'within the week to come');
    const saved = await api(world.base, 'GET', '/v1/tenant/collection-schedule', { token: world.tenant.admin_token });
    assert.deepEqual(saved.json.collection_schedule, {
      weekly: { enabled: true, weekday: 'wednesday', hour: 6 },
      on_critical_signal: { enabled: true, min_interval_hours: 12 },
    });
    await checkPage(page, 'settings-collection-schedule');
  });

  test('a critical signal of the server makes a request; the Servers page says the schedule asked, on which signal', async () => {
    const raised = await api(world.base, 'POST', '/v1/signals', {
      token: world.tenant.agentKey,
      body: {
        signal_type: 'disk_failing',
        severity: 5,
        description: 'sda: SMART failure predicted',
        identity_id: 'root',
        identity_name: 'root',
      },
    });
    assert.equal(raised.status, 201, raised.text);
    await page.getByRole('link', { name: 'Servers' }).first().click();
    await page.getByRole('heading', { level: 1, name: 'Servers' }).waitFor();
    const row = page
      .getByRole('table', { name: 'Bundle requests, newest first' })
      .getByRole('row')
      .filter({ hasText: world.tenant.hostname });
    await waitForText(row, 'by the schedule, on a critical signal');
    assert.equal(
      await row.getByRole('link', { name: 'critical signal' }).getAttribute('href'),
      `/console/signals/${raised.json.signal_id}`,
    );
    await checkPage(page, 'servers-scheduled-request');
  });
});
