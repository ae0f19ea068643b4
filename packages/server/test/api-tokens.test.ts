// Scoped, expiring personal API tokens (docs/identity.md#api-tokens) against the real server on
// loopback: a scoped token reaches only the areas and access its scopes grant (deny by default),
// never writes its own account, expires with 401 token_expired, and records when it was last
// used (at most once a minute). Every /v1 route declares its area, so none can forget it.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { declaredRoutes, stillAuthorised, type UserPrincipal } from '../src/auth/index.ts';
import { asBrowser, signIn } from './console-session.ts';
import { api, isErrorShape, type Loose, setupTenant, startTestServer, type TestServer } from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const DAY_MS = 86_400_000;

/**
 * /v1 routes that belong to no scope, on purpose: signing in (no token yet) and the agents'
 * own routes (agent keys, never user tokens), and the presigned PUT of the embedded store. A scoped token is refused on each of them.
 */
const NO_SCOPE = [
  /^\/v1\/auth\//,
  /^\/v1\/agent\//,
  /^\/v1\/agents\/enroll$/,
  /^\/v1\/support\/bundle\/(upload-url|register)$/,
  /^\/v1\/objects\//, // the embedded store's presigned PUT: its URL's signature is the credential
];

describe('scoped API tokens', () => {
  let server: TestServer;
  let base: string;
  let a: Awaited<ReturnType<typeof setupTenant>>;

  async function token(body: Record<string, unknown>, as = a.admin_token) {
    const res = await api(base, 'POST', '/v1/me/tokens', { token: as, body: { name: 'scoped', ...body } });
    assert.equal(res.status, 201, res.text);
    return res.json as { id: string; token: string; scopes: string[] | null; expires_at: string | null };
  }

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
  });
  after(() => server.cleanup());

  it('every /v1 route declares its area, or is one of the few that take no scoped token', () => {
    const routes = declaredRoutes(server.running.app).filter((r) => r.url.startsWith('/v1/'));
    assert.ok(routes.length > 50, `only ${routes.length} routes seen`);
    const undeclared = routes
      .filter((r) => r.scope === undefined && !NO_SCOPE.some((p) => p.test(r.url)))
      .map((r) => `${r.method} ${r.url}`);
    assert.deepEqual(undeclared, [], 'these routes declare no `config: { scope }` (auth/scopes.ts)');
  });

  it('a token without scopes has the full access of its role, shown as scopes null', async () => {
    const full = await token({});
    assert.equal(full.scopes, null);
    assert.equal(full.expires_at, null);
    assert.equal((await api(base, 'GET', '/v1/users', { token: full.token })).status, 200);
    assert.equal((await api(base, 'GET', '/v1/webhooks/endpoints', { token: full.token })).status, 200);
  });

  it('read reaches every read of the role and no write', async () => {
    const t = await token({ scopes: ['read'] });
    assert.deepEqual(t.scopes, ['read']);
    for (const path of [
      '/v1/users',
      '/v1/webhooks/endpoints',
      '/v1/signals',
      '/v1/servers',
      '/v1/audit',
      '/v1/tenant/settings',
    ])
      assert.equal((await api(base, 'GET', path, { token: t.token })).status, 200, path);
    const write = await api(base, 'POST', '/v1/users', {
      token: t.token,
      body: { email: 'r@example.com', role: 'member' },
    });
    assertError(write, 403, 'insufficient_scope');
    assert.match(write.json.error.message, /users:write/);
  });

  it('an area scope reaches its area only; its write implies its read', async () => {
    const t = await token({ scopes: ['webhooks:write'] });
    assert.equal((await api(base, 'GET', '/v1/webhooks/endpoints', { token: t.token })).status, 200);
    const created = await api(base, 'POST', '/v1/webhooks/endpoints', {
      token: t.token,
      body: { name: 'siem', url: 'https://siem.example.com/hook' },
    });
    assert.equal(created.status, 201, created.text);
    const users = await api(base, 'GET', '/v1/users', { token: t.token });
    assertError(users, 403, 'insufficient_scope');
    assert.match(users.json.error.message, /users:read/);
    assertError(await api(base, 'GET', '/v1/audit', { token: t.token }), 403, 'insufficient_scope');

    const reader = await token({ scopes: ['users:read', 'audit:read'] });
    assert.equal((await api(base, 'GET', '/v1/users', { token: reader.token })).status, 200);
    assert.equal((await api(base, 'GET', '/v1/audit', { token: reader.token })).status, 200);
    const patch = await api(base, 'PATCH', '/v1/users/usr_someone', {
      token: reader.token,
      body: { role: 'member' },
    });
    assertError(patch, 403, 'insufficient_scope');
    assert.match(patch.json.error.message, /users:write/);
    assertError(
      await api(base, 'DELETE', `/v1/webhooks/endpoints/${created.json.id}`, { token: reader.token }),
      403,
      'insufficient_scope',
    );
  });

  it('a scope never widens the role: a member with users:write still may not add users', async () => {
    const added = await api(base, 'POST', '/v1/users', {
      token: a.admin_token,
      body: { email: 'scoped-member@example.com', role: 'member' },
    });
    assert.equal(added.status, 201, added.text);
    const url: string = added.json.set_password_url;
    const link = url.slice(url.indexOf('#') + 1);
    const password = 'correct horse battery staple';
    await api(base, 'POST', '/v1/auth/set-password', { body: { token: link, password } });
    const session = await signIn(base, 'scoped-member@example.com', password);
    const made = await asBrowser(base, session, 'POST', '/v1/me/tokens', {
      body: { name: 'm', scopes: ['users:write'] },
    });
    assert.equal(made.status, 201, made.text);
    assertError(
      await api(base, 'POST', '/v1/users', {
        token: made.json.token,
        body: { email: 'n@example.com', role: 'member' },
      }),
      403,
      'forbidden',
    );
  });

  it('a scoped token cannot create tokens or change the password, but may list its account', async () => {
    const t = await token({ scopes: ['read', 'users:write', 'settings:write'] });
    const create = await api(base, 'POST', '/v1/me/tokens', { token: t.token, body: { name: 'child' } });
    assertError(create, 403, 'insufficient_scope');
    assert.match(create.json.error.message, /full-access/);
    assertError(
      await api(base, 'POST', '/v1/me/password', {
        token: t.token,
        body: { current_password: 'x', new_password: 'a long enough new password' },
      }),
      403,
      'insufficient_scope',
    );
    assertError(await api(base, 'DELETE', `/v1/me/tokens/${t.id}`, { token: t.token }), 403, 'insufficient_scope');
    assert.equal((await api(base, 'GET', '/v1/me/tokens', { token: t.token })).status, 200);
  });

  it('a scoped token is refused on a route of no area', async () => {
    const t = await token({ scopes: ['read'] });
    const res = await api(base, 'GET', '/v1/agent/commands', { token: t.token });
    assertError(res, 403, 'insufficient_scope');
    assert.match(res.json.error.message, /full-access/);
    assertError(await api(base, 'GET', '/v1/no-such-thing', { token: t.token }), 404, 'not_found');
  });

  it('refuses unknown, empty and duplicate scopes and out-of-range expiries', async () => {
    for (const body of [
      { name: 'x', scopes: [] },
      { name: 'x', scopes: ['audit:write'] },
      { name: 'x', scopes: ['everything'] },
      { name: 'x', scopes: ['read', 'read'] },
      { name: 'x', expires_in_days: 0 },
      { name: 'x', expires_in_days: 366 },
      { name: 'x', expires_in_days: 1.5 },
    ])
      assertError(await api(base, 'POST', '/v1/me/tokens', { token: a.admin_token, body }), 400, 'invalid_request');
  });

  it('an expiring token works until its expiry, then answers 401 token_expired', async () => {
    const t = await token({ scopes: ['read'], expires_in_days: 30 });
    assert.equal(t.expires_at, new Date(server.clock.ms + 30 * DAY_MS).toISOString());
    assert.equal((await api(base, 'GET', '/v1/signals', { token: t.token })).status, 200);
    server.clock.advance(30 * DAY_MS - 1000);
    assert.equal((await api(base, 'GET', '/v1/signals', { token: t.token })).status, 200);
    server.clock.advance(1000);
    const res = await api(base, 'GET', '/v1/signals', { token: t.token });
    assertError(res, 401, 'token_expired');
    // A request that outlives its authentication (a listen stream) is ended by the expiry too.
    const row = await server.deps.db
      .selectFrom('api_tokens')
      .innerJoin('users', 'users.id', 'api_tokens.user_id')
      .select(['users.id', 'users.email'])
      .where('api_tokens.id', '=', t.id)
      .executeTakeFirstOrThrow();
    const principal: UserPrincipal = {
      kind: 'user',
      userId: row.id,
      tenantId: a.tenant_id,
      role: 'admin',
      email: row.email,
      tokenId: t.id,
      scopes: ['read'],
    };
    assert.equal(await stillAuthorised(server.deps.db, principal, ['admin'], server.clock.now()), false);
    assert.equal(
      await stillAuthorised(server.deps.db, principal, ['admin'], new Date(server.clock.ms - 1000)),
      true,
      'it held until the expiry',
    );
    // The list still shows it, expired, so its owner sees why and revokes it.
    const listed = (await api(base, 'GET', '/v1/me/tokens', { token: a.admin_token })).json.tokens;
    assert.equal(listed.find((x: Loose) => x.id === t.id).expires_at, t.expires_at);
  });

  it('records the last use, written at most once a minute', async () => {
    const t = await token({ scopes: ['signals:read'] });
    const listed = async () =>
      (await api(base, 'GET', '/v1/me/tokens', { token: a.admin_token })).json.tokens.find((x: Loose) => x.id === t.id);
    assert.equal((await listed()).last_used_at, null);
    const first = new Date(server.clock.ms).toISOString();
    await api(base, 'GET', '/v1/signals', { token: t.token });
    assert.equal((await listed()).last_used_at, first);
    server.clock.advance(30_000);
    await api(base, 'GET', '/v1/signals', { token: t.token });
    assert.equal((await listed()).last_used_at, first, 'a use within the minute writes nothing');
    server.clock.advance(30_000);
    await api(base, 'GET', '/v1/signals', { token: t.token });
    assert.equal((await listed()).last_used_at, new Date(server.clock.ms).toISOString());
  });
});
