// Passkeys in Chromium with its DevTools virtual authenticator (a platform authenticator that
// keeps discoverable credentials and verifies the user): add one in Settings > Account, rename
// it, sign out, sign in with it alone; a passkey as the second factor of a password step; and
// remove it. The server's public URL is http://localhost:<port>: WebAuthn refuses an IP address
// as the relying party.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
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
  world = await startConsoleWorld({ localhost: true });
});
after(() => world?.close());

/** A browser profile with a virtual platform authenticator (its passkeys live as long as the profile). */
async function withAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: {
      protocol: 'ctap2',
      transport: 'internal',
      hasResidentKey: true,
      hasUserVerification: true,
      isUserVerified: true,
      automaticPresenceSimulation: true,
    },
  });
  return {
    async credentials() {
      return (await cdp.send('WebAuthn.getCredentials', { authenticatorId })).credentials;
    },
  };
}

describe('passkeys in the console', () => {
  it('adds a passkey in Settings > Account, renames it, signs out and signs in with it alone', async () => {
    assert.match(world.base, /^http:\/\/localhost:\d+$/);
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      const authenticator = await withAuthenticator(context, page);
      await open(page, '/settings/account');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      const section = page.getByRole('region', { name: 'Passkeys' });
      await section.getByText('You have no passkeys.').waitFor();

      await section.getByLabel('Passkey name').fill('Work laptop');
      await section.getByRole('button', { name: 'Add passkey' }).click();
      await section.getByText('Passkey “Work laptop” added.').waitFor();
      const table = section.getByRole('table', { name: 'Your passkeys' });
      await table.getByRole('cell', { name: 'Work laptop' }).waitFor();
      assert.equal((await authenticator.credentials()).length, 1, 'the authenticator keeps one discoverable passkey');
      assert.ok((await authenticator.credentials())[0].isResidentCredential);
      await checkPage(page, 'settings-account-passkeys');

      await table.getByRole('button', { name: 'Rename' }).click();
      const newName = table.getByLabel('New name');
      assert.ok(await newName.evaluate((el) => el === document.activeElement), 'focus moves to the new name');
      await newName.fill('Laptop (Touch ID)');
      await checkPage(page, 'settings-account-passkey-rename');
      await table.getByRole('button', { name: 'Save' }).click();
      await table.getByRole('cell', { name: 'Laptop (Touch ID)' }).waitFor();
      const row = table.getByRole('row', { name: /Laptop \(Touch ID\)/ });
      assert.match((await row.textContent()) ?? '', /never/, 'not used yet');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();
      await checkPage(page, 'sign-in-with-passkey');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(session.user.email, world.tenant.admin_email);
      assert.equal(session.method, 'passkey');

      await open(page, '/settings/account');
      const used = page.getByRole('region', { name: 'Passkeys' }).getByRole('row', { name: /Laptop \(Touch ID\)/ });
      await used.waitFor();
      assert.doesNotMatch((await used.textContent()) ?? '', /never/, 'its last use is shown');
    } finally {
      await context.close();
    }
  });

  it('a passkey completes a password step (the second factor), then is removed after confirmation', async () => {
    const context = await newContext(world, NARROW);
    const page = await newPage(context);
    try {
      await withAuthenticator(context, page);
      // A member of their own, whose one second factor is the passkey added here.
      const email = 'pat@acme.example';
      const password = 'pat has a long password';
      const added = await api(world.base, 'POST', '/v1/users', {
        token: world.tenant.admin_token,
        body: { email, role: 'member' },
      });
      const token = new URL(added.json.set_password_url).hash.slice(1);
      await api(world.base, 'POST', '/v1/auth/set-password', { body: { token, password } });
      await open(page, '/settings/account');
      await signIn(page, email, password);
      const section = page.getByRole('region', { name: 'Passkeys' });
      await section.getByLabel('Passkey name').fill('Phone');
      await section.getByRole('button', { name: 'Add passkey' }).click();
      await section.getByText('Passkey “Phone” added.').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();

      // The password is right: the second step offers the passkey (the only factor held).
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      await page.getByRole('button', { name: 'Use a passkey' }).waitFor();
      assert.equal(await page.getByLabel('Authentication code').count(), 0, 'no TOTP to ask for');
      await checkPage(page, 'sign-in-second-step-passkey');
      await page.getByRole('button', { name: 'Use a passkey' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const signedIn = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(signedIn.method, 'passkey', JSON.stringify(signedIn));
      assert.equal(signedIn.user.email, email);

      await open(page, '/settings/account');
      const table = page.getByRole('region', { name: 'Passkeys' }).getByRole('table', { name: 'Your passkeys' });
      const row = table.getByRole('row', { name: /Phone/ });
      await row.getByRole('button', { name: 'Remove' }).click();
      await checkPage(page, 'settings-account-passkey-remove');
      await row.getByRole('button', { name: 'Remove' }).click();
      await row.waitFor({ state: 'detached' });
    } finally {
      await context.close();
    }
  });
});
