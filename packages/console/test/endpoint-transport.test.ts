// An admin sets up an endpoint for a receiver that asks for more than a signed request (issue
// 21, items 2 and 3): HTTP Basic and a client certificate (mTLS), pasted into the Add Endpoint
// form; the receiver takes the test event only with both. The endpoint page shows how it
// authenticates and the certificate's expiry, with a notice as it nears; the edit form keeps
// the password and key it never shows.

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
import { makeClientCertificate } from '../../server/test/loopback.ts';
import { Receiver } from '../../server/test/webhook-harness.ts';
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

describe('an admin sets up an endpoint with Basic authentication and a client certificate', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let receiver: Receiver;
  let client: { caPem: string; cert: string; key: string };
  const basic = `Basic ${Buffer.from('guard:receiver-password-1').toString('base64')}`;

  before(async () => {
    world = await startConsoleWorld();
    // A certificate that expires in 5 days: the page flags it.
    client = await makeClientCertificate('guard-deliveries.acme.example', 5);
    receiver = await Receiver.start({ ...world.tls, requestCert: true, rejectUnauthorized: true, ca: client.caPem });
    receiver.on('/mtls', (hit) => ({
      status:
        hit.clientCertificateCn === 'guard-deliveries.acme.example' && hit.headers.authorization === basic ? 204 : 401,
    }));
    context = await newContext(world);
    page = await newPage(context);
    await open(page, '/');
    await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
  });
  after(async () => {
    await context?.close();
    await receiver?.close();
    await world?.close();
  });

  const endpoints = async () =>
    (await api(world.base, 'GET', '/v1/webhooks/endpoints', { token: world.tenant.admin_token })).json.endpoints;

  test('a key that is not the certificate’s is refused on the key field; nothing is created', async () => {
    await openWebhooks(page);
    await page.getByRole('button', { name: 'Add Endpoint' }).click();
    await page.getByRole('heading', { level: 1, name: 'Add Endpoint' }).waitFor();
    await page.getByLabel('Name').fill('Payments receiver');
    await page.getByLabel('URL').fill(receiver.url('/mtls'));
    await page.getByRole('radio', { name: 'HTTP Basic' }).check();
    await page.getByLabel('Username').fill('guard');
    await page.getByLabel('Password').fill('receiver-password-1');
    const other = await makeClientCertificate('someone-else', 30);
    await page.getByLabel('Client certificate (PEM, optional)').fill(client.cert);
    await page.getByLabel('Its private key (PEM)').fill(other.key);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const key = page.getByLabel('Its private key (PEM)');
    await page.waitForFunction(() =>
      [...document.querySelectorAll('textarea')].some((t) => t.getAttribute('aria-invalid') === 'true'),
    );
    assert.equal(await key.getAttribute('aria-invalid'), 'true');
    await waitForText(page.locator('form'), 'The private key does not match the client certificate');
    await checkPage(page, 'add-endpoint-tls-key-mismatch');
    assert.deepEqual(await endpoints(), []);
  });

  test('with the right key the endpoint is created, and the test event reaches the receiver', async () => {
    await page.getByLabel('Its private key (PEM)').fill(client.key);
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    await page.getByLabel('Signing secret').waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event sent.').waitFor();
    await waitForText(page.getByRole('table', { name: /Deliveries to this endpoint/ }), 'succeeded');
    const [hit] = receiver.hitsFor('/mtls');
    assert.equal(hit.clientCertificateCn, 'guard-deliveries.acme.example');
    assert.equal(hit.headers.authorization, basic);
  });

  test('the endpoint page shows the authentication and the certificate, flagged as it nears its expiry', async () => {
    const facts = page.getByRole('region', { name: 'Endpoint', exact: true });
    await waitForText(facts, 'HTTP Basic as guard');
    await waitForText(facts, 'CN=guard-deliveries.acme.example');
    await waitForText(facts, /expires in [45] days/);
    await waitForText(page.getByRole('status').filter({ hasText: 'client certificate' }), /expires in [45] days/);
    assert.ok(!(await page.content()).includes('receiver-password-1'), 'the password is never on the page');
    await checkPage(page, 'endpoint-mtls-basic');
  });

  test('the edit form shows what is set, never a secret, and keeps them when left empty', async () => {
    await page.getByRole('link', { name: 'Edit', exact: true }).click();
    await page.getByRole('heading', { level: 1, name: /^Edit / }).waitFor();
    assert.equal(await page.getByRole('radio', { name: 'HTTP Basic' }).isChecked(), true);
    assert.equal(await page.getByLabel('Username').inputValue(), 'guard');
    assert.equal(await page.getByLabel('Password').inputValue(), '');
    assert.equal(await page.getByLabel('Password').getAttribute('placeholder'), 'unchanged');
    await waitForText(page.locator('form'), 'Client certificate: O=Guard, CN=guard-deliveries.acme.example');
    await checkPage(page, 'edit-endpoint-transport');
    await page.getByLabel('Name', { exact: true }).fill('Payments receiver (mTLS)');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payments receiver (mTLS)' }).waitFor();
    await page.getByRole('button', { name: 'Send test event' }).click();
    await page.getByText('Test event sent.').waitFor();
    await receiver.waitForHits('/mtls', 2);
    const [, second] = receiver.hitsFor('/mtls');
    assert.equal(second.headers.authorization, basic, 'the password was kept');
    assert.equal(second.clientCertificateCn, 'guard-deliveries.acme.example', 'the key was kept');
  });
});
