// An admin chooses what an endpoint receives and its rate limit, sees a failing endpoint's
// banner and health, and replays its failed deliveries after the outage — seeing the count
// before confirming, then the progress — and cancels a long replay; in Chromium against the
// real server and a real HTTPS receiver (axe, CLS and CSP checked on every page).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { replayFeederPassed, waitForDeliveriesMade } from '../../server/test/delivery-waits.ts';
import { api } from '../../server/test/harness.ts';
import { seedDeliveries } from '../../server/test/webhook-harness.ts';
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

describe('an admin runs webhook endpoints: events, rate limit, health, replay', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let down = true;
  let failingId = '';
  let slowId = '';

  before(async () => {
    world = await startConsoleWorld();
    world.receiver.on('/down', () => ({ status: down ? 503 : 204 }));
    world.receiver.on('/slow', async () => {
      await new Promise((r) => setTimeout(r, 100));
      return { status: 204 };
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

  const token = () => world.tenant.admin_token;
  const deliveriesOf = async (id: string) =>
    (await api(world.base, 'GET', `/v1/webhooks/endpoints/${id}/deliveries?limit=100`, { token: token() })).json
      .deliveries as { id: string; status: string }[];

  test('Add Endpoint chooses the events, a minimum severity, signal types and a rate limit', async () => {
    await openWebhooks(page);
    await page.getByRole('button', { name: 'Add Endpoint' }).click();
    await page.getByLabel('Name').fill('Pager relay');
    await page.getByLabel('URL').fill(world.receiver.url('/relay'));
    assert.equal(await page.getByLabel('Signals', { exact: true }).isChecked(), true, 'signals by default');
    assert.equal(await page.getByLabel('Endpoint failing').isChecked(), false, 'operational events are opt-in');
    await page.getByLabel('Endpoint failing').check();
    await page.getByLabel('Endpoint disabled').check();
    await page.getByLabel('Minimum severity').selectOption('3');
    await page.getByLabel('Signal types').fill('sudo_command_executed, ssh_login');
    await page.getByLabel('Rate limit (deliveries per second)').fill('0');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const rate = page.getByLabel('Rate limit (deliveries per second)');
    assert.equal(await rate.getAttribute('aria-invalid'), 'true', 'a rate of 0 is refused on its field');
    await rate.fill('5');
    await checkPage(page, 'endpoint-form-events');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Pager relay' }).waitFor();
    const facts = page.getByRole('region', { name: 'Endpoint', exact: true });
    await waitForText(facts, 'signal_created, test, endpoint.failing, endpoint.disabled');
    await waitForText(facts, 'severity 3 and above');
    await waitForText(facts, 'sudo_command_executed, ssh_login');
    await waitForText(facts, '5 deliveries per second');
    const [created] = (await api(world.base, 'GET', '/v1/webhooks/endpoints', { token: token() })).json.endpoints;
    assert.deepEqual(
      [created.event_types, created.min_severity, created.signal_types, created.rate_limit],
      [
        ['signal_created', 'test', 'endpoint.failing', 'endpoint.disabled'],
        3,
        ['sudo_command_executed', 'ssh_login'],
        5,
      ],
    );
  });

  test('a failing endpoint shows a banner on every page and its health on its page', async () => {
    const made = await api(world.base, 'POST', '/v1/webhooks/endpoints', {
      token: token(),
      body: { name: 'SIEM ingest', url: world.receiver.url('/down') },
    });
    failingId = made.json.id;
    for (let i = 0; i < 3; i++)
      await api(world.base, 'POST', '/v1/signals', {
        token: world.tenant.agentKey,
        body: {
          signal_type: 'sudo_command_executed',
          severity: 4,
          description: `outage ${i}`,
          identity_id: 'u',
          identity_name: 'alice',
        },
      });
    const deadline = Date.now() + 15_000;
    while ((await deliveriesOf(failingId)).filter((d) => d.status === 'failed').length < 3) {
      assert.ok(Date.now() < deadline, 'three deliveries failed');
      await new Promise((r) => setTimeout(r, 100));
    }
    await open(page, '/signals');
    const banner = page.getByRole('region', { name: 'Webhook endpoints that need attention' });
    await waitForText(banner, 'SIEM ingest is failing');
    await waitForText(banner, /Guard disables it in [45] days/);
    await checkPage(page, 'failing-banner');
    await banner.getByRole('link', { name: 'SIEM ingest' }).click();
    const health = page.getByRole('region', { name: 'Health', exact: true });
    await waitForText(health, '0 % of 9 attempts in the last 24 h');
    await waitForText(health, '9 failed attempts in a row');
    await waitForText(health, /in [45] days unless a delivery succeeds/);
    await checkPage(page, 'endpoint-health');
  });

  test('replays the failed deliveries since a time: the count first, then the progress, same Guard-Delivery', async () => {
    down = false;
    const failed = (await deliveriesOf(failingId)).map((d) => d.id).sort();
    const replay = page.getByRole('region', { name: 'Replay', exact: true });
    await replay.getByLabel('Deliveries', { exact: true }).selectOption('failed');
    await replay.getByRole('button', { name: 'Count deliveries' }).click();
    await waitForText(replay, '3 failed deliveries will be sent again.');
    await checkPage(page, 'replay-count');
    const before = world.receiver.hitsFor('/down').length;
    await replay.getByRole('button', { name: 'Replay 3 deliveries' }).click();
    await waitForText(replay, 'Replayed failed deliveries since');
    await waitForText(replay, '3 of 3 sent');
    const resent = world.receiver.hitsFor('/down').slice(before);
    assert.deepEqual(resent.map((h) => h.headers['guard-delivery']).sort(), failed);
    await page.reload();
    await waitForText(page.getByRole('region', { name: 'Health', exact: true }), 'Failure streaknone');
    assert.equal(
      await page.getByRole('region', { name: 'Webhook endpoints that need attention' }).count(),
      0,
      'the banner is gone once a delivery succeeded',
    );
    await checkPage(page, 'replay-done');
  });

  test('cancels a long replay: nothing more is sent', async () => {
    const made = await api(world.base, 'POST', '/v1/webhooks/endpoints', {
      token: token(),
      body: { name: 'Archive', url: world.receiver.url('/slow') },
    });
    slowId = made.json.id;
    await seedDeliveries(world.server, world.tenant.tenant_id, slowId, 3000);
    await open(page, `/settings/integrations/webhooks/${slowId}`);
    const replay = page.getByRole('region', { name: 'Replay', exact: true });
    await replay.getByLabel('Deliveries', { exact: true }).selectOption('succeeded');
    await replay.getByRole('button', { name: 'Count deliveries' }).click();
    await waitForText(replay, '3,000 succeeded deliveries will be sent again.');
    await replay.getByRole('button', { name: 'Replay 3,000 deliveries' }).click();
    await waitForText(replay, /Replaying succeeded deliveries since .*: \d+ of 3,000 sent, [\d,]+ to go/);
    await page.getByRole('progressbar').waitFor();
    await checkPage(page, 'replay-progress');
    await replay.getByRole('button', { name: 'Cancel replay' }).click();
    await waitForText(replay, 'Cancelled replay of succeeded deliveries');
    // What was queued or in flight at the cancel (at most the replay's window) lands first;
    // then the feeder passes again, and would have fed the replay had the cancel not stopped it.
    await waitForDeliveriesMade(world.server, [slowId]);
    const sent = world.receiver.hitsFor('/slow').length;
    const tenant = { tenantId: world.tenant.tenant_id, adminToken: token() };
    await replayFeederPassed(world.server, tenant, world.receiver.url('/marker'));
    await waitForDeliveriesMade(world.server, [slowId]);
    assert.equal(world.receiver.hitsFor('/slow').length, sent, 'nothing more arrives after the cancel');
    assert.ok(sent < 3000, `${sent} sent before the cancel`);
  });

  test('the endpoint page with its health and replay fits a 390 px screen', async () => {
    const narrow = await newContext(world, NARROW);
    try {
      const p = await newPage(narrow);
      await open(p, '/');
      await signIn(p, world.tenant.admin_email, world.tenant.admin_password);
      await open(p, `/settings/integrations/webhooks/${failingId}`);
      await p.getByRole('region', { name: 'Replay', exact: true }).waitFor();
      await checkPage(p, 'endpoint-operations-390');
    } finally {
      await narrow.close();
    }
  });
});
