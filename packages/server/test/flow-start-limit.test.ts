// The sign-ins anyone may start (single sign-on's starts, a password-less passkey's options)
// are limited per client address (src/auth/flow-start-limit.ts), against the real server on
// loopback: over the limit, 429 too_many_attempts with Retry-After, and nothing written.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { FLOW_START_LIMITS } from '../src/auth/flow-start-limit.ts';
import { api, isErrorShape, setupTenant, startTestServer, type TestServer } from './harness.ts';

describe('sign-ins anyone may start, limited per address', () => {
  let server: TestServer;
  let base: string;
  let tenant: Awaited<ReturnType<typeof setupTenant>>;

  before(async () => {
    server = await startTestServer();
    base = server.url;
    tenant = await setupTenant(server);
  });
  after(async () => {
    await server?.cleanup();
  });

  const flows = async () =>
    Number(
      (
        await server.deps.db
          .selectFrom('auth_flows')
          .select((e) => e.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  const oidcStart = () => api(base, 'GET', '/v1/auth/oidc/start?email=ada%40unknown.test');
  const samlStart = () => api(base, 'GET', '/v1/auth/saml/start?email=ada%40unknown.test');
  const passkeyOptions = () => api(base, 'POST', '/v1/auth/passkey/options', { headers: { origin: base } });

  it('answers 429 with Retry-After past the limit, for every kind of start, and writes no flow for it', async () => {
    // Passkey options write a flow each; the single sign-on starts of an unknown domain none.
    for (let i = 0; i < 10; i++) assert.equal((await passkeyOptions()).status, 200);
    for (let i = 10; i < FLOW_START_LIMITS.perAddress; i++) assert.equal((await oidcStart()).status, 302);
    const before = await flows();
    for (const start of [oidcStart, samlStart, passkeyOptions]) {
      const res = await start();
      assert.equal(res.status, 429, res.text);
      assert.ok(isErrorShape(res.json), res.text);
      assert.equal(res.json.error.code, 'too_many_attempts');
      assert.equal(res.headers.get('retry-after'), String(FLOW_START_LIMITS.windowMs / 1000));
    }
    assert.equal(await flows(), before, 'a refused start wrote a flow');
    // Everything else goes on: a password sign-in is not a flow start.
    const login = await api(base, 'POST', '/v1/auth/login', {
      body: { email: tenant.admin_email, password: tenant.admin_password },
    });
    assert.equal(login.status, 200, login.text);
    // Once the window has passed, the address starts again.
    server.clock.advance(FLOW_START_LIMITS.windowMs);
    assert.equal((await passkeyOptions()).status, 200);
    assert.equal((await oidcStart()).status, 302);
  });
});
