// An admin rotates an endpoint's signing secret in the console (issue 14, item 1): picks the
// grace period, copies the new secret shown once, sends the proof signed with it alone, and
// ends the grace period once the receiver accepted it; a real HTTPS receiver verifies every
// delivery under the secret it holds. Then Settings > Data retention, and Erase payload on a
// signal's page (item 6).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { constructEvent } from '@guard/webhooks';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
import { createEndpoint, createSignal, type ReceivedRequest } from '../../server/test/webhook-harness.ts';
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

function accepts(hit: ReceivedRequest, secret: string): boolean {
  try {
    constructEvent(hit.body, hit.headers, secret);
    return true;
  } catch {
    return false;
  }
}

describe('an admin rotates a signing secret and sets retention in the console', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let endpointId = '';
  let oldSecret = '';
  let newSecret = '';

  before(async () => {
    world = await startConsoleWorld();
    // The receiver holds both secrets once the admin copied the new one.
    world.receiver.on('/rotating', (hit) => ({
      status: accepts(hit, oldSecret) || (newSecret !== '' && accepts(hit, newSecret)) ? 204 : 400,
    }));
    const e = await createEndpoint(world.server, world.tenant.admin_token, {
      name: 'SIEM ingest',
      url: world.receiver.url('/rotating'),
    });
    endpointId = e.id;
    oldSecret = e.secret;
    context = await newContext(world);
    page = await newPage(context);
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });
  after(async () => {
    await context?.close();
    await world?.close();
  });

  test('the endpoint page shows the Secret rotation card with Rotate secret and its grace period', async () => {
    await open(page, `/settings/integrations/webhooks/${endpointId}`);
    await page.getByRole('heading', { name: 'Secret rotation' }).waitFor();
    await page.getByText('none in progress').waitFor();
    assert.equal(await page.getByLabel('Grace period').inputValue(), '86400', '24 hours by default');
    await checkPage(page, 'endpoint-rotate-secret');
  });

  test('Rotate secret shows the new secret once, with Copy; deliveries then verify under either secret', async () => {
    await page.getByLabel('Grace period').selectOption({ label: '1 hour' });
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const field = page.getByLabel('New signing secret');
    await field.waitFor();
    await page.getByText('The new secret is shown only once.').waitFor();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    newSecret = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(newSecret, await field.inputValue());
    assert.match(newSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    await page.getByText('in grace period').waitFor();
    await checkPage(page, 'endpoint-rotation-new-secret');

    const before = world.receiver.hitsFor('/rotating').length;
    await createSignal(world.server, world.tenant.agentKey);
    const [hit] = (await world.receiver.waitForHits('/rotating', before + 1)).slice(before);
    assert.match(String(hit.headers['guard-signature']), /^sha256=[0-9a-f]{64}, sha256=[0-9a-f]{64}$/);
    assert.ok(accepts(hit, oldSecret) && accepts(hit, newSecret));

    await page.getByRole('button', { name: 'I have stored the new secret' }).click();
    assert.equal(await page.getByLabel('New signing secret').count(), 0, 'gone once dismissed');
  });

  test('End grace period now waits for the proof; Send proof event sends one signed with the new secret alone', async () => {
    const end = page.getByRole('button', { name: 'End grace period now' });
    assert.equal(await end.isDisabled(), true, 'not before the proof');
    await page.getByText('not sent yet').waitFor();
    const before = world.receiver.hitsFor('/rotating').length;
    await page.getByRole('button', { name: 'Send proof event' }).click();
    const [hit] = (await world.receiver.waitForHits('/rotating', before + 1)).slice(before);
    assert.match(String(hit.headers['guard-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.ok(accepts(hit, newSecret) && !accepts(hit, oldSecret));
    await page.getByText('your receiver accepted a delivery signed with the new secret alone').waitFor();
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('button')].find((b) => b.textContent === 'End grace period now')?.disabled ===
        false,
    );
    await checkPage(page, 'endpoint-rotation-proven');
    await end.click();
    await page.getByText('Grace period ended').waitFor();
    await page.getByText('none in progress').waitFor();
    await checkPage(page, 'endpoint-rotation-complete');

    const after = world.receiver.hitsFor('/rotating').length;
    await createSignal(world.server, world.tenant.agentKey);
    const [last] = (await world.receiver.waitForHits('/rotating', after + 1)).slice(after);
    assert.ok(accepts(last, newSecret) && !accepts(last, oldSecret), 'only the new secret from now on');
  });

  test('Settings > Data retention: the admin sets 14 days, audited; more than the maximum cannot be saved', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('link', { name: 'Data retention' }).click();
    await page.getByRole('heading', { level: 1, name: 'Data retention' }).waitFor();
    const form = page.getByRole('form', { name: 'Webhook delivery log retention' });
    const field = form.getByLabel('Retention (days)');
    assert.equal(await field.inputValue(), '30');
    await field.fill('91');
    assert.equal(await form.getByRole('button', { name: 'Save retention' }).isDisabled(), true);
    await field.fill('14');
    await form.getByRole('button', { name: 'Save retention' }).click();
    await page.getByText('Saved: the delivery log is kept 14 days.').waitFor();
    await checkPage(page, 'settings-data-retention');
    const settings = await api(world.base, 'GET', '/v1/tenant/settings', { token: world.tenant.admin_token });
    assert.equal(settings.json.delivery_retention_days, 14);
    const audit = await api(world.base, 'GET', '/v1/audit?action=tenant.settings', {
      token: world.tenant.admin_token,
    });
    assert.equal(audit.json.entries[0].target, 'delivery_retention_days=14');
  });

  test("Erase payload on a signal's page blanks it, asked twice, and the list shows it erased", async () => {
    const { signal_id } = await createSignal(world.server, world.tenant.agentKey, {
      description: 'bob ran sudo less /etc/shadow',
    });
    await open(page, `/signals/${signal_id}`);
    await page.getByRole('heading', { level: 1, name: 'bob ran sudo less /etc/shadow' }).waitFor();
    await page.getByRole('button', { name: 'Erase payload' }).click();
    await page.getByText('This cannot be undone').waitFor();
    await page.getByRole('button', { name: 'Erase payload' }).click();
    await page.getByRole('heading', { level: 1, name: 'Signal (payload erased)' }).waitFor();
    await waitForText(page.getByRole('status').first(), 'was erased');
    assert.equal(await page.getByText('/etc/shadow').count(), 0);
    assert.equal(await page.getByRole('button', { name: 'Erase payload' }).count(), 0);
    await checkPage(page, 'signal-erased');
    const shown = await api(world.base, 'GET', `/v1/signals/${signal_id}`, { token: world.tenant.admin_token });
    assert.equal(shown.json.description, '');
    await open(page, '/signals');
    await page.getByRole('link', { name: '(payload erased)' }).waitFor();
  });
});
