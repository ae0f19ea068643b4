// The users API (DESIGN §7 contract) against the real server on loopback: an admin adds a
// user, who sets a password through the one-time link and signs in; roles change; the last
// admin stays; a removed user's sessions, tokens and links die; members write nothing;
// another tenant's users are "not found"; every change is in the audit log.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { asBrowser, signIn } from './console-session.ts';
import {
  api,
  isErrorShape,
  type Loose,
  makeTempDir,
  setupCli,
  setupTenant,
  startTestServer,
  type TestServer,
} from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const PASSWORD = 'correct horse battery staple';

describe('users API', () => {
  let server: TestServer;
  let base: string;
  let a: Awaited<ReturnType<typeof setupTenant>>;
  let b: Awaited<ReturnType<typeof setupTenant>>;

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
    b = await setupTenant(server);
  });
  after(() => server.cleanup());

  const addUser = (token: string, email: string, role = 'member') =>
    api(base, 'POST', '/v1/users', { token, body: { email, role } });
  const tokenOf = (url: string) => url.slice(url.indexOf('#') + 1);

  it('an admin adds a member, who sets a password through the one-time link and signs in', async () => {
    const res = await addUser(a.admin_token, 'Mia@Example.com');
    assert.equal(res.status, 201, res.text);
    assert.deepEqual(Object.keys(res.json).sort(), ['email', 'expires_at', 'id', 'role', 'set_password_url']);
    assert.equal(res.json.email, 'mia@example.com');
    assert.equal(res.json.role, 'member');
    assert.match(res.json.set_password_url, new RegExp(`^${base}/console/set-password#gsp_[A-Za-z0-9_-]{43}$`));
    assert.equal(res.json.expires_at, new Date(server.clock.ms + 24 * 3_600_000).toISOString());
    const token = tokenOf(res.json.set_password_url);

    const listed = (await api(base, 'GET', '/v1/users', { token: a.admin_token })).json.users;
    const mia = listed.find((u: Loose) => u.id === res.json.id);
    assert.deepEqual(mia, {
      id: res.json.id,
      email: 'mia@example.com',
      role: 'member',
      created_at: server.clock.now().toISOString(),
      has_password: false,
      last_login_at: null,
      totp_enabled: false,
      deactivated_at: null,
    });
    await assert.rejects(signIn(base, 'mia@example.com', ''), /400|401/);

    const check = await api(base, 'GET', `/v1/auth/password-links/${token}`);
    assert.equal(check.status, 200, check.text);
    assert.deepEqual(check.json, { email: 'mia@example.com', expires_at: res.json.expires_at });
    const short = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: 'too short' } });
    assertError(short, 400, 'invalid_request');
    const set = await api(base, 'POST', '/v1/auth/set-password', {
      body: { token, password: PASSWORD },
      headers: { origin: base },
    });
    assert.equal(set.status, 204, set.text);

    const session = await signIn(base, 'mia@example.com', PASSWORD);
    assert.equal(session.login.user.role, 'member');
    assert.equal(session.login.user.tenant_id, a.tenant_id);
    const after = (await api(base, 'GET', '/v1/users', { token: a.admin_token })).json.users;
    const now = after.find((u: Loose) => u.id === res.json.id);
    assert.equal(now.has_password, true);
    assert.equal(now.last_login_at, server.clock.now().toISOString());

    // The link worked once.
    assertError(await api(base, 'GET', `/v1/auth/password-links/${token}`), 410, 'link_expired');
    const again = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: 'another password!' } });
    assertError(again, 410, 'link_expired');
    await signIn(base, 'mia@example.com', PASSWORD);
  });

  it('a link expires after 24 hours; an unknown link is 404; a new link replaces the old one', async () => {
    const res = await addUser(a.admin_token, 'late@example.com');
    const first = tokenOf(res.json.set_password_url);
    const renewed = await api(base, 'POST', `/v1/users/${res.json.id}/password-link`, { token: a.admin_token });
    assert.equal(renewed.status, 201, renewed.text);
    const second = tokenOf(renewed.json.set_password_url);
    assertError(await api(base, 'GET', `/v1/auth/password-links/${first}`), 404, 'not_found');
    assertError(await api(base, 'GET', '/v1/auth/password-links/gsp_unknown'), 404, 'not_found');
    server.clock.advance(24 * 3_600_000);
    assertError(await api(base, 'GET', `/v1/auth/password-links/${second}`), 410, 'link_expired');
    const late = await api(base, 'POST', '/v1/auth/set-password', { body: { token: second, password: PASSWORD } });
    assertError(late, 410, 'link_expired');
  });

  it('a set-password from another origin is refused', async () => {
    const res = await addUser(a.admin_token, 'cross@example.com');
    const forged = await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: tokenOf(res.json.set_password_url), password: PASSWORD },
      headers: { origin: 'https://evil.example' },
    });
    assertError(forged, 403, 'csrf_failed');
  });

  it('an email is taken once per tenant, whatever its case; another tenant may have it and learns nothing', async () => {
    const taken = await addUser(a.admin_token, 'MIA@example.com');
    assertError(taken, 409, 'email_taken');
    assert.equal(taken.json.error.message, 'this tenant already has a user with this email');
    // Tenant b is told nothing of tenant a's users: the address is simply free in b.
    const elsewhere = await addUser(b.admin_token, 'mia@example.com');
    assert.equal(elsewhere.status, 201, elsewhere.text);
    assert.equal(elsewhere.json.email, 'mia@example.com');
    assertError(await addUser(a.admin_token, 'not an email'), 400, 'invalid_request');
    assertError(
      await api(base, 'POST', '/v1/users', { token: a.admin_token, body: { email: 'x@example.com', role: 'support' } }),
      400,
      'invalid_request',
    );
  });

  it('the last admin can be neither demoted nor removed; with a second admin both can', async () => {
    const s = await setupTenant(server);
    const me = (await api(base, 'GET', '/v1/users', { token: s.admin_token })).json.users[0];
    assertError(
      await api(base, 'PATCH', `/v1/users/${me.id}`, { token: s.admin_token, body: { role: 'member' } }),
      409,
      'last_admin',
    );
    assertError(await api(base, 'DELETE', `/v1/users/${me.id}`, { token: s.admin_token }), 409, 'last_admin');
    const other = await addUser(s.admin_token, `second-${s.tenant_id}@example.com`);
    const promoted = await api(base, 'PATCH', `/v1/users/${other.json.id}`, {
      token: s.admin_token,
      body: { role: 'admin' },
    });
    assert.equal(promoted.status, 200, promoted.text);
    assert.equal(promoted.json.role, 'admin');
    const demoted = await api(base, 'PATCH', `/v1/users/${me.id}`, { token: s.admin_token, body: { role: 'member' } });
    assert.equal(demoted.status, 200, demoted.text);
    // The role is read on every request: the demotion applies at once.
    assertError(await api(base, 'GET', '/v1/users', { token: s.admin_token }), 403, 'forbidden');
  });

  it('removing a user kills their sessions, API tokens and set-password links', async () => {
    const res = await addUser(a.admin_token, 'leaver@example.com', 'admin');
    const token = tokenOf(res.json.set_password_url);
    await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: PASSWORD } });
    const session = await signIn(base, 'leaver@example.com', PASSWORD);
    const apiToken = (await asBrowser(base, session, 'POST', '/v1/me/tokens', { body: { name: 'x' } })).json.token;
    assert.equal((await api(base, 'GET', '/v1/users', { token: apiToken })).status, 200);
    const link = await api(base, 'POST', `/v1/users/${res.json.id}/password-link`, { token: a.admin_token });

    const del = await api(base, 'DELETE', `/v1/users/${res.json.id}`, { token: a.admin_token });
    assert.equal(del.status, 204, del.text);
    assertError(await asBrowser(base, session, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    assertError(await api(base, 'GET', '/v1/users', { token: apiToken }), 401, 'unauthorized');
    assertError(
      await api(base, 'GET', `/v1/auth/password-links/${tokenOf(link.json.set_password_url)}`),
      404,
      'not_found',
    );
    await assert.rejects(signIn(base, 'leaver@example.com', PASSWORD), /401/);
    assertError(await api(base, 'DELETE', `/v1/users/${res.json.id}`, { token: a.admin_token }), 404, 'not_found');
    // The email is free again.
    assert.equal((await addUser(a.admin_token, 'leaver@example.com')).status, 201);
  });

  it('a reset through a set-password link ends every session and revokes every personal API token', async () => {
    const res = await addUser(a.admin_token, 'reset@example.com');
    await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: tokenOf(res.json.set_password_url), password: PASSWORD },
    });
    const session = await signIn(base, 'reset@example.com', PASSWORD);
    const apiToken = (await asBrowser(base, session, 'POST', '/v1/me/tokens', { body: { name: 'laptop' } })).json.token;
    assert.equal((await api(base, 'GET', '/v1/signals', { token: apiToken })).status, 200);
    // The account is thought compromised: an admin sends a new link, the user sets a password.
    const link = await api(base, 'POST', `/v1/users/${res.json.id}/password-link`, { token: a.admin_token });
    const set = await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: tokenOf(link.json.set_password_url), password: 'a brand new passphrase' },
    });
    assert.equal(set.status, 204, set.text);
    assertError(await asBrowser(base, session, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    assertError(await api(base, 'GET', '/v1/signals', { token: apiToken }), 401, 'unauthorized');
    const fresh = await signIn(base, 'reset@example.com', 'a brand new passphrase');
    assert.deepEqual((await asBrowser(base, fresh, 'GET', '/v1/me/tokens')).json.tokens, []);
  });

  it("another tenant's users are not found", async () => {
    const mine = await addUser(a.admin_token, 'isolated@example.com');
    const id = mine.json.id;
    assertError(
      await api(base, 'PATCH', `/v1/users/${id}`, { token: b.admin_token, body: { role: 'admin' } }),
      404,
      'not_found',
    );
    assertError(await api(base, 'DELETE', `/v1/users/${id}`, { token: b.admin_token }), 404, 'not_found');
    assertError(await api(base, 'POST', `/v1/users/${id}/password-link`, { token: b.admin_token }), 404, 'not_found');
    const listed = (await api(base, 'GET', '/v1/users', { token: b.admin_token })).json.users;
    assert.ok(!listed.some((u: Loose) => u.id === id));
  });

  it('a member gets 403 on every write, through a session with a valid CSRF token too', async () => {
    const res = await addUser(a.admin_token, 'reader@example.com');
    await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: tokenOf(res.json.set_password_url), password: PASSWORD },
    });
    const member = await signIn(base, 'reader@example.com', PASSWORD);
    const endpoint = await api(base, 'POST', '/v1/webhooks/endpoints', {
      token: a.admin_token,
      body: { name: 'e', url: 'https://hooks.example.com/x' },
    });
    const e = endpoint.json.id;
    const writes: [string, string, unknown?][] = [
      ['POST', '/v1/users', { email: 'new@example.com', role: 'member' }],
      ['PATCH', `/v1/users/${res.json.id}`, { role: 'admin' }],
      ['DELETE', `/v1/users/${res.json.id}`],
      ['POST', `/v1/users/${res.json.id}/password-link`],
      ['POST', '/v1/webhooks/endpoints', { name: 'x', url: 'https://hooks.example.com/y' }],
      ['PATCH', `/v1/webhooks/endpoints/${e}`, { enabled: false }],
      ['DELETE', `/v1/webhooks/endpoints/${e}`],
      ['POST', `/v1/webhooks/endpoints/${e}/test`],
      ['POST', '/v1/webhooks/deliveries/00000000-0000-7000-8000-000000000000/redeliver'],
      ['POST', '/v1/enrollment-tokens', {}],
      ['DELETE', '/v1/enrollment-tokens/et_x'],
      ['POST', '/v1/agents/ag_x/revoke'],
    ];
    for (const [method, path, body] of writes) {
      const r = await asBrowser(base, member, method, path, body === undefined ? {} : { body });
      assert.equal(r.status, 403, `${method} ${path}: ${r.text}`);
      assert.equal(r.json.error.code, 'forbidden', `${method} ${path}`);
    }
    // What members may read, they read.
    assert.equal((await asBrowser(base, member, 'GET', '/v1/webhooks/endpoints')).status, 200);
    assertError(await asBrowser(base, member, 'GET', '/v1/users'), 403, 'forbidden');
  });

  it('every change to users is audited; an admin reads their tenant’s log, support staff every tenant’s', async () => {
    const log = await api(base, 'GET', '/v1/audit?limit=200', { token: a.admin_token });
    assert.equal(log.status, 200, log.text);
    const actions = new Set(log.json.entries.map((e: Loose) => e.action));
    for (const action of ['user.create', 'user.delete', 'user.password_link']) assert.ok(actions.has(action), action);
    for (const e of log.json.entries) assert.equal(e.tenant_id, a.tenant_id);
    const creates = await api(base, 'GET', '/v1/audit?action=user.create&limit=2', { token: a.admin_token });
    assert.equal(creates.json.entries.length, 2);
    assert.ok(creates.json.next_before);
    const next = await api(
      base,
      'GET',
      `/v1/audit?action=user.create&limit=200&before=${encodeURIComponent(creates.json.next_before)}`,
      {
        token: a.admin_token,
      },
    );
    assert.ok(next.json.entries.every((e: Loose) => !creates.json.entries.some((c: Loose) => c.id === e.id)));
    assert.ok(server.supportToken);
    const all = await api(base, 'GET', '/v1/audit?limit=200', { token: server.supportToken });
    assert.equal(all.status, 200, all.text);
    const tenants = new Set(all.json.entries.map((e: Loose) => e.tenant_id));
    assert.ok(tenants.has(a.tenant_id) && tenants.size > 1);
    const onlyB = await api(base, 'GET', `/v1/audit?tenant_id=${b.tenant_id}`, { token: server.supportToken });
    for (const e of onlyB.json.entries) assert.equal(e.tenant_id, b.tenant_id);
  });

  it('support staff sign in too, and are no tenant admin', async () => {
    const fresh = await startTestServer();
    try {
      const s = await setupTenant(fresh);
      assert.ok(s.support_email && s.support_password);
      const support = await signIn(fresh.url, s.support_email, s.support_password);
      assert.equal(support.login.user.role, 'support');
      assert.equal(support.login.user.tenant_id, null);
      assert.equal((await asBrowser(fresh.url, support, 'GET', '/v1/support/bundles')).status, 200);
      assert.equal((await asBrowser(fresh.url, support, 'GET', '/v1/audit')).status, 200);
      assertError(await asBrowser(fresh.url, support, 'GET', '/v1/users'), 403, 'forbidden');
    } finally {
      await fresh.cleanup();
    }
  });
});

describe('guard-server setup --json', () => {
  it('creates an admin and a support account that sign in with the printed passwords', async () => {
    const dataDir = await makeTempDir('setup-signin');
    const setup = await setupCli(dataDir);
    const server = await startTestServer({ dataDir });
    try {
      const admin = await signIn(server.url, setup.admin_email, setup.admin_password);
      assert.equal(admin.login.user.role, 'admin');
      assert.equal(admin.login.user.tenant_id, setup.tenant_id);
      assert.ok(setup.support_email && setup.support_password);
      const support = await signIn(server.url, setup.support_email, setup.support_password);
      assert.equal(support.login.user.role, 'support');
    } finally {
      await server.cleanup();
    }
  });
});
