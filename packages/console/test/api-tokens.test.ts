// Settings > Account > API tokens in Chromium: an admin makes a read-only token and a custom
// one (areas chosen one by one, an expiry), sees the scopes, the expiry and the last use in the
// table, and the scoped token is refused outside its scopes. The audit log page downloads its
// entries as CSV and JSON Lines with the page's filters.

import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, it } from 'node:test';
import { api } from '../../server/test/harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  NARROW,
  newContext,
  newPage,
  open,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

let world: ConsoleWorld;

before(async () => {
  world = await startConsoleWorld();
});
after(() => world?.close());

describe('API tokens page', () => {
  it('creates read-only and custom-scoped tokens with an expiry, and shows scopes, expiry and last use', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/settings/account');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('heading', { name: 'Personal API tokens' }).waitFor();
      const expiry = page.getByLabel('Expires after');
      assert.equal(await expiry.inputValue(), '90', 'the page defaults to 90 days');
      assert.ok(await page.getByRole('radio', { name: 'Full access' }).isChecked());

      await page.getByLabel('Token name').fill('dashboards');
      await page.getByRole('radio', { name: 'Read-only' }).check();
      await page.getByRole('button', { name: 'Create token' }).click();
      const shown = page.getByLabel('API token', { exact: true });
      await shown.waitFor();
      const readOnly = await shown.inputValue();
      assert.match(readOnly, /^gut_/);
      const table = page.getByRole('table', { name: 'Your API tokens' });
      await waitForText(table, 'Read-only');

      await page.getByLabel('Token name').fill('siem export');
      await page.getByRole('radio', { name: 'Custom' }).check();
      // Nothing chosen: the form says so and creates nothing.
      await page.getByRole('button', { name: 'Create token' }).click();
      await page.getByText('Choose at least one area').waitFor();
      await page.getByLabel('Audit log').selectOption({ label: 'Read' });
      await page.getByLabel('Webhooks').selectOption({ label: 'Read and write' });
      assert.deepEqual(await page.getByLabel('Audit log').locator('option').allTextContents(), ['No access', 'Read']);
      await expiry.selectOption({ label: '30 days' });
      await checkPage(page, 'settings-api-token-scopes');
      await page.getByRole('button', { name: 'Create token' }).click();
      await waitForText(table, 'Webhooks: read and write; Audit log: read');
      const custom = await shown.inputValue();
      assert.notEqual(custom, readOnly);

      const listed = (await api(world.base, 'GET', '/v1/me/tokens', { token: world.tenant.admin_token })).json.tokens;
      const siem = listed.find((t: { name: string }) => t.name === 'siem export');
      assert.deepEqual(siem.scopes, ['webhooks:write', 'audit:read']);
      assert.equal(Date.parse(siem.expires_at) - Date.parse(siem.created_at), 30 * 86_400_000);
      const dashboards = listed.find((t: { name: string }) => t.name === 'dashboards');
      assert.equal(Date.parse(dashboards.expires_at) - Date.parse(dashboards.created_at), 90 * 86_400_000);

      // The scoped token works in its areas only.
      assert.equal((await api(world.base, 'GET', '/v1/audit', { token: custom })).status, 200);
      const refused = await api(world.base, 'GET', '/v1/users', { token: custom });
      assert.equal(refused.status, 403);
      assert.equal(refused.json.error.code, 'insufficient_scope');

      // Its use shows after a reload; the unused one still says Never.
      await page.reload();
      const row = (name: string) => table.getByRole('row').filter({ hasText: name });
      await row('siem export').waitFor();
      const cells = await row('siem export').getByRole('cell').allTextContents();
      assert.notEqual(cells[4], 'Never', `last used: ${cells.join(' | ')}`);
      assert.equal((await row('dashboards').getByRole('cell').allTextContents())[4], 'Never');
      const headers = await table.getByRole('columnheader').allTextContents();
      for (const h of ['Name', 'Scopes', 'Created', 'Expires', 'Last used'])
        assert.ok(headers.includes(h), headers.join());
      await checkPage(page, 'settings-api-tokens');
      await page.setViewportSize(NARROW);
      await checkPage(page, 'settings-api-tokens-narrow');
    } finally {
      await context.close();
    }
  });
});

describe('audit log downloads', () => {
  it('downloads CSV and JSON Lines with the filters of the page', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await api(world.base, 'POST', '/v1/users', {
        token: world.tenant.admin_token,
        body: { email: 'audited@example.com', role: 'member' },
      });
      await open(page, '/support/audit');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      await page.getByLabel('Action').fill('user.create');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      const csvLink = page.getByRole('link', { name: 'Download CSV' });
      await page.waitForFunction(() =>
        document.querySelector('a[download]')?.getAttribute('href')?.includes('action=user.create'),
      );
      await checkPage(page, 'audit-log-downloads');

      const [csv] = await Promise.all([page.waitForEvent('download'), csvLink.click()]);
      assert.match(
        csv.suggestedFilename(),
        new RegExp(`^guard-audit-${world.tenant.tenant_id}-\\d{4}-\\d{2}-\\d{2}\\.csv$`),
      );
      const text = await readFile((await csv.path()) as string, 'utf8');
      const [header, ...rows] = text.trimEnd().split('\r\n');
      assert.equal(header, 'id,at,actor_id,actor_email,actor_role,tenant_id,action,target');
      assert.ok(rows.length >= 1 && rows.every((r) => r.includes(',user.create,')), text);
      assert.ok(text.includes('admin'));

      const [jsonl] = await Promise.all([
        page.waitForEvent('download'),
        page.getByRole('link', { name: 'Download JSON Lines' }).click(),
      ]);
      assert.match(jsonl.suggestedFilename(), /\.jsonl$/);
      const lines = (await readFile((await jsonl.path()) as string, 'utf8')).trim().split('\n');
      assert.ok(lines.every((l) => JSON.parse(l).action === 'user.create'));
    } finally {
      await context.close();
    }
  });
});
