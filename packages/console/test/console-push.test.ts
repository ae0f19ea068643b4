// Console push, end to end in the browser: the real guard-agent daemon runs against the real
// guard-server on loopback. Support staff ask a server for a support bundle on the Servers page
// — refused until the tenant's admin allows support access there — and follow the request
// live until it is done; the bundle arrives with trigger console_push, its insights show on
// the bundle's page, and a finding's evidence opens at its line, in context.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { ensureConsoleBuilt } from '../../../scripts/build-console.ts';
import { enrolledHome, type RunningDaemon, startDaemon, stopAllDaemons } from '../../agent/test/daemon-harness.ts';
import { TempDirs } from '../../agent/test/harness.ts';
import { type GuardServer, startGuardServer } from '../../agent/test/upload-harness.ts';
import { checkPage, launchChromium, newContext, newPage, open, signIn, waitForText } from './console-harness.ts';

describe('support staff ask a server for a bundle in the console, and read its insights', () => {
  const dirs = new TempDirs();
  let server: GuardServer;
  let browser: Browser;
  let daemon: RunningDaemon;
  let hostname: string;
  let support: { context: BrowserContext; page: Page };

  before(async () => {
    await ensureConsoleBuilt();
    server = await startGuardServer(await dirs.make('server'));
    const home = await enrolledHome(dirs, server.url, server.setup.enroll_token);
    daemon = startDaemon(home);
    await daemon.waitForLog(/msg="guard-agent daemon started"/, 'the daemon to start');
    browser = await launchChromium();
    const context = await newContext({ browser, base: server.url });
    support = { context, page: await newPage(context) };
    const servers = await fetch(`${server.url}/v1/servers`, {
      headers: { authorization: `Bearer ${server.setup.admin_token}` },
    });
    hostname = ((await servers.json()) as { servers: { hostname: string }[] }).servers[0].hostname;
  });
  after(async () => {
    await stopAllDaemons();
    await browser?.close();
    await server?.close();
    await dirs.cleanup();
  });

  const serverRow = (page: Page) =>
    page.getByRole('table', { name: 'Enrolled servers' }).getByRole('row').filter({ hasText: hostname });

  test('support staff see every tenant’s servers, online, with the daemon’s version', async () => {
    const { page } = support;
    await open(page, '/');
    await signIn(page, server.setup.support_email as string, server.setup.support_password as string);
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Servers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Servers' }).waitFor();
    await waitForText(serverRow(page), 'online');
    await waitForText(serverRow(page), '0.1.0');
    await checkPage(page, 'servers-support');
  });

  test('until the tenant allows it, their request is refused, saying why', async () => {
    const { page } = support;
    await serverRow(page).getByRole('button', { name: 'Request support bundle' }).click();
    const alert = page.getByRole('alert');
    await waitForText(alert, `Could not request a bundle from ${hostname}`);
    await waitForText(alert, 'does not allow support-initiated collection');
  });

  test('the tenant’s admin allows support access on the Servers page', async () => {
    const context = await newContext({ browser, base: server.url });
    try {
      const page = await newPage(context);
      await open(page, '/servers');
      await signIn(page, server.setup.admin_email, server.setup.admin_password);
      const allow = page.getByLabel('Let Guard support request bundles from these servers');
      await allow.waitFor();
      assert.equal(await allow.isChecked(), false);
      await allow.check();
      await waitForText(page.getByRole('region', { name: 'Support access' }), 'every request is in your audit log');
      await checkPage(page, 'servers-admin');
    } finally {
      await context.close();
    }
  });

  test('support asks again: the request goes live through its states to done', async () => {
    const { page } = support;
    await page.reload();
    await serverRow(page).getByRole('button', { name: 'Request support bundle' }).click();
    const requests = page.getByRole('table', { name: 'Bundle requests, newest first' });
    await waitForText(requests, hostname);
    await waitForText(page.getByRole('status').filter({ hasText: 'Latest:' }), `Latest: ${hostname}, done.`, 30_000);
    await requests.getByRole('link', { name: 'Open bundle' }).waitFor();
    await checkPage(page, 'servers-request-done');
  });

  test('the bundle arrived with trigger console_push, and its insights are on its page', async () => {
    const { page } = support;
    await page
      .getByRole('table', { name: 'Bundle requests, newest first' })
      .getByRole('link', { name: 'Open bundle' })
      .click();
    const summary = page.getByRole('region', { name: 'Summary' });
    await waitForText(summary, 'console_push');
    const insights = page.getByRole('region', { name: 'Insights' });
    await waitForText(insights, '“probe detach failed” ×2', 30_000);
    await waitForText(insights, 'agent.log: 2 ERROR lines and 1 WARN line');
    await checkPage(page, 'bundle-insights');
  });

  test('a finding’s evidence opens at its line, shown in context', async () => {
    const { page } = support;
    await page.getByRole('region', { name: 'Insights' }).getByRole('link', { name: 'agent.log line 4' }).click();
    await page.getByRole('heading', { level: 1, name: 'agent.log, line 4' }).waitFor();
    const lines = page.getByRole('region', { name: 'Lines of agent.log' });
    await waitForText(lines, 'guard-agent starting');
    const hit = lines.locator('[aria-current="true"]');
    await waitForText(hit, 'probe detach failed');
    assert.match((await hit.textContent()) ?? '', /pid=1012/);
    await checkPage(page, 'bundle-evidence');
    await page.getByRole('link', { name: 'Back to the bundle' }).click();
    await page.getByRole('region', { name: 'Insights' }).waitFor();
  });
});
