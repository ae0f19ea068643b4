// The rest of the console an admin uses — signals (severity words, filters, keyset paging),
// servers and enrolment tokens, their own account — by keyboard where it matters, and every
// main page again at 390 px wide.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
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

const SEVERITY_WORDS = ['info', 'low', 'medium', 'high', 'critical'];

describe('the console’s pages for an admin', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let endpointId = '';

  before(async () => {
    world = await startConsoleWorld();
    // 30 signals: more than one page (25), every severity.
    for (let i = 0; i < 30; i++) {
      const res = await api(world.base, 'POST', '/v1/signals', {
        token: world.tenant.agentKey,
        body: {
          signal_type: i % 3 === 0 ? 'ssh_login_failed' : 'sudo_command_executed',
          severity: (i % 5) + 1,
          description: `signal number ${i + 1}`,
          identity_id: `uid-${1000 + i}`,
          identity_name: i % 2 ? 'alice' : 'deploy-bot',
        },
      });
      assert.equal(res.status, 201);
    }
    const endpoint = await api(world.base, 'POST', '/v1/webhooks/endpoints', {
      token: world.tenant.admin_token,
      body: { name: 'SIEM ingest', url: world.receiver.url('/siem') },
    });
    endpointId = endpoint.json.id;
    await api(world.base, 'POST', `/v1/webhooks/endpoints/${endpointId}/test`, { token: world.tenant.admin_token });
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  test('signs in with the keyboard alone, and focus is visible', async () => {
    await open(page, '/');
    await page.getByLabel('Email').waitFor();
    await page.keyboard.press('Tab');
    const focused = () => page.evaluate(() => document.activeElement?.id ?? '');
    const email = await page.getByLabel('Email').getAttribute('id');
    assert.equal(await focused(), email, 'Tab reaches Email first');
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
    assert.notEqual(outline, 'none', 'the focused field shows a focus ring');
    await page.keyboard.type(world.tenant.admin_email);
    await page.keyboard.press('Tab');
    await page.keyboard.type(world.tenant.admin_password);
    await page.keyboard.press('Enter');
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
  });

  test('Signals: severity words, type, server, identity and time with its exact value on hover', async () => {
    await page.getByRole('heading', { level: 1, name: 'Signals' }).waitFor();
    const table = page.getByRole('table', { name: /Signals, newest first/ });
    await waitForText(table, 'signal number 30');
    const rows = table.getByRole('row');
    assert.equal(await rows.count(), 26, 'a header and 25 signals');
    const first = rows.nth(1);
    await waitForText(first, 'critical');
    await waitForText(first, world.tenant.hostname);
    await waitForText(first, 'alice');
    const time = first.locator('time');
    assert.match((await time.getAttribute('title')) ?? '', /UTC$/);
    assert.match((await time.textContent()) ?? '', /just now|seconds? ago/);
    for (const word of SEVERITY_WORDS) await table.getByText(word, { exact: true }).first().waitFor();
    await checkPage(page, 'signals');
  });

  test('keyset paging: the next page holds the rest, the previous one comes back', async () => {
    const table = page.getByRole('table', { name: /Signals, newest first/ });
    await page.getByRole('button', { name: 'Next page' }).click();
    await waitForText(table, 'signal number 5');
    assert.equal(await table.getByRole('row').count(), 6);
    assert.ok(await page.getByRole('button', { name: 'Next page' }).isDisabled());
    await page.getByRole('button', { name: 'Previous page' }).click();
    await waitForText(table, 'signal number 30');
  });

  test('filters by minimum severity and type; the filter is in the URL', async () => {
    await page.getByLabel('Minimum severity').selectOption('4');
    await page.getByLabel('Signal type').fill('ssh_login_failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/severity_min=4/);
    const table = page.getByRole('table', { name: /Signals, newest first/ });
    await page.waitForFunction(() => document.querySelectorAll('tbody tr').length === 4);
    const text = (await table.textContent()) ?? '';
    assert.ok(!/\binfo\b|\blow\b|\bmedium\b/.test(text), text);
    await page.reload();
    await waitForText(page.getByRole('table', { name: /Signals, newest first/ }), 'ssh_login_failed');
    assert.equal(await page.getByLabel('Minimum severity').inputValue(), '4');
  });

  test('Servers: the enrolled agent, and an enrolment token shown once with its command', async () => {
    await page.getByRole('link', { name: 'Servers' }).click();
    const servers = page.getByRole('table', { name: 'Enrolled servers' });
    await waitForText(servers, world.tenant.hostname);
    await waitForText(servers, 'production');
    await waitForText(servers, '0.1.0');
    await page.getByRole('button', { name: 'Create enrolment token' }).click();
    const token = await page.getByLabel('Enrolment token', { exact: true }).inputValue();
    assert.match(token, /^get_/);
    assert.equal(
      await page.getByLabel('Enrol command').inputValue(),
      `guard-agent enroll --url ${world.base} --token -`,
    );
    const tokens = page.getByRole('table', { name: 'Enrolment tokens' });
    await waitForText(tokens, '0 of 1');
    await checkPage(page, 'servers');
    const row = tokens.getByRole('row').filter({ hasText: '0 of 1' }).first();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke' }).click();
    await waitForText(tokens, 'revoked');
  });

  test('Account: a personal API token shown once works as a bearer token; sessions list this browser', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Account' }).click();
    await page.getByLabel('Token name').fill('deploy script');
    await page.getByRole('button', { name: 'Create token' }).click();
    const token = await page.getByLabel('API token', { exact: true }).inputValue();
    assert.match(token, /^gut_/);
    const me = await api(world.base, 'GET', '/v1/webhooks/endpoints', { token });
    assert.equal(me.status, 200);
    await waitForText(page.getByRole('table', { name: 'Your sessions' }), 'this browser');
    await checkPage(page, 'account');
    await page.reload();
    await page.getByRole('heading', { name: 'Personal API tokens' }).waitFor();
    assert.ok(!(await page.content()).includes(token), 'the token is shown once');
  });

  test('Account: changing the password needs the current one', async () => {
    await page.getByLabel('Current password').fill('not my password at all');
    await page.getByLabel('New password').fill('a new passphrase of mine');
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('This is not your current password.').waitFor();
    await page.getByLabel('Current password').fill(world.tenant.admin_password);
    await page.getByRole('button', { name: 'Change password' }).click();
    await page.getByText('Password changed.').waitFor();
    world.tenant.admin_password = 'a new passphrase of mine';
  });

  test('every main page works at 390 px wide', async () => {
    const narrow = await newContext(world, NARROW);
    try {
      const phone = await newPage(narrow);
      await open(phone, '/');
      await checkPage(phone, 'sign-in-390');
      await signIn(phone, world.tenant.admin_email, world.tenant.admin_password);
      const pages: [string, string, string][] = [
        ['/signals', 'Signals', 'signals-390'],
        ['/servers', 'Servers', 'servers-390'],
        ['/support/bundles', 'Support bundles', 'support-bundles-390'],
        ['/settings/integrations', 'Integrations', 'integrations-390'],
        ['/settings/integrations/webhooks', 'Webhooks', 'webhooks-390'],
        ['/settings/integrations/webhooks/new', 'Add Endpoint', 'add-endpoint-390'],
        [`/settings/integrations/webhooks/${endpointId}`, 'SIEM ingest', 'endpoint-detail-390'],
        ['/settings/users', 'Users', 'users-390'],
        ['/settings/account', 'Account', 'account-390'],
      ];
      for (const [path, heading, name] of pages) {
        await open(phone, path);
        await phone.getByRole('heading', { level: 1, name: heading }).waitFor();
        await checkPage(phone, name);
      }
      // The navigation is all there on a phone.
      for (const name of ['Signals', 'Servers', 'Support bundles', 'Settings'])
        assert.ok(await phone.getByRole('link', { name, exact: true }).isVisible(), `${name} visible at 390 px`);
    } finally {
      await narrow.close();
    }
  });
});
