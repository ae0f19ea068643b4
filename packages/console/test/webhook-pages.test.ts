// The console's webhook pages measured against Svix's and Stripe's dashboards (issue 21, item
// 7), as an admin uses them in Chromium against the real server and an HTTPS receiver: the
// delivery log across endpoints and its search; a delivery's request body indented with a copy
// of the exact bytes, and the response's headers; the event catalog; the local development
// guide, linked from Add Endpoint; an endpoint's page with its deliveries before rotation and
// replay, its health refreshing by itself, counts and retry times worded right; and a failing
// test event that raises no failing banner. axe, CLS and CSP checked on every page.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { waitForDeliveriesMade } from '../../server/test/delivery-waits.ts';
import { api, type Loose } from '../../server/test/harness.ts';
import { createEndpoint, createSignal } from '../../server/test/webhook-harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  NARROW,
  newContext,
  newPage,
  open,
  openWebhooks,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

const WEBHOOKS = '/settings/integrations/webhooks';

describe("an admin reads the webhook pages: the delivery log, a delivery's request and response, the event catalog, the local guide", () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let siem = { id: '' };
  let pager = { id: '' };
  const signals: string[] = [];

  before(async () => {
    world = await startConsoleWorld();
    world.receiver.on('/siem', () => ({ status: 204 }));
    world.receiver.on('/pager', () => ({
      status: 503,
      headers: {
        'x-request-id': 'req-7f3a',
        'set-cookie': 'session=receiver-cookie-secret; HttpOnly',
        'retry-after': '0',
      },
      body: JSON.stringify({ error: 'maintenance', retry: true }),
    }));
    const token = world.tenant.admin_token;
    siem = await createEndpoint(world.server, token, { name: 'SIEM ingest', url: world.receiver.url('/siem') });
    pager = await createEndpoint(world.server, token, { name: 'Pager relay', url: world.receiver.url('/pager') });
    for (const [severity, signal_type] of [
      [3, 'ssh_login_succeeded'],
      [4, 'sudo_command_executed'],
      [5, 'user_created'],
    ] as const) {
      signals.push((await createSignal(world.server, world.tenant.agentKey, { severity, signal_type })).signal_id);
      await new Promise((r) => setTimeout(r, 5));
    }
    await waitForDeliveriesMade(world.server, [siem.id, pager.id]);
    context = await newContext(world);
    page = await newPage(context);
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  const log = () => page.getByRole('table', { name: 'Deliveries to every endpoint, newest first' });
  /** Waits until the log shows `n` deliveries (the previous page stays while the next one loads). */
  const rowsShown = async (n: number) => {
    for (let i = 0; i < 300 && (await log().getByRole('row').count()) !== n + 1; i++)
      await new Promise((r) => setTimeout(r, 50));
    assert.equal(await log().getByRole('row').count(), n + 1, `${n} deliveries shown`);
  };

  test('Webhooks > Deliveries lists every endpoint’s deliveries, newest first', async () => {
    await openWebhooks(page);
    await page.getByRole('navigation', { name: 'Webhook pages' }).getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('heading', { level: 1, name: 'Webhook deliveries' }).waitFor();
    await waitForText(log(), 'Pager relay');
    const rows = log().getByRole('row');
    assert.equal(await rows.count(), 1 + 6, 'a header row and one row per signal and endpoint');
    const text = (await log().textContent()) ?? '';
    assert.match(text, /SIEM ingest/);
    assert.match(text, /signal_created/);
    assert.match(text, /succeeded/);
    assert.match(text, /failed/);
    await checkPage(page, 'webhook-deliveries');
  });

  test('the search finds a status, an endpoint and a signal, and keeps them in the URL', async () => {
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(/status=failed/);
    await rowsShown(3);
    assert.doesNotMatch((await log().textContent()) ?? '', /SIEM ingest/);

    await page.getByLabel('Status').selectOption('');
    await page.getByLabel('Endpoint', { exact: true }).selectOption({ label: 'SIEM ingest' });
    await page.getByLabel('Signal or event ID').fill(signals[1]);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(new RegExp(`signal_id=${signals[1]}`));
    await rowsShown(1); // the one delivery of that signal to that endpoint
    await waitForText(log(), 'SIEM ingest');
    await checkPage(page, 'webhook-deliveries-search');

    await page.getByLabel('Signal or event ID').fill('sig_nothing_like_it');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByRole('heading', { name: 'No delivery matches this search' }).waitFor();
  });

  test("a delivery shows its request body indented, copies the exact bytes, and the response's headers", async () => {
    await page.getByLabel('Endpoint', { exact: true }).selectOption({ label: 'Pager relay' });
    await page.getByLabel('Signal or event ID').fill(signals[0]);
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await rowsShown(1);
    await waitForText(log(), 'Pager relay');
    const [row] = (
      await api(world.base, 'GET', `/v1/webhooks/deliveries?signal_id=${signals[0]}&endpoint_id=${pager.id}`, {
        token: world.tenant.admin_token,
      })
    ).json.deliveries as Loose[];
    await page.getByRole('link', { name: `Delivery ${row.id}` }).click();
    await page.getByRole('heading', { level: 1, name: `Delivery ${row.id.split('-').at(-1)}` }).waitFor();
    await page.getByRole('button', { name: 'Show request and response' }).first().click();
    const body = page.getByRole('region', { name: /^Request body of attempt 3$/ });
    await waitForText(body, '"event_type": "signal_created"');
    assert.match((await body.textContent()) ?? '', /\n {2}"version": "v1",\n/, 'indented two spaces');

    const attempt = (
      await api(world.base, 'GET', `/v1/webhooks/deliveries/${row.id}/attempts/3`, { token: world.tenant.admin_token })
    ).json;
    await page.getByRole('button', { name: 'Copy the body of attempt 3' }).click();
    await waitForText(page.getByRole('status').filter({ hasText: 'Copied.' }), 'Copied.');
    assert.equal(
      await page.evaluate(() => navigator.clipboard.readText()),
      attempt.request.body,
      'the copy is the exact bytes signed',
    );

    const headers = page.getByRole('table', { name: 'Response headers of attempt 3' });
    await waitForText(headers, 'req-7f3a');
    const headersText = (await headers.textContent()) ?? '';
    assert.match(headersText, /set-cookie\[masked\]/);
    assert.doesNotMatch(await page.content(), /receiver-cookie-secret/, 'no credential of the receiver is shown');
    await waitForText(
      page.getByRole('region', { name: 'Response body of attempt 3 (excerpt)' }),
      '"error": "maintenance"',
    );
    await checkPage(page, 'delivery-response-headers');
  });

  test('the event catalog shows each event with its fields and an example to copy', async () => {
    await open(page, WEBHOOKS);
    await page.getByRole('navigation', { name: 'Webhook pages' }).getByRole('link', { name: 'Event catalog' }).click();
    await page.getByRole('heading', { level: 1, name: 'Event catalog' }).waitFor();
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    assert.deepEqual(
      headings.map((h) => h.split(' ')[0]),
      [
        'signal_created',
        'test',
        'endpoint.failing',
        'endpoint.disabled',
        'endpoint.certificate_expiring',
        'audit.event',
      ],
    );
    const fields = page.getByRole('table', { name: 'Fields of endpoint.failing' });
    await waitForText(fields, 'data.disable_at');
    await page.getByRole('button', { name: 'Copy the endpoint.failing example' }).click();
    const copied = JSON.parse(await page.evaluate(() => navigator.clipboard.readText()));
    assert.equal(copied.event_type, 'endpoint.failing');
    assert.equal(copied.data.percent, 50);
    await checkPage(page, 'webhook-event-catalog');
  });

  test('Add Endpoint links to the local development guide, which names every way to reach a laptop', async () => {
    await open(page, WEBHOOKS);
    await page.getByRole('button', { name: 'Add Endpoint' }).click();
    await page.getByRole('link', { name: 'developing a receiver locally' }).click();
    await page.getByRole('heading', { level: 1, name: 'Developing a webhook receiver on your machine' }).waitFor();
    const guide = page.getByRole('region', { name: 'Guide' });
    for (const text of ['guard listen --url', '--webhook-allow-private', 'NODE_EXTRA_CA_CERTS', 'guard trigger'])
      await waitForText(guide, text);
    await checkPage(page, 'webhooks-local-development');
  });

  test('the delivery log at 390 px', async () => {
    const narrow = await newContext(world, NARROW);
    try {
      const p = await newPage(narrow);
      await open(p, `${WEBHOOKS}/deliveries`);
      await signIn(p, world.tenant.admin_email, world.tenant.admin_password);
      await p.getByRole('heading', { level: 1, name: 'Webhook deliveries' }).waitFor();
      await waitForText(p.getByRole('table', { name: 'Deliveries to every endpoint, newest first' }), 'SIEM ingest');
      await checkPage(p, 'webhook-deliveries-390');
    } finally {
      await narrow.close();
    }
  });
});

describe("an endpoint's page: deliveries first, health that refreshes, words that count right, test events that raise no banner", () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let flaky = { id: '' };

  before(async () => {
    world = await startConsoleWorld();
    // Answers 503 with a Retry-After of two minutes: every delivery waits for its retry.
    world.receiver.on('/flaky', () => ({ status: 503, headers: { 'retry-after': '120' } }));
    world.receiver.on('/staging', () => ({ status: 500 }));
    flaky = await createEndpoint(world.server, world.tenant.admin_token, {
      name: 'Flaky receiver',
      url: world.receiver.url('/flaky'),
    });
    context = await newContext(world);
    page = await newPage(context);
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  const attemptsOf = async (id: string) =>
    (
      (await api(world.base, 'GET', `/v1/webhooks/endpoints/${id}/deliveries`, { token: world.tenant.admin_token }))
        .json.deliveries as Loose[]
    ).reduce((n, d) => n + d.attempts, 0);

  test('one failed attempt reads "1 failed attempt", its retry "in 2 minutes", and the deliveries come before rotation and replay', async () => {
    await createSignal(world.server, world.tenant.agentKey);
    for (let i = 0; i < 200 && (await attemptsOf(flaky.id)) < 1; i++) await new Promise((r) => setTimeout(r, 50));
    await open(page, `${WEBHOOKS}/${flaky.id}`);
    await page.getByRole('heading', { level: 1, name: 'Flaky receiver' }).waitFor();
    const health = page.getByRole('region', { name: 'Health' });
    await waitForText(health, '1 failed attempt in a row');
    assert.match((await health.textContent()) ?? '', /of 1 attempt in the last 24 h/);
    assert.doesNotMatch((await health.textContent()) ?? '', /1 attempts|1 failed attempts/);
    const table = page.getByRole('table', { name: 'Deliveries to this endpoint, newest first' });
    await waitForText(table, 'retrying');
    await waitForText(table, /in [12] minutes?/);
    const headings = await page.getByRole('heading', { level: 2 }).allTextContents();
    const at = (name: string) => headings.indexOf(name);
    assert.ok(at('Health') < at('Deliveries'), headings.join(' | '));
    assert.ok(at('Deliveries') < at('Secret rotation'), headings.join(' | '));
    assert.ok(at('Secret rotation') < at('Replay'), headings.join(' | '));
    await checkPage(page, 'endpoint-deliveries-first');
  });

  test('the health panel refreshes by itself as attempts fail', async () => {
    await createSignal(world.server, world.tenant.agentKey);
    for (let i = 0; i < 200 && (await attemptsOf(flaky.id)) < 2; i++) await new Promise((r) => setTimeout(r, 50));
    // No reload: the page reads the endpoint again every 10 s.
    await waitForText(page.getByRole('region', { name: 'Health' }), '2 failed attempts in a row', 25_000);
  });

  test('a retry whose time has come reads "due now", not "just now"', async () => {
    // A browser whose clock is three minutes ahead: the retries set for two minutes after their attempts are due.
    const ahead = await newContext(world);
    try {
      await ahead.clock.setFixedTime(new Date(Date.now() + 3 * 60_000));
      const p = await newPage(ahead);
      await open(p, `${WEBHOOKS}/${flaky.id}`);
      await signIn(p, world.tenant.admin_email, world.tenant.admin_password);
      const table = p.getByRole('table', { name: 'Deliveries to this endpoint, newest first' });
      await waitForText(table, 'due now');
      assert.doesNotMatch((await table.textContent()) ?? '', /just now/);
      await p
        .getByRole('link', { name: /^Delivery / })
        .first()
        .click();
      await waitForText(p.getByRole('region', { name: 'Delivery', exact: true }), 'Next retrydue now');
    } finally {
      await ahead.close();
    }
  });

  test("a test event's failure raises no failing banner; a signal's does", async () => {
    const staging = await createEndpoint(world.server, world.tenant.admin_token, {
      name: 'Staging receiver',
      url: world.receiver.url('/staging'),
      event_types: ['test'],
    });
    await open(page, `${WEBHOOKS}/${staging.id}`);
    await page.getByRole('button', { name: 'Send test event' }).click();
    const table = page.getByRole('table', { name: 'Deliveries to this endpoint, newest first' });
    await waitForText(table, 'failed');
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Staging receiver' }).waitFor();
    const health = page.getByRole('region', { name: 'Health' });
    await waitForText(health, 'Failure streaknone');
    await waitForText(health, 'not due: the endpoint is not failing');
    const banner = page.getByRole('region', { name: 'Webhook endpoints that need attention' });
    await waitForText(banner, 'Flaky receiver');
    assert.doesNotMatch((await banner.textContent()) ?? '', /Staging receiver/);
    await checkPage(page, 'endpoint-test-event-failed');
  });
});
