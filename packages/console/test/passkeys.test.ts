// Passkeys in Chromium with its DevTools virtual authenticator (a platform authenticator that
// keeps discoverable credentials and verifies the user): add one in Settings > Account, rename
// it, sign out, sign in with it alone; a passkey as the second factor of a password step; and
// remove it. The server's public URL is http://localhost:<port>: WebAuthn refuses an IP address
// as the relying party.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { AuthFlows } from '../../server/src/auth/index.ts';
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
      await open(page, '/settings/account');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      const section = page.getByRole('region', { name: 'Passkeys' });
      await section.getByLabel('Passkey name').fill('Phone');
      await section.getByRole('button', { name: 'Add passkey' }).click();
      await section.getByText('Passkey “Phone” added.').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('button', { name: 'Sign in with a passkey' }).waitFor();

      // The password step as POST /v1/auth/login leaves it for a user with a second factor.
      const user = await world.server.deps.db
        .selectFrom('users')
        .select(['id', 'tenant_id', 'password_hash'])
        .where('email', '=', world.tenant.admin_email)
        .where('tenant_id', '=', world.tenant.tenant_id)
        .executeTakeFirstOrThrow();
      const mfaToken = await new AuthFlows(world.server.deps.db, world.server.clock.now).start('mfa', {
        tenantId: user.tenant_id,
        userId: user.id,
        data: { password_hash: user.password_hash },
        ttlMs: 5 * 60_000,
      });
      // The two requests passkeySecondFactor makes, with the browser's own navigator.credentials.get().
      const signedIn = await page.evaluate(async (token) => {
        const post = async (path: string, body: unknown) => {
          const res = await fetch(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          return res.json();
        };
        const b64u = (b: ArrayBuffer) =>
          btoa(String.fromCharCode(...new Uint8Array(b)))
            .replaceAll('+', '-')
            .replaceAll('/', '_')
            .replace(/=+$/, '');
        const unb64u = (s: string) =>
          Uint8Array.from(atob(s.replaceAll('-', '+').replaceAll('_', '/')), (c) => c.charCodeAt(0));
        const { options } = await post('/v1/auth/login/mfa/passkey/options', { mfa_token: token });
        const cred = (await navigator.credentials.get({
          publicKey: {
            challenge: unb64u(options.challenge),
            rpId: options.rpId,
            userVerification: options.userVerification,
            allowCredentials: options.allowCredentials.map((c: { id: string }) => ({
              type: 'public-key',
              id: unb64u(c.id),
            })),
          },
        })) as PublicKeyCredential;
        const r = cred.response as AuthenticatorAssertionResponse;
        return post('/v1/auth/login/mfa/passkey', {
          mfa_token: token,
          response: {
            id: cred.id,
            rawId: b64u(cred.rawId),
            type: 'public-key',
            response: {
              clientDataJSON: b64u(r.clientDataJSON),
              authenticatorData: b64u(r.authenticatorData),
              signature: b64u(r.signature),
              ...(r.userHandle ? { userHandle: b64u(r.userHandle) } : {}),
            },
            clientExtensionResults: {},
          },
        });
      }, mfaToken);
      assert.equal(signedIn.method, 'passkey', JSON.stringify(signedIn));
      assert.equal(signedIn.user.email, world.tenant.admin_email);

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
