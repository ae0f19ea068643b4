// Who may do what in the console: an admin adds a member through the one-time set-password
// link; the member reads webhooks without a single write control, and a write forged from the
// member's own session is refused; a cross-site form post, and a same-origin write without
// the CSRF token, are refused.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  csrfTokenOf,
  newContext,
  newPage,
  open,
  openWebhooks,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

const MEMBER_EMAIL = 'maria@acme.example';
const MEMBER_PASSWORD = 'correct horse battery staple';

describe('roles and request forgery in the console', () => {
  let world: ConsoleWorld;
  let adminContext: BrowserContext;
  let admin: Page;
  let memberContext: BrowserContext;
  let member: Page;
  let endpointId = '';
  let link = '';

  const endpointCount = async () =>
    (await api(world.base, 'GET', '/v1/webhooks/endpoints', { token: world.tenant.admin_token })).json.endpoints.length;

  before(async () => {
    world = await startConsoleWorld();
    // An endpoint with one delivery, so the member has something to look at.
    const created = await api(world.base, 'POST', '/v1/webhooks/endpoints', {
      token: world.tenant.admin_token,
      body: { name: 'Pager relay', url: world.receiver.url('/pager') },
    });
    assert.equal(created.status, 201);
    endpointId = created.json.id;
    const sent = await api(world.base, 'POST', `/v1/webhooks/endpoints/${endpointId}/test`, {
      token: world.tenant.admin_token,
    });
    assert.equal(sent.status, 202);
    adminContext = await newContext(world);
    admin = await newPage(adminContext);
    memberContext = await newContext(world);
    member = await newPage(memberContext);
  });
  after(async () => {
    await adminContext?.close();
    await memberContext?.close();
    await world?.close();
  });

  test('an admin adds a member and is shown a one-time set-password link', async () => {
    await open(admin, '/');
    await signIn(admin, world.tenant.admin_email, world.tenant.admin_password);
    await admin.getByRole('link', { name: 'Settings' }).click();
    await admin.getByRole('link', { name: 'Users' }).click();
    await admin.getByRole('heading', { level: 1, name: 'Users' }).waitFor();
    await admin.getByLabel('Email').fill(MEMBER_EMAIL);
    await admin.getByLabel('Role', { exact: true }).selectOption('member');
    await admin.getByRole('button', { name: 'Add user' }).click();
    const field = admin.getByLabel('Set-password link');
    await field.waitFor();
    link = await field.inputValue();
    assert.match(link, new RegExp(`^${world.base}/console/set-password#gsp_`));
    await waitForText(admin.getByRole('table', { name: 'Users' }), MEMBER_EMAIL);
    await checkPage(admin, 'users');
  });

  test('the new member sets a password through the link, then signs in', async () => {
    await member.goto(link);
    await member.getByRole('heading', { name: 'Set your password' }).waitFor();
    await member.getByText(MEMBER_EMAIL).waitFor();
    await checkPage(member, 'set-password');
    await member.getByLabel('New password').fill('too short');
    await member.getByRole('button', { name: 'Set password' }).click();
    await member.getByText('Use at least 12 characters.').waitFor();
    await member.getByLabel('New password').fill(MEMBER_PASSWORD);
    await member.getByRole('button', { name: 'Set password' }).click();
    await member.getByText('Your password is set.').waitFor();
    assert.equal(await member.getByLabel('Email').inputValue(), MEMBER_EMAIL);
    await member.getByLabel('Password').fill(MEMBER_PASSWORD);
    await member.getByRole('button', { name: 'Sign in', exact: true }).click();
    await member.getByRole('button', { name: 'Sign out' }).waitFor();
    await member.getByRole('heading', { level: 1, name: 'Signals' }).waitFor();
  });

  test('the link works once', async () => {
    const again = await newPage(memberContext);
    await again.goto(link);
    await again.getByText('This link was already used or has expired.').waitFor();
    await again.close();
  });

  test('a member sees webhooks but no Add Endpoint, Disable, Delete or Redeliver', async () => {
    await openWebhooks(member);
    await member.getByRole('link', { name: 'Pager relay' }).waitFor();
    await checkPage(member, 'webhooks');
    assert.equal(await member.getByRole('button', { name: 'Add Endpoint' }).count(), 0);
    await member.getByRole('link', { name: 'Pager relay' }).click();
    const deliveries = member.getByRole('table', { name: /Deliveries to this endpoint/ });
    await waitForText(deliveries, 'succeeded');
    for (const name of ['Send test event', 'Disable', 'Enable', 'Delete', 'Redeliver'])
      assert.equal(await member.getByRole('button', { name }).count(), 0, `a member sees no ${name}`);
    assert.equal(await member.getByRole('link', { name: 'Edit' }).count(), 0);
    await member.getByText('Only admins can change it.').waitFor();
    // Nor the Users page in the settings navigation.
    assert.equal(await member.getByRole('link', { name: 'Users' }).count(), 0);
  });

  test('a write forged from the member’s session, with its own CSRF token, gets 403', async () => {
    const csrf = await csrfTokenOf(member);
    const answers = await member.evaluate(
      async ({ csrf, endpointId }) => {
        const send = async (method: string, path: string, body?: unknown) => {
          const res = await fetch(path, {
            method,
            headers:
              body === undefined
                ? { 'x-csrf-token': csrf }
                : { 'content-type': 'application/json', 'x-csrf-token': csrf },
            body: body === undefined ? undefined : JSON.stringify(body),
          });
          return [res.status, (await res.json()).error?.code];
        };
        return [
          await send('POST', '/v1/webhooks/endpoints', { name: 'forged', url: 'https://forged.example/x' }),
          await send('PATCH', `/v1/webhooks/endpoints/${endpointId}`, { enabled: false }),
          await send('DELETE', `/v1/webhooks/endpoints/${endpointId}`),
          await send('POST', `/v1/webhooks/endpoints/${endpointId}/test`),
          await send('POST', '/v1/users', { email: 'forged@acme.example', role: 'admin' }),
        ];
      },
      { csrf, endpointId },
    );
    assert.deepEqual(answers, Array(5).fill([403, 'forbidden']));
    assert.equal(await endpointCount(), 1);
    const endpoint = await api(world.base, 'GET', `/v1/webhooks/endpoints/${endpointId}`, {
      token: world.tenant.admin_token,
    });
    assert.equal(endpoint.json.enabled, true);
  });

  test('a cross-site form post to the API, carrying the admin’s cookie, is refused with csrf_failed and creates nothing', async () => {
    // Another origin on the same host (a different port is the same site, so SameSite=Strict
    // still sends the cookie): only the Origin check and the CSRF token stand in the way.
    const evil = http.createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end(`<!doctype html><title>Win a prize</title>
        <form method="POST" action="${world.base}/v1/webhooks/endpoints" enctype="text/plain">
          <input type="hidden" name='{"name":"evil","url":"https://evil.example/x","pad":"' value='"}'>
        </form>
        <script>document.forms[0].submit()</script>`);
    });
    evil.listen(0, '127.0.0.1');
    await once(evil, 'listening');
    try {
      const page = await newPage(adminContext);
      const posted = page.waitForResponse(
        (r) => r.url().endsWith('/v1/webhooks/endpoints') && r.request().method() === 'POST',
      );
      await page.goto(`http://127.0.0.1:${(evil.address() as AddressInfo).port}/`);
      const res = await posted;
      assert.equal(res.status(), 403);
      assert.equal((await res.json()).error.code, 'csrf_failed');
      assert.equal(await endpointCount(), 1, 'nothing was created');
      await page.close();
    } finally {
      evil.close();
    }
  });

  test('a write from the console’s own origin without X-CSRF-Token is refused with csrf_failed', async () => {
    const answer = await admin.evaluate(async () => {
      const res = await fetch('/v1/webhooks/endpoints', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'no token', url: 'https://no-token.example/x' }),
      });
      return [res.status, (await res.json()).error?.code];
    });
    assert.deepEqual(answer, [403, 'csrf_failed']);
    assert.equal(await endpointCount(), 1);
  });

  test('the admin changes the member’s role, then removes them; their session ends', async () => {
    await open(admin, '/settings/users');
    const role = admin.getByLabel(`Role of ${MEMBER_EMAIL}`);
    await role.selectOption('admin');
    await admin.waitForFunction(async (email) => {
      const res = await fetch('/v1/users');
      const { users } = await res.json();
      return users.find((u: { email: string }) => u.email === email)?.role === 'admin';
    }, MEMBER_EMAIL);
    const row = admin.getByRole('row').filter({ hasText: MEMBER_EMAIL });
    await row.getByRole('button', { name: 'Remove' }).click();
    await row.getByRole('button', { name: 'Remove' }).click();
    await admin
      .getByRole('table', { name: 'Users' })
      .getByRole('cell', { name: MEMBER_EMAIL, exact: true })
      .waitFor({ state: 'detached' });
    await member.reload();
    await member.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
  });
});
