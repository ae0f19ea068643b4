// OpenID Connect single sign-on in Chromium, end to end against a real provider on loopback
// (panva's oidc-provider on http://localhost, another site than the console's 127.0.0.1, with
// its own login form): an admin connects the provider in Settings > Single sign-on; then a
// new person clicks Sign in with SSO, types their work email, signs in at the provider and
// comes back signed in to the console, an admin by their group. An email of a domain without single sign-on comes back to the
// sign-in page with the reason in plain words.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type OidcIdp, startOidcIdp } from '../../server/test/oidc-idp.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  signIn,
  startConsoleWorld,
} from './console-harness.ts';

const CLIENT_ID = 'guard-console';
const CLIENT_SECRET = 'oidc-browser-secret-0123456789abcdef';
const PEOPLE: Record<string, Record<string, unknown>> = {
  grace: { email: 'grace@acme-robotics.test', email_verified: true, name: 'Grace', groups: ['guard-admins'] },
};

let world: ConsoleWorld;
let idp: OidcIdp;
let issuer: string;

before(async () => {
  world = await startConsoleWorld();
  // localhost, not 127.0.0.1: another site than the console's, as a real provider is, so the
  // SameSite=Strict session cookie is proved to work after a cross-site return.
  idp = await startOidcIdp({
    host: 'localhost',
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    redirectUri: `${world.base}/v1/auth/oidc/callback`,
    people: PEOPLE,
  });
  issuer = idp.issuer;
});
after(async () => {
  await idp?.close();
  await world?.close();
});

describe('single sign-on with OpenID Connect in the console', () => {
  it('an admin connects the provider in Settings > Single sign-on', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/signals');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Single sign-on' }).click();
      await page.getByRole('heading', { level: 1, name: 'Single sign-on' }).waitFor();
      const oidc = page.getByRole('region', { name: 'OpenID Connect' });
      assert.equal(await oidc.getByLabel('Redirect URI').inputValue(), `${world.base}/v1/auth/oidc/callback`);
      // Nothing typed: each field says what it needs, nothing is sent.
      await oidc.getByRole('button', { name: 'Save' }).click();
      await page.getByText('Enter the issuer URL').waitFor();
      await oidc.getByLabel('Issuer URL').fill(issuer);
      await oidc.getByLabel('Client ID').fill(CLIENT_ID);
      await oidc.getByLabel('Client secret').fill(CLIENT_SECRET);
      await oidc.getByLabel('Email domains').fill('Acme-Robotics.test');
      await oidc.getByLabel('Admin group').fill('guard-admins');
      await oidc.getByRole('button', { name: 'Save' }).click();
      await page
        .getByRole('status')
        .getByText('Saved. People of acme-robotics.test can now sign in with SSO.')
        .waitFor();
      assert.equal(await oidc.getByLabel('Client secret').inputValue(), '', 'the secret is never shown back');
      await page.getByText('A secret is stored').waitFor();
      await checkPage(page, 'settings-single-sign-on');
      // Reloaded, the page shows the stored connection, still without the secret.
      await page.reload();
      await page.getByRole('heading', { level: 1, name: 'Single sign-on' }).waitFor();
      assert.equal(await oidc.getByLabel('Issuer URL').inputValue(), issuer);
      assert.equal(await oidc.getByLabel('Email domains').inputValue(), 'acme-robotics.test');
      assert.ok(!(await page.content()).includes(CLIENT_SECRET));
    } finally {
      await context.close();
    }
  });

  it('a new person signs in with SSO at the provider and arrives signed in, an admin by group', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/signals');
      await page.getByRole('button', { name: 'Sign in with SSO' }).click();
      await page.getByLabel('Work email').fill('grace@acme-robotics.test');
      await checkPage(page, 'sign-in-sso');
      await page.getByRole('button', { name: 'Continue' }).click();
      // The provider's own login form.
      await page.waitForURL(`${issuer}/**`);
      await page.getByPlaceholder('Enter any login').fill('grace');
      await page.getByPlaceholder('and password').fill('any password');
      await page.getByRole('button', { name: 'Sign-in' }).click();
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      assert.ok(page.url().startsWith(`${world.base}/console/`), page.url());
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(session.user.email, 'grace@acme-robotics.test');
      assert.equal(session.user.role, 'admin');
      assert.equal(session.user.tenant_id, world.tenant.tenant_id);
      assert.equal(session.method, 'oidc');
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByRole('link', { name: 'Single sign-on' }).waitFor();
    } finally {
      await context.close();
    }
  });

  it('an email of a domain without single sign-on comes back with the reason in plain words', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/');
      await page.getByRole('button', { name: 'Sign in with SSO' }).click();
      await page.getByLabel('Work email').fill('someone@unknown-company.test');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByRole('alert').getByText('Single sign-on is not set up for that email’s domain').waitFor();
      // Said once: the code is taken out of the address, so a later sign-in page does not repeat it.
      await page.waitForFunction(() => !window.location.search.includes('sso_error'));
      // Single sign-on's field is shown again; the password is one press away.
      await page.getByLabel('Work email').waitFor();
      await checkPage(page, 'sign-in-sso-error');
      await page.getByRole('button', { name: 'Use a password instead' }).click();
      await page.getByLabel('Password').waitFor();
      assert.equal(await page.getByLabel('Email').evaluate((e) => e === document.activeElement), true);
      assert.equal(await page.getByLabel('Work email').count(), 0);
    } finally {
      await context.close();
    }
  });
});
