// Settings > Users > SCIM provisioning, in Chromium: an admin copies the SCIM base URL,
// creates a token (shown once, with Copy), an identity provider uses it to provision and
// deactivate a user, who shows as deactivated in the users table; the list shows when the token
// was last used, and Revoke ends it.

import assert from 'node:assert/strict';
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
} from './console-harness.ts';

let world: ConsoleWorld;

before(async () => {
  world = await startConsoleWorld();
});
after(() => world?.close());

const scim = (token: string, method: string, path: string, body?: unknown) =>
  api(world.base, method, `/scim/v2${path}`, {
    token,
    ...(body === undefined
      ? {}
      : { rawBody: JSON.stringify(body), headers: { 'content-type': 'application/scim+json' } }),
  });

describe('SCIM provisioning in Settings > Users', () => {
  it('shows the base URL, creates a token shown once, lists its last use, shows deactivated users, revokes', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/signals');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('link', { name: 'Users' }).click();
      const section = page.getByRole('region', { name: 'SCIM provisioning' });
      await section.waitFor();

      const baseUrl = section.getByLabel('SCIM base URL');
      assert.equal(await baseUrl.inputValue(), `${world.base}/scim/v2`);
      await section.getByRole('button', { name: 'Copy base URL' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${world.base}/scim/v2`);
      await section.getByText('No SCIM token yet').waitFor();

      await section.getByLabel('SCIM token name').fill('Okta');
      await section.getByRole('button', { name: 'Create SCIM token' }).click();
      const tokenField = section.getByLabel('SCIM token', { exact: true });
      await tokenField.waitFor();
      const token = await tokenField.inputValue();
      assert.match(token, /^gsc_[A-Za-z0-9_-]{43}$/);
      await section.getByRole('button', { name: 'Copy token' }).click();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), token);
      await section.getByRole('cell', { name: 'Okta' }).waitFor();
      await checkPage(page, 'users-scim-token-created');

      // The identity provider provisions a user and deactivates them.
      const created = await scim(token, 'POST', '/Users', { userName: 'leaver@acme.example', displayName: 'Lee Ver' });
      assert.equal(created.status, 201, created.text);
      const off = await scim(token, 'PATCH', `/Users/${created.json.id}`, {
        schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
        Operations: [{ op: 'replace', value: { active: false } }],
      });
      assert.equal(off.status, 200, off.text);
      assert.equal((await scim(token, 'POST', '/Users', { userName: 'joiner@acme.example' })).status, 201);

      // After a reload the token is nowhere on the page; its use is.
      await page.reload();
      await section.waitFor();
      await section.getByRole('cell', { name: 'Okta' }).waitFor();
      assert.equal(await page.getByLabel('SCIM token', { exact: true }).count(), 0);
      assert.ok(!(await page.content()).includes(token), 'the token is shown once only');
      const row = section.getByRole('row', { name: /Okta/ });
      assert.doesNotMatch((await row.textContent()) ?? '', /never/, 'last used is shown');
      const leaver = page.getByRole('row', { name: /leaver@acme\.example/ });
      await leaver.getByText('deactivated').waitFor();
      assert.doesNotMatch(
        (await page.getByRole('row', { name: /joiner@acme\.example/ }).textContent()) ?? '',
        /deactivated/,
      );
      await checkPage(page, 'users-scim');

      await row.getByRole('button', { name: 'Revoke' }).click();
      await section.getByRole('button', { name: 'Revoke' }).click();
      await section.getByText('No SCIM token yet').waitFor();
      assert.equal((await scim(token, 'GET', '/Users')).status, 401);
    } finally {
      await context.close();
    }
  });

  it('is laid out for a narrow screen', async () => {
    const context = await newContext(world, NARROW);
    const page = await newPage(context);
    try {
      await open(page, '/settings/users');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('region', { name: 'SCIM provisioning' }).getByLabel('SCIM base URL').waitFor();
      await checkPage(page, 'users-scim-narrow');
    } finally {
      await context.close();
    }
  });
});
