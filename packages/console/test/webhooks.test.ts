// An admin adds a webhook endpoint in the console, as spec 5.3 and DESIGN §7 describe it,
// and a real HTTPS receiver verifies what Guard sends with the secret the admin copied.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { constructEvent } from '@guard/webhooks';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
import { bodyJson, type ReceivedRequest } from '../../server/test/webhook-harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  openWebhooks,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

describe('an admin adds a webhook endpoint in the console', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let secret = '';
  let endpointUrl = '';
  /** What the receiver made of each request: verified with the copied secret, or why not. */
  const verdicts: { hit: ReceivedRequest; verified: boolean; why?: string }[] = [];

  before(async () => {
    world = await startConsoleWorld();
    world.receiver.on('/guard', (hit) => {
      try {
        constructEvent(hit.body, hit.headers, secret);
        verdicts.push({ hit, verified: true });
        return { status: 204 };
      } catch (error) {
        verdicts.push({ hit, verified: false, why: (error as Error).message });
        return { status: 400 };
      }
    });
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  const endpointsViaApi = async () =>
    (await api(world.base, 'GET', '/v1/webhooks/endpoints', { token: world.tenant.admin_token })).json.endpoints;

  test('signs in with Email and Password', async () => {
    await open(page, '/');
    await page.getByRole('heading', { name: 'Sign in to Guard' }).waitFor();
    await checkPage(page, 'sign-in');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });

  test('opens Settings > Integrations > Webhooks and finds Add Endpoint', async () => {
    await openWebhooks(page);
    await page.getByRole('heading', { name: 'No endpoints yet' }).waitFor();
    await page.getByRole('button', { name: 'Add Endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Add Endpoint' }).waitFor();
  });

  test('an http:// URL is refused on the URL field and nothing is created', async () => {
    await page.getByLabel('Name').fill('SIEM ingest');
    await page.getByLabel('URL').fill(world.receiver.url('/guard').replace('https://', 'http://'));
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const url = page.getByLabel('URL');
    assert.equal(await url.getAttribute('aria-invalid'), 'true');
    const described = await url.getAttribute('aria-describedby');
    assert.ok(described, 'the URL field points at its error');
    const error = await page.locator(`[id="${described.split(' ').at(-1)}"]`).textContent();
    assert.match(error ?? '', /https:\/\//);
    // Focus moves to the field to fix.
    await page.waitForFunction(() => document.activeElement?.getAttribute('aria-invalid') === 'true');
    await checkPage(page, 'add-endpoint-invalid-url');
    assert.deepEqual(await endpointsViaApi(), []);
  });

  test('an https:// URL with a custom header creates the endpoint and shows its secret once', async () => {
    endpointUrl = world.receiver.url('/guard');
    await page.getByLabel('URL').fill(endpointUrl);
    await page.getByRole('button', { name: 'Add header' }).click();
    await page.getByLabel('Header name').fill('Authorization');
    await page.getByLabel('Header value').fill('Bearer receiver-token-123');
    await page.getByRole('button', { name: 'Create endpoint' }).click();

    const field = page.getByLabel('Signing secret');
    await field.waitFor();
    assert.equal(await field.getAttribute('readonly'), '');
    const shown = await field.inputValue();
    assert.match(shown, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByText('This secret is shown only once.').waitFor();

    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    secret = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(secret, shown, 'the clipboard holds the secret');
    await checkPage(page, 'endpoint-created');

    const [endpoint] = await endpointsViaApi();
    assert.equal(endpoint.url, endpointUrl);
    assert.deepEqual(endpoint.headers, { Authorization: 'Bearer receiver-token-123' });
  });

  test('Send test event: the receiver verifies it with the copied secret and the delivery shows succeeded', async () => {
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event sent.').waitFor();
    const deliveries = page.getByRole('table', { name: /Deliveries to this endpoint/ });
    await waitForText(deliveries, 'succeeded');

    assert.equal(verdicts.length, 1);
    assert.deepEqual(
      verdicts.map((v) => [v.verified, v.why]),
      [[true, undefined]],
    );
    const hit = verdicts[0].hit;
    assert.equal(hit.headers.authorization, 'Bearer receiver-token-123');
    assert.equal(bodyJson(hit).event_type, 'signal_created');

    const row = deliveries.getByRole('row').filter({ hasText: 'succeeded' });
    assert.equal((await row.getByRole('cell').nth(3).textContent())?.trim(), '1', 'one attempt');
    assert.equal((await row.getByRole('cell').nth(4).textContent())?.trim(), '204');
    await checkPage(page, 'endpoint-detail');

    // The status filter.
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('heading', { name: 'No failed deliveries' }).waitFor();
    await page.getByLabel('Status').selectOption('succeeded');
    await waitForText(page.getByRole('table', { name: /Deliveries to this endpoint/ }), 'succeeded');
    await page.getByLabel('Status').selectOption('');
  });

  test('the delivery shows its attempt: the request as sent, with the signature the receiver got', async () => {
    const deliveryId = String(verdicts[0].hit.headers['guard-delivery']);
    await page.getByRole('link', { name: `Delivery ${deliveryId}` }).click();
    await page.getByRole('heading', { name: 'Attempt 1' }).waitFor();
    await page.getByRole('button', { name: 'Show request and response' }).click();
    const headers = page.getByRole('table', { name: 'Request headers of attempt 1' });
    await headers.waitFor();
    const signatureRow = headers.getByRole('row').filter({ hasText: 'Guard-Signature' });
    assert.equal(
      (await signatureRow.getByRole('cell').nth(1).textContent())?.trim(),
      verdicts[0].hit.headers['guard-signature'],
    );
    await page.getByText('HTTP 204 in').waitFor();
    await checkPage(page, 'delivery-detail');
    await page.getByRole('link', { name: 'Back to the endpoint' }).click();
    await page.getByRole('button', { name: 'Send test event' }).waitFor();
  });

  test('after a reload the secret is nowhere in the page', async () => {
    await page.reload();
    await page.getByRole('button', { name: 'Send test event' }).waitFor();
    await checkPage(page, 'endpoint-detail-after-reload');
    assert.equal(await page.getByLabel('Signing secret').count(), 0);
    const html = await page.content();
    assert.ok(!html.includes(secret), 'the page source holds no secret');
    const stored = await page.evaluate(
      () => JSON.stringify({ ...localStorage }) + JSON.stringify({ ...sessionStorage }),
    );
    assert.ok(!stored.includes(secret), 'web storage holds no secret');
    assert.ok(!(await page.evaluate(() => JSON.stringify(history.state))).includes(secret), 'history holds no secret');
  });

  test('the console_url of a delivered envelope opens that signal’s page', async () => {
    const signal = await api(world.base, 'POST', '/v1/signals', {
      token: world.tenant.agentKey,
      body: {
        signal_type: 'sudo_command_executed',
        severity: 4,
        description: 'alice ran sudo /usr/bin/apt-get install netcat',
        identity_id: 'uid-1000',
        identity_name: 'alice',
      },
    });
    assert.equal(signal.status, 201);
    const deadline = Date.now() + 20_000;
    let delivered: ReceivedRequest | undefined;
    while (!delivered) {
      assert.ok(Date.now() < deadline, 'the signal was delivered');
      await new Promise((r) => setTimeout(r, 50));
      delivered = verdicts.find((v) => bodyJson(v.hit).data.signal_id === signal.json.signal_id)?.hit;
    }
    const envelope = bodyJson(delivered);
    assert.equal(envelope.console_url, `${world.base}/console/signals/${signal.json.signal_id}`);

    // Someone signed out opens the link: the sign-in form, then the signal itself.
    const fresh = await newContext(world);
    try {
      const other = await newPage(fresh);
      await other.goto(envelope.console_url);
      await signIn(other, world.tenant.admin_email, world.tenant.admin_password);
      await other.getByRole('heading', { level: 1, name: 'alice ran sudo /usr/bin/apt-get install netcat' }).waitFor();
      assert.equal(new URL(other.url()).pathname, `/console/signals/${signal.json.signal_id}`);
      const deliveries = other.getByRole('table', { name: /Deliveries of this signal/ });
      await waitForText(deliveries, 'succeeded');
      await other.getByRole('link', { name: 'SIEM ingest' }).waitFor();
      await other.getByText('high', { exact: true }).waitFor();
      await checkPage(other, 'signal-detail');
    } finally {
      await fresh.close();
    }
  });

  test('Redeliver sends the delivery again with the same Guard-Delivery', async () => {
    await open(page, '/settings/integrations/webhooks');
    await waitForText(page.getByRole('table', { name: 'Webhook endpoints' }), 'succeeded');
    await checkPage(page, 'webhooks-admin');
    await page.getByRole('link', { name: 'SIEM ingest' }).click();
    const deliveries = page.getByRole('table', { name: /Deliveries to this endpoint/ });
    await waitForText(deliveries, 'succeeded');
    const before = verdicts.length;
    const earlier = new Set(verdicts.map((v) => v.hit.headers['guard-delivery']));
    await deliveries.getByRole('button', { name: 'Redeliver' }).first().click();
    await page.getByText('Delivery queued again').waitFor();
    // The redelivery is the request that comes again with a Guard-Delivery already seen.
    const deadline = Date.now() + 20_000;
    let again: (typeof verdicts)[number] | undefined;
    while (!again) {
      assert.ok(Date.now() < deadline, 'the redelivery arrived with a Guard-Delivery already seen');
      await new Promise((r) => setTimeout(r, 50));
      again = verdicts.slice(before).find((v) => earlier.has(v.hit.headers['guard-delivery']));
    }
    assert.ok(again.verified, again.why);
  });

  test('Edit renames the endpoint and keeps its custom header', async () => {
    await page.getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { level: 1, name: 'Edit SIEM ingest' }).waitFor();
    assert.equal(await page.getByLabel('Header value').inputValue(), 'Bearer receiver-token-123');
    await checkPage(page, 'endpoint-edit');
    await page.getByLabel('Name', { exact: true }).fill('SIEM ingest (EU)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'SIEM ingest (EU)' }).waitFor();
    const [endpoint] = await endpointsViaApi();
    assert.equal(endpoint.name, 'SIEM ingest (EU)');
    assert.deepEqual(endpoint.headers, { Authorization: 'Bearer receiver-token-123' });
  });

  test('Disable and Enable switch the endpoint; Delete asks first, then removes it', async () => {
    await page.getByRole('button', { name: 'Disable' }).click();
    await page.getByRole('button', { name: 'Enable' }).waitFor();
    assert.equal((await endpointsViaApi())[0].enabled, false);
    await page.getByRole('button', { name: 'Enable' }).click();
    await page.getByRole('button', { name: 'Disable' }).waitFor();
    assert.equal((await endpointsViaApi())[0].enabled, true);

    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByText('its delivery history is deleted with it').waitFor();
    await page.getByRole('button', { name: 'Cancel' }).click();
    assert.equal((await endpointsViaApi()).length, 1, 'Cancel keeps it');
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.getByRole('heading', { name: 'No endpoints yet' }).waitFor();
    assert.deepEqual(await endpointsViaApi(), []);
  });

  test('Sign out ends the session', async () => {
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    const res = await page.request.get('/v1/auth/session');
    assert.equal(res.status(), 401);
  });
});
