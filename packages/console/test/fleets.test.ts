// Fleets in the browser: the real guard-agent daemon and three servers enrolled through the API
// (heartbeating once, so online, with no daemon to take a request) on the real guard-server.
// The tenant's admin ticks servers on the Servers page and requests their bundles in one
// batch, follows the batch's page until the daemon's bundle is done and opens it; then asks by
// filter, previewed first (what matches, what is skipped and why); the recent batches are
// listed on the Servers page.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { ensureConsoleBuilt } from '../../../scripts/build-console.ts';
import { enrolledHome, startDaemon, stopAllDaemons } from '../../agent/test/daemon-harness.ts';
import { TempDirs } from '../../agent/test/harness.ts';
import { type GuardServer, startGuardServer } from '../../agent/test/upload-harness.ts';
import { checkPage, launchChromium, newContext, newPage, open, signIn, waitForText } from './console-harness.ts';

async function call(server: GuardServer, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> & { [k: string]: never } };
}

/** Enrols a server through the API and heartbeats once: online, but no daemon takes its requests. */
async function enrollOnline(server: GuardServer, hostname: string, environment: string, version: string) {
  const res = await fetch(`${server.url}/v1/agents/enroll`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ token: server.setup.enroll_token, hostname, environment, agent_version: version }),
  });
  assert.equal(res.status, 201);
  const agent = (await res.json()) as { api_key: string };
  const beat = await call(server, agent.api_key, 'POST', '/v1/agent/heartbeat', {
    agent_version: version,
    hostname,
    uptime_seconds: 3600,
  });
  assert.equal(beat.status, 200);
}

describe('an admin requests bundles from many servers at once and follows the batch', () => {
  const dirs = new TempDirs();
  let server: GuardServer;
  let browser: Browser;
  let page: Page;
  let daemonHost: string;

  before(async () => {
    await ensureConsoleBuilt();
    server = await startGuardServer(await dirs.make('server'));
    const home = await enrolledHome(dirs, server.url, server.setup.enroll_token);
    const daemon = startDaemon(home);
    await daemon.waitForLog(/msg="guard-agent daemon started"/, 'the daemon to start');
    await enrollOnline(server, 'web-01.acme.example', 'production', '0.1.0');
    await enrollOnline(server, 'web-02.acme.example', 'production', '0.2.0');
    await enrollOnline(server, 'db-01.acme.example', 'staging', '0.1.0');
    const servers = await call(server, server.setup.admin_token, 'GET', '/v1/servers');
    const list = servers.json.servers as unknown as { id: string; hostname: string }[];
    daemonHost = (list.find((s) => s.id === home.agentId) as { hostname: string }).hostname;
    browser = await launchChromium();
    page = await newPage(await newContext({ browser, base: server.url }));
  });
  after(async () => {
    await stopAllDaemons();
    await browser?.close();
    await server?.close();
    await dirs.cleanup();
  });

  test('on the Servers page, tick the daemon’s server and web-01 and request their bundles', async () => {
    await open(page, '/servers');
    await signIn(page, server.setup.admin_email, server.setup.admin_password);
    await page.getByRole('heading', { level: 1, name: 'Servers' }).waitFor();
    const request = page.getByRole('button', { name: /^Request bundles/ });
    assert.equal(await request.isDisabled(), true, 'nothing selected yet');
    await page.getByLabel('Select all shown').check();
    await waitForText(page.getByText('servers selected'), '4 servers selected');
    await page.getByLabel('Select all shown').uncheck();
    await page.getByLabel(`Select ${daemonHost}`).check();
    await page.getByLabel('Select web-01.acme.example').check();
    await waitForText(request, 'Request bundles (2)');
    await checkPage(page, 'servers-fleet-selected');
    await request.click();
    await page.getByRole('heading', { level: 1, name: 'Bundle batch' }).waitFor();
    assert.match(page.url(), /\/console\/bundle-batches\/bbt_/);
  });

  test('the batch page follows the requests live: the daemon’s bundle done, web-01 still queued', async () => {
    const status = page.getByRole('region', { name: 'Progress' }).getByRole('status');
    await waitForText(status, '1 of 2 finished', 60_000);
    const table = page.getByRole('table', { name: 'Servers of this batch' });
    const daemonRow = table.getByRole('row').filter({ hasText: daemonHost });
    await waitForText(daemonRow, 'done');
    await waitForText(table.getByRole('row').filter({ hasText: 'web-01.acme.example' }), 'queued');
    const counts = page.getByRole('list', { name: 'Requests by state' });
    await waitForText(counts, 'done 1');
    await waitForText(counts, 'queued 1');
    const bar = page.getByRole('progressbar', { name: 'Batch progress: 1 of 2 finished' });
    assert.equal(await bar.getAttribute('value'), '1');
    await checkPage(page, 'bundle-batch');
    await daemonRow.getByRole('link', { name: 'Open bundle' }).click();
    await waitForText(page.getByRole('region', { name: 'Summary' }), 'console_push');
  });

  test('request by filter: the preview says what matches and what is skipped, then the batch is made', async () => {
    await open(page, '/servers');
    const form = page.getByRole('form', { name: 'Request by filter' });
    await form.getByLabel('Environment').fill('production');
    await form.getByRole('button', { name: 'Preview' }).click();
    const preview = page.getByRole('status', { name: 'Preview' });
    await waitForText(preview, '1 server match: web-02.acme.example');
    await waitForText(preview, '1 skipped: 1 a request already open');
    await checkPage(page, 'servers-fleet-filter');
    await preview.getByRole('button', { name: 'Request 1 bundle' }).click();
    await page.getByRole('heading', { level: 1, name: 'Bundle batch' }).waitFor();
    await waitForText(page.getByRole('table', { name: 'Servers of this batch' }), 'web-02.acme.example');
    await waitForText(
      page.getByRole('table', { name: 'Servers skipped by this batch' }),
      'already has an open bundle request',
    );
  });

  test('the Servers page lists the recent batches, newest first, with their progress', async () => {
    await page.getByRole('link', { name: 'Back to the server list' }).click();
    const batches = page.getByRole('table', { name: 'Bundle batches, newest first' });
    await waitForText(batches, 'environment production');
    await waitForText(batches, 'selected servers');
    await waitForText(batches, '1 of 2 finished');
    const rows = await batches.getByRole('row').allTextContents();
    assert.match(rows[1], /environment production/, 'newest first');
    await checkPage(page, 'servers-fleet');
  });
});
