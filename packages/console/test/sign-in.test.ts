// Signing in with an email that is a user of several tenants (emails are unique per tenant,
// issue 19 finding 7): in Chromium, the password picks the tenant; when it is right for more
// than one, the form asks which, with a Tenant field, and signs in to the one chosen.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runSetup } from '../../server/src/setup.ts';
import { api } from '../../server/test/harness.ts';
import { type ConsoleWorld, checkPage, newContext, newPage, open, startConsoleWorld } from './console-harness.ts';

let world: ConsoleWorld;
const email = 'sam@two-tenants.example';
const password = 'one password for both tenants';

/** Adds `email` to a tenant through its admin and sets the password with the one-time link. */
async function addWithPassword(adminToken: string): Promise<void> {
  const added = await api(world.base, 'POST', '/v1/users', { token: adminToken, body: { email, role: 'member' } });
  assert.equal(added.status, 201, added.text);
  const token = new URL(added.json.set_password_url).hash.slice(1);
  const set = await api(world.base, 'POST', '/v1/auth/set-password', { body: { token, password } });
  assert.equal(set.status, 204, set.text);
}

before(async () => {
  world = await startConsoleWorld();
  const other = await runSetup(world.server.deps.db, world.server.clock.now, { tenantName: 'Globex Security' });
  await addWithPassword(world.tenant.admin_token);
  await addWithPassword(other.admin_token);
});
after(() => world?.close());

describe('sign-in with one email in two tenants', () => {
  it('asks which tenant, then signs in to the one chosen', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/signals');
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const tenant = page.getByLabel('Tenant');
      await tenant.waitFor();
      await page.getByText('sign in to more than one tenant').waitFor();
      const names = await tenant.locator('option').allTextContents();
      assert.deepEqual(names.sort(), ['Acme Robotics', 'Globex Security']);
      await checkPage(page, 'sign-in-choose-tenant');
      await tenant.selectOption({ label: 'Globex Security' });
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(session.user.email, email);
      assert.notEqual(session.user.tenant_id, world.tenant.tenant_id, 'signed in to Globex, not Acme');
    } finally {
      await context.close();
    }
  });
});
