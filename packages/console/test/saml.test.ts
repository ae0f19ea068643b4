// SAML single sign-on in Chromium (issue 22, item 4): an admin configures the tenant's IdP on
// Settings > Single sign-on (the SP facts copied from the page), then a person of the domain
// goes to the SAML start URL, through the IdP's auto-submitting form (a real test IdP on
// another origin, posting cross-site to the ACS), and lands in the console signed in.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SamlIdp, startSamlIdp } from '../../server/test/saml-idp.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  signIn,
  startConsoleWorld,
} from './console-harness.ts';

let world: ConsoleWorld;
let idp: SamlIdp;

before(async () => {
  world = await startConsoleWorld();
  // `localhost` while the console is on 127.0.0.1: the IdP is another site, as in real life.
  idp = await startSamlIdp({ now: world.server.clock.now, host: 'localhost' });
});
after(async () => {
  await idp?.close();
  await world?.close();
});

describe('SAML single sign-on in the console', () => {
  it('an admin configures the SAML connection on Settings > Single sign-on', async () => {
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await open(page, '/settings');
      await signIn(page, world.tenant.admin_email, world.tenant.admin_password);
      await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Single sign-on' }).click();
      await page.getByRole('heading', { name: 'SAML 2.0' }).waitFor();
      const saml = page.getByRole('region', { name: 'SAML 2.0' });
      assert.equal(
        await saml.getByLabel('SP entity ID (audience)').inputValue(),
        `${world.base}/v1/auth/saml/metadata`,
      );
      assert.equal(await saml.getByLabel('ACS URL (reply URL)').inputValue(), `${world.base}/v1/auth/saml/acs`);
      assert.equal(await saml.getByLabel('Metadata URL').inputValue(), `${world.base}/v1/auth/saml/metadata`);
      await saml.getByRole('button', { name: 'Copy ACS URL' }).click();
      await page.getByText('Copied to the clipboard.').waitFor();
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), `${world.base}/v1/auth/saml/acs`);
      await checkPage(page, 'single-sign-on-saml-new');

      await saml.getByLabel('IdP entity ID').fill(idp.entityId);
      await saml.getByLabel('Single sign-on URL').fill('http://idp.example.com/sso');
      await saml.getByLabel('Signing certificates').fill(idp.signing.cert);
      await saml.getByLabel('Email domains').fill('example.com, example.org');
      await saml.getByLabel('Groups attribute').fill('groups');
      await saml.getByLabel('Admin group').fill('guard-admins');
      await saml.getByRole('button', { name: 'Save SAML connection' }).click();
      // The server's refusal lands on the field it is about.
      await saml.getByText('sso_url must be https://').waitFor();
      assert.equal(await saml.getByLabel('Single sign-on URL').getAttribute('aria-invalid'), 'true');
      await saml.getByLabel('Single sign-on URL').fill(idp.ssoUrl);
      await saml.getByRole('button', { name: 'Save SAML connection' }).click();
      await saml.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      await saml.getByRole('list', { name: 'Signing certificates in use' }).getByText('CN=Test SAML IdP').waitFor();
      await checkPage(page, 'single-sign-on-saml');
    } finally {
      await context.close();
    }
  });

  it('a person of the domain signs in through the IdP and lands in the console', async () => {
    idp.user = { email: 'ada@example.com', groups: ['engineering'] };
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await page.goto(`/v1/auth/saml/start?email=${encodeURIComponent('ada@example.com')}`);
      // Start → the IdP's page → its form posts to the ACS → 303 to the console, signed in.
      await page.getByRole('button', { name: 'Sign out' }).waitFor();
      await page.waitForURL((url) => url.pathname === '/console/signals');
      assert.equal(idp.requests.length, 1);
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).json());
      assert.equal(session.user.email, 'ada@example.com');
      assert.equal(session.user.role, 'member');
      assert.equal(session.method, 'saml');
      await checkPage(page, 'saml-signed-in');
    } finally {
      await context.close();
    }
  });

  it('a refused response goes back to the console’s sign-in, which says why', async () => {
    idp.user = { email: 'eve@example.com' };
    idp.next = { audience: 'https://other-sp.example/metadata' };
    const context = await newContext(world);
    const page = await newPage(context);
    try {
      await page.goto(`/v1/auth/saml/start?email=${encodeURIComponent('eve@example.com')}`);
      // Back on the sign-in page, at single sign-on's work email (where the person came from).
      await page.getByLabel('Work email').waitFor();
      const url = new URL(page.url());
      assert.match(url.pathname, /^\/console\/?$/);
      // The code was said once, then taken out of the address (a reload does not repeat it).
      assert.equal(url.searchParams.get('sso_error'), null);
      await page.getByRole('alert').getByText('could not verify the answer of your identity provider').waitFor();
      const session = await page.evaluate(async () => (await fetch('/v1/auth/session')).status);
      assert.equal(session, 401);
      await checkPage(page, 'sign-in-sso-error');
    } finally {
      await context.close();
    }
  });
});
