// Two-step sign-in in Chromium (DESIGN §6): an admin sets up an authenticator app in
// Settings > Account (the QR code's setup key, a first code, the ten recovery codes shown
// once), then signs in with the password and a code in the field labelled "Authentication
// code", and once with a recovery code; a member of a tenant that requires two-step sign-in
// is shown only the setup until it is done; the Users page shows who has it on and the
// tenant's sign-in policy.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import type { Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  settled,
  startConsoleWorld,
} from './console-harness.ts';

let world: ConsoleWorld;
const STEP = 30_000;

/** The code an authenticator app shows now for the setup key on the page. */
function codeFor(key: string, ms: number): string {
  const secret = OTPAuth.Secret.fromBase32(key.replace(/\s/g, ''));
  return new OTPAuth.TOTP({ secret }).generate({ timestamp: ms });
}

async function signInWithPassword(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
}

/** Sets the app up on the page it is on (Account, or the required setup): returns the key and the codes. */
async function setUpApp(page: Page, screenshot?: string): Promise<{ key: string; codes: string[] }> {
  await page.getByRole('button', { name: 'Set up authenticator app' }).click();
  await page.getByRole('img', { name: 'QR code for your authenticator app' }).waitFor();
  const key = await page.getByLabel('Setup key').inputValue();
  assert.match(key, /^([A-Z2-7]{4} ){7}[A-Z2-7]{4}$/);
  if (screenshot) await checkPage(page, `${screenshot}-scan`);
  await page.getByLabel('Authentication code').fill(codeFor(key, world.server.clock.now().getTime()));
  await page.getByRole('button', { name: 'Turn on' }).click();
  const codes = (await page.getByLabel('Recovery codes').inputValue()).split('\n');
  assert.equal(codes.length, 10);
  if (screenshot) await checkPage(page, `${screenshot}-recovery-codes`);
  await page.getByRole('button', { name: 'I saved my recovery codes' }).click();
  return { key, codes };
}

before(async () => {
  world = await startConsoleWorld();
});
after(() => world?.close());

describe('two-step sign-in in the console', () => {
  it('is set up in Settings > Account, then asked for at sign-in, with a code or a recovery code', async () => {
    const { admin_email: email, admin_password: password } = world.tenant;
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/settings/account');
      await signInWithPassword(page, email, password);
      await page.getByRole('heading', { name: 'Two-step sign-in' }).waitFor();
      await settled(page);
      const { key, codes } = await setUpApp(page, 'account-two-step');
      await page.getByText('10 of 10 recovery codes left').waitFor();
      await checkPage(page, 'account-two-step-on');

      await page.getByRole('button', { name: 'Sign out' }).click();
      world.server.clock.advance(STEP);
      await signInWithPassword(page, email, password);
      const field = page.getByLabel('Authentication code');
      await field.waitFor();
      await checkPage(page, 'sign-in-second-step');
      await field.fill('000000');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByText('That code is not right').waitFor();
      await field.fill(codeFor(key, world.server.clock.now().getTime()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(session.method, 'totp');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await signInWithPassword(page, email, password);
      await page.getByRole('button', { name: 'Use a recovery code' }).click();
      await page.getByLabel('Recovery code').fill(codes[3]);
      await checkPage(page, 'sign-in-recovery-code');
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await open(page, '/settings/account');
      await page.getByText('9 of 10 recovery codes left').waitFor();
    } finally {
      await context.close();
    }
  });

  it('a tenant that requires it shows a member only the setup until it is done', async () => {
    const email = 'rita@acme.example';
    const password = 'rita has a long password';
    const added = await api(world.base, 'POST', '/v1/users', {
      token: world.tenant.admin_token,
      body: { email, role: 'member' },
    });
    const token = new URL(added.json.set_password_url).hash.slice(1);
    await api(world.base, 'POST', '/v1/auth/set-password', { body: { token, password } });
    const policy = await api(world.base, 'PATCH', '/v1/tenant/settings', {
      token: world.tenant.admin_token,
      body: { require_mfa: true },
    });
    assert.equal(policy.status, 200, policy.text);
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/signals');
      await signInWithPassword(page, email, password);
      await page.getByRole('heading', { name: 'Set up two-step sign-in' }).waitFor();
      await settled(page);
      assert.equal(await page.getByRole('link', { name: 'Signals' }).count(), 0, 'no navigation before the setup');
      await checkPage(page, 'mfa-setup-required');
      await setUpApp(page);
      await page.getByRole('link', { name: 'Signals' }).first().waitFor();
      await page.getByRole('heading', { name: 'Signals', level: 1 }).waitFor();
    } finally {
      await context.close();
      await api(world.base, 'PATCH', '/v1/tenant/settings', {
        token: world.tenant.admin_token,
        body: { require_mfa: false },
      });
    }
  });

  it("the Users page shows who has it on, resets a user's factors, and holds the sign-in policy", async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/settings/users');
      await signInWithPassword(page, world.tenant.admin_email, world.tenant.admin_password);
      // The admin set up TOTP in the first test: the second step is asked.
      world.server.clock.advance(STEP);
      await page.getByLabel('Authentication code').fill(codeFor(await adminKey(), world.server.clock.now().getTime()));
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.getByRole('heading', { name: 'Users', level: 1 }).waitFor();
      await settled(page);
      const rita = page.getByRole('row', { name: /rita@acme\.example/ });
      await rita.getByText('on', { exact: true }).waitFor();
      await page.getByRole('checkbox', { name: 'Require two-step sign-in' }).waitFor();
      await checkPage(page, 'users-two-step-policy');
      await rita.getByRole('button', { name: 'Reset two-step' }).click();
      await rita.getByRole('button', { name: 'Reset two-step' }).click();
      await rita.getByText('off', { exact: true }).waitFor();
      // Requiring single sign-on without a connected provider says what to do first.
      await page.getByRole('checkbox', { name: 'Require single sign-on' }).click();
      await page.getByText('Connect an identity provider').waitFor();
    } finally {
      await context.close();
    }
  });
});

/** The admin's TOTP secret as their app holds it (read back from the sealed column). */
async function adminKey(): Promise<string> {
  const { open: openSealed } = await import('../../server/src/kernel/secret-box.ts');
  const row = await world.server.deps.db
    .selectFrom('users')
    .select(['id', 'totp_secret_sealed'])
    .where('email', '=', world.tenant.admin_email)
    .executeTakeFirstOrThrow();
  return openSealed(world.server.deps.masterKey.derive('totp'), row.totp_secret_sealed ?? '', row.id);
}
