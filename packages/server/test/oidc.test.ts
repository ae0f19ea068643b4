// OpenID Connect single sign-on (DESIGN §6) against a real provider on loopback: panva's
// oidc-provider served on http://127.0.0.1 with a groups claim, its own login form
// (devInteractions) driven with fetch. The connection's settings (validation, the sealed
// secret, domains routed to one tenant), the start redirect's parameters, whole code flows
// (a member created just in time, an admin by group), and every refusal sent back to the
// console's sign-in page with its sso_error.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sessionSetCookie } from './console-session.ts';
import {
  type ApiResult,
  addUser,
  api,
  isErrorShape,
  type Loose,
  setupTenant,
  startTestServer,
  type TestServer,
} from './harness.ts';
import { type OidcIdp, startOidcIdp } from './oidc-idp.ts';

const CLIENT_ID = 'guard-console';
const CLIENT_SECRET = 'oidc-client-secret-0123456789abcdef-xyz';
const ADMIN_GROUP = 'guard-admins';

/** The provider's people, by the login typed on its form. */
const PEOPLE: Record<string, Record<string, unknown>> = {
  ada: { email: 'ada@acme.test', email_verified: true, name: 'Ada', groups: [ADMIN_GROUP, 'eng'] },
  bob: { email: 'bob@acme.test', email_verified: true, name: 'Bob', groups: ['eng'] },
  carol: { email: 'Carol@Acme.test', email_verified: true, groups: ['eng'] },
  eve: { email: 'eve@elsewhere.test', email_verified: true, groups: [ADMIN_GROUP] },
  uma: { email: 'uma@acme.test', email_verified: false, groups: [] },
  dan: { email: 'dan@acme.test', email_verified: true, groups: ['eng'] },
  erin: { email: 'erin@acme.test', email_verified: true },
};

function assertError(res: ApiResult, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

/** A browser's cookies for one origin, enough for the provider's interaction cookies. */
class CookieJar {
  readonly #cookies = new Map<string, string>();
  take(res: Response): void {
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      if (/max-age=0|expires=thu, 01 jan 1970/i.test(c)) this.#cookies.delete(name);
      else this.#cookies.set(name, pair.slice(eq + 1));
    }
  }
  header(): string {
    return [...this.#cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }
}

describe('single sign-on with OpenID Connect', () => {
  let server: TestServer;
  let base: string;
  let idp: OidcIdp;
  let issuer: string;
  let a: Awaited<ReturnType<typeof setupTenant>>;
  let b: Awaited<ReturnType<typeof setupTenant>>;

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
    b = await setupTenant(server);
    idp = await startOidcIdp({
      host: '127.0.0.1',
      clientId: CLIENT_ID,
      clientSecret: CLIENT_SECRET,
      redirectUri: `${base}/v1/auth/oidc/callback`,
      people: PEOPLE,
    });
    issuer = idp.issuer;
  });
  after(async () => {
    await idp?.close();
    await server?.cleanup();
  });

  const put = (token: string, body: Loose) => api(base, 'PUT', '/v1/tenant/sso', { token, body });
  const connection = (overrides: Loose = {}) => ({
    issuer,
    client_id: CLIENT_ID,
    client_secret: CLIENT_SECRET,
    email_domains: ['acme.test'],
    admin_group: ADMIN_GROUP,
    ...overrides,
  });

  /** Where a 302/303 of Guard sends the browser, and the sso_error of a refusal. */
  const location = (res: ApiResult) => res.headers.get('location') ?? '';
  const ssoError = (res: ApiResult) => {
    assert.equal(res.status, 302, res.text);
    const to = new URL(location(res));
    assert.equal(`${to.origin}${to.pathname}`, `${base}/console/`);
    return to.searchParams.get('sso_error');
  };

  /** The provider's authorization URL for a sign-in started with `email`. */
  /** The guard_sso cookie of the last start: the browser that started a sign-in brings it back. */
  let binding = '';

  async function start(email: string): Promise<URL> {
    const res = await api(base, 'GET', `/v1/auth/oidc/start?email=${encodeURIComponent(email)}`);
    assert.equal(res.status, 302, res.text);
    const set = res.headers.getSetCookie().find((c) => c.startsWith('guard_sso='));
    assert.ok(set, 'the start binds the sign-in to the browser');
    assert.match(set, /; Path=\/v1\/auth\/; HttpOnly; SameSite=Lax; Max-Age=600$/);
    binding = set.split(';')[0];
    return new URL(location(res));
  }

  /**
   * A person signs in at the provider's own form as `login`: returns the callback URL the
   * provider redirects the browser to (code, state, iss), not yet opened.
   */
  async function signInAtProvider(authorization: URL, login: string): Promise<string> {
    const jar = new CookieJar();
    let url = authorization.href;
    for (let hop = 0; hop < 10; hop++) {
      if (url.startsWith(`${base}/`)) return url;
      let res = await fetch(url, { redirect: 'manual', headers: { cookie: jar.header() } });
      jar.take(res);
      if (res.status === 200) {
        // The provider's login form: post it as the person would.
        const html = await res.text();
        const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1];
        assert.ok(action, `no login form at ${url}: ${html.slice(0, 300)}`);
        res = await fetch(new URL(action, url), {
          method: 'POST',
          redirect: 'manual',
          headers: { cookie: jar.header(), 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ prompt: 'login', login, password: 'any' }).toString(),
        });
        jar.take(res);
      } else await res.arrayBuffer();
      assert.ok([302, 303].includes(res.status), `the provider answered ${res.status} at ${url}`);
      url = new URL(res.headers.get('location') ?? '', url).href;
    }
    throw new Error('the provider never redirected back to Guard');
  }

  /** Opens the callback as the browser would: Guard's answer. */
  const callback = (url: string, cookie = binding) => api(base, 'GET', url.slice(base.length), { headers: { cookie } });

  /** A whole sign-in: the session cookie's answer, and who it signed in. */
  async function signInAs(login: string, email = String(PEOPLE[login].email)) {
    const res = await callback(await signInAtProvider(await start(email), login));
    assert.equal(res.status, 303, `${res.status} ${location(res)} ${res.text}`);
    assert.equal(location(res), `${base}/console/`);
    const cookie = sessionSetCookie(res)?.split(';')[0];
    assert.ok(cookie, 'no session cookie');
    const session = await api(base, 'GET', '/v1/auth/session', { headers: { cookie } });
    assert.equal(session.status, 200, session.text);
    return { res, cookie, session: session.json };
  }

  it('refuses an issuer that is not https (or http on loopback), or whose discovery cannot be read', async () => {
    for (const bad of [
      'ftp://127.0.0.1/x',
      'http://idp.example.com',
      'not a url',
      `${issuer}?x=1`,
      'https://u:p@idp.test',
    ])
      assertError(await put(a.admin_token, connection({ issuer: bad })), 400, 'invalid_issuer');
    const unreachable = await put(a.admin_token, connection({ issuer: 'http://127.0.0.1:1' }));
    assertError(unreachable, 400, 'invalid_issuer');
    assert.match(unreachable.json.error.message, /discovery document of http:\/\/127\.0\.0\.1:1/);
    // A document whose issuer is another (here: the provider's, read under a different name).
    assertError(
      await put(a.admin_token, connection({ issuer: issuer.replace('127.0.0.1', 'localhost') })),
      400,
      'invalid_issuer',
    );
    assertError(await put(a.admin_token, connection({ client_secret: undefined })), 400, 'client_secret_required');
    for (const email_domains of [[], ['Acme.test'], ['acme'], ['a@acme.test'], ['acme.test', 'acme.test']])
      assertError(await put(a.admin_token, connection({ email_domains })), 400, 'invalid_request');
    assertError(await put(a.admin_token, { ...connection(), extra: 1 }), 400, 'invalid_request');
    const got = await api(base, 'GET', '/v1/tenant/sso', { token: a.admin_token });
    assert.equal(got.status, 200, got.text);
    assert.equal(got.json.configured, false);
    assert.equal(got.json.redirect_uri, `${base}/v1/auth/oidc/callback`);
  });

  it('an admin connects the provider; the secret is sealed and never returned; members may not', async () => {
    const res = await put(a.admin_token, connection({ email_domains: ['acme.test', 'acme-labs.test'] }));
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.json, {
      configured: true,
      redirect_uri: `${base}/v1/auth/oidc/callback`,
      issuer,
      client_id: CLIENT_ID,
      has_client_secret: true,
      email_domains: ['acme.test', 'acme-labs.test'],
      admin_group: ADMIN_GROUP,
      scopes: 'openid email profile groups',
      updated_at: res.json.updated_at,
    });
    assert.ok(!res.text.includes(CLIENT_SECRET));
    const got = await api(base, 'GET', '/v1/tenant/sso', { token: a.admin_token });
    assert.deepEqual(got.json, res.json);
    assert.ok(!got.text.includes(CLIENT_SECRET));
    const row = await server.deps.db
      .selectFrom('sso_connections')
      .selectAll()
      .where('tenant_id', '=', a.tenant_id)
      .executeTakeFirstOrThrow();
    assert.ok(row.secret_sealed?.startsWith('v1.'));
    assert.ok(!JSON.stringify(row).includes(CLIENT_SECRET), 'the secret is stored sealed');
    // A later save without the secret keeps it (the sign-ins below use it).
    const kept = await put(a.admin_token, connection({ client_secret: undefined }));
    assert.equal(kept.status, 200, kept.text);
    assert.equal(kept.json.has_client_secret, true);
    assert.deepEqual(kept.json.email_domains, ['acme.test']);
    // The stored secret is sent to no other issuer: a new issuer needs it again.
    const moved = await put(a.admin_token, connection({ client_secret: undefined, issuer: `${issuer}/` }));
    assertError(moved, 400, 'client_secret_required');
    assert.match(moved.json.error.message, /issuer changes/);
    const audited = await api(base, 'GET', '/v1/audit?action=sso.update', { token: a.admin_token });
    assert.equal(audited.json.entries.length, 2, audited.text);
    assert.equal(audited.json.entries[0].target, 'oidc');
  });

  it('members, other tenants and the anonymous cannot read or change the connection', async () => {
    const token = await addUser(server, a.tenant_id, 'member');
    assertError(await api(base, 'GET', '/v1/tenant/sso', { token }), 403, 'forbidden');
    assertError(await put(token, connection()), 403, 'forbidden');
    assertError(await api(base, 'DELETE', '/v1/tenant/sso', { token }), 403, 'forbidden');
    assertError(await api(base, 'GET', '/v1/tenant/sso'), 401, 'unauthorized');
    const other = await api(base, 'GET', '/v1/tenant/sso', { token: b.admin_token });
    assert.equal(other.json.configured, false);
  });

  it('an email domain routes to one tenant only: 409 domain_taken for another', async () => {
    const res = await put(b.admin_token, connection({ email_domains: ['beta.test', 'acme.test'] }));
    assertError(res, 409, 'domain_taken');
    assert.match(res.json.error.message, /acme\.test/);
    const got = await api(base, 'GET', '/v1/tenant/sso', { token: b.admin_token });
    assert.equal(got.json.configured, false, 'nothing was saved');
    // A domain the tenant dropped is free for another.
    const own = await put(b.admin_token, connection({ email_domains: ['beta.test'] }));
    assert.equal(own.status, 200, own.text);
  });

  it('start redirects to the authorization endpoint with the code flow, PKCE S256, state and nonce', async () => {
    const to = await start('Ada@acme.test');
    assert.equal(`${to.origin}${to.pathname}`, `${issuer}/auth`);
    const q = to.searchParams;
    assert.equal(q.get('response_type'), 'code');
    assert.equal(q.get('client_id'), CLIENT_ID);
    assert.equal(q.get('redirect_uri'), `${base}/v1/auth/oidc/callback`);
    assert.equal(q.get('scope'), 'openid email profile groups');
    assert.equal(q.get('code_challenge_method'), 'S256');
    assert.match(q.get('code_challenge') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('state') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.match(q.get('nonce') ?? '', /^[A-Za-z0-9_-]{43}$/);
    assert.equal(q.get('login_hint'), 'Ada@acme.test');
    const again = await start('ada@acme.test');
    assert.notEqual(again.searchParams.get('state'), q.get('state'));
    assert.notEqual(again.searchParams.get('nonce'), q.get('nonce'));
    // The state is kept by its hash only.
    const flows = await server.deps.db.selectFrom('auth_flows').select('id_hash').where('kind', '=', 'oidc').execute();
    assert.ok(flows.every((f) => f.id_hash !== q.get('state')));
  });

  it('an unknown or malformed email goes back to the console sign-in with sso_error', async () => {
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/start?email=x@unknown.test')), 'unknown_domain');
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/start?email=nobody')), 'invalid_email');
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/sso/start?email=x@unknown.test')), 'unknown_domain');
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/sso/start?email=')), 'invalid_email');
  });

  it('the SSO dispatcher sends an email of an OIDC domain to the OIDC start', async () => {
    const res = await api(base, 'GET', '/v1/auth/sso/start?email=ada%40acme.test');
    assert.equal(res.status, 302);
    assert.equal(location(res), `${base}/v1/auth/oidc/start?email=ada%40acme.test`);
  });

  it('a first sign-in creates a member just in time; the session is an oidc one', async () => {
    const { res, session } = await signInAs('bob');
    assert.equal(res.headers.get('cache-control'), 'no-store');
    assert.match(sessionSetCookie(res) ?? '', /HttpOnly; SameSite=Strict/);
    assert.equal(session.user.email, 'bob@acme.test');
    assert.equal(session.user.role, 'member');
    assert.equal(session.user.tenant_id, a.tenant_id);
    assert.equal(session.method, 'oidc');
    const created = await api(base, 'GET', '/v1/audit?action=user.create', { token: a.admin_token });
    const bob = created.json.entries.find((e: Loose) => e.target === session.user.id);
    assert.equal(bob?.actor_id, 'sso:oidc');
    // The second sign-in finds the same user.
    const second = await signInAs('bob');
    assert.equal(second.session.user.id, session.user.id);
  });

  it('a person in the admin group signs in as an admin; out of it, the role follows the provider', async () => {
    const { session } = await signInAs('ada');
    assert.equal(session.user.role, 'admin');
    assert.equal(session.user.email, 'ada@acme.test');
    PEOPLE.ada.groups = ['eng'];
    try {
      const { session: again } = await signInAs('ada');
      assert.equal(again.user.id, session.user.id);
      assert.equal(again.user.role, 'member', 'the tenant keeps its setup admin, so Ada is demoted');
    } finally {
      PEOPLE.ada.groups = [ADMIN_GROUP, 'eng'];
    }
  });

  it('a user the tenant already has signs in as themselves; without a groups claim the role stays', async () => {
    const added = await api(base, 'POST', '/v1/users', {
      token: a.admin_token,
      body: { email: 'Erin@acme.test', role: 'admin' },
    });
    assert.equal(added.status, 201, added.text);
    const { session } = await signInAs('erin');
    assert.equal(session.user.id, added.json.id);
    assert.equal(session.user.role, 'admin', 'no groups sent: the role is left as it is');
  });

  it("an email's case does not make a second user", async () => {
    const { session } = await signInAs('carol');
    assert.equal(session.user.email, 'carol@acme.test');
    const users = await server.deps.db
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', a.tenant_id)
      .where('email', '=', 'carol@acme.test')
      .execute();
    assert.equal(users.length, 1);
  });

  it('an email of another domain, or unverified, is refused and creates no one', async () => {
    assert.equal(ssoError(await callback(await signInAtProvider(await start('eve@acme.test'), 'eve'))), 'wrong_domain');
    assert.equal(
      ssoError(await callback(await signInAtProvider(await start('uma@acme.test'), 'uma'))),
      'email_unverified',
    );
    const users = await server.deps.db
      .selectFrom('users')
      .select('email')
      .where('email', 'in', ['eve@elsewhere.test', 'uma@acme.test'])
      .execute();
    assert.deepEqual(users, []);
  });

  it('a replayed callback is refused: the state is used once', async () => {
    const url = await signInAtProvider(await start('bob@acme.test'), 'bob');
    assert.equal((await callback(url)).status, 303);
    const replay = await callback(url);
    assert.equal(ssoError(replay), 'invalid_state');
    assert.equal(sessionSetCookie(replay), undefined);
  });

  it('a callback opened in another browser than the one that started it is refused (login CSRF)', async () => {
    // An attacker signs in at the provider with their own account, and sends the callback URL to
    // a victim: the victim's browser has no guard_sso cookie of that sign-in, or another one.
    const url = await signInAtProvider(await start('bob@acme.test'), 'bob');
    const victim = await callback(url, '');
    assert.equal(ssoError(victim), 'invalid_state');
    assert.equal(sessionSetCookie(victim), undefined);
    const other = await signInAtProvider(await start('dan@acme.test'), 'dan');
    assert.ok(other);
    const url2 = await signInAtProvider(await start('bob@acme.test'), 'bob');
    const wrong = await callback(url2, 'guard_sso=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    assert.equal(ssoError(wrong), 'invalid_state');
    assert.equal(sessionSetCookie(wrong), undefined);
  });

  it("a code with another sign-in's state is refused (its PKCE verifier and nonce do not match)", async () => {
    const first = new URL(await signInAtProvider(await start('bob@acme.test'), 'bob'));
    const second = new URL(await signInAtProvider(await start('dan@acme.test'), 'dan'));
    const crossed = new URL(first);
    crossed.searchParams.set('state', second.searchParams.get('state') ?? '');
    const res = await callback(crossed.href);
    assert.equal(ssoError(res), 'invalid_response');
    assert.equal(sessionSetCookie(res), undefined);
    // The state it named was used up by the attempt.
    assert.equal(ssoError(await callback(second.href)), 'invalid_state');
  });

  it('an unknown, missing or expired state is refused', async () => {
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/callback?code=x&state=made-up')), 'invalid_state');
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/callback?code=x')), 'invalid_state');
    const url = await signInAtProvider(await start('bob@acme.test'), 'bob');
    server.clock.advance(11 * 60_000);
    assert.equal(ssoError(await callback(url)), 'invalid_state');
  });

  it("the provider's error answer is shown as such", async () => {
    const state = (await start('bob@acme.test')).searchParams.get('state') ?? '';
    const res = await callback(
      `${base}/v1/auth/oidc/callback?error=access_denied&error_description=no&state=${encodeURIComponent(state)}`,
    );
    assert.equal(ssoError(res), 'access_denied');
  });

  it('a deactivated user is refused', async () => {
    const { session } = await signInAs('dan');
    await server.deps.db
      .updateTable('users')
      .set({ deactivated_at: server.clock.now().toISOString() })
      .where('id', '=', session.user.id)
      .execute();
    assert.equal(
      ssoError(await callback(await signInAtProvider(await start('dan@acme.test'), 'dan'))),
      'user_deactivated',
    );
  });

  it('a sign-in started before the connection changed is refused', async () => {
    const url = await signInAtProvider(await start('bob@acme.test'), 'bob');
    assert.equal((await put(a.admin_token, connection({ client_id: 'another-client' }))).status, 200);
    assert.equal(ssoError(await callback(url)), 'connection_changed');
    assert.equal((await put(a.admin_token, connection({ client_secret: undefined }))).status, 200);
  });

  it('a provider that cannot be reached at sign-in sends the person back with provider_unavailable', async () => {
    // A provider of its own that answers discovery, then goes away.
    const gone = http.createServer((_req, res) => {
      const self = `http://127.0.0.1:${(gone.address() as AddressInfo).port}`;
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer: self,
          authorization_endpoint: `${self}/auth`,
          token_endpoint: `${self}/token`,
          jwks_uri: `${self}/jwks`,
        }),
      );
    });
    gone.listen(0, '127.0.0.1');
    await once(gone, 'listening');
    const c = await setupTenant(server);
    const saved = await put(
      c.admin_token,
      connection({ issuer: `http://127.0.0.1:${(gone.address() as AddressInfo).port}`, email_domains: ['gone.test'] }),
    );
    assert.equal(saved.status, 200, saved.text);
    assert.equal(saved.json.scopes, 'openid email profile', 'no groups scope: the provider does not list it');
    gone.closeAllConnections();
    await new Promise((r) => gone.close(r));
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/start?email=x@gone.test')), 'provider_unavailable');
  });

  it('an admin removes the connection: its domains no longer sign in, and it is audited', async () => {
    const res = await api(base, 'DELETE', '/v1/tenant/sso', { token: a.admin_token });
    assert.equal(res.status, 204, res.text);
    assertError(await api(base, 'DELETE', '/v1/tenant/sso', { token: a.admin_token }), 404, 'not_found');
    assert.equal(ssoError(await api(base, 'GET', '/v1/auth/oidc/start?email=ada@acme.test')), 'unknown_domain');
    const got = await api(base, 'GET', '/v1/tenant/sso', { token: a.admin_token });
    assert.equal(got.json.configured, false);
    const audited = await api(base, 'GET', '/v1/audit?action=sso.delete', { token: a.admin_token });
    assert.equal(audited.json.entries.length, 1, audited.text);
    // The domain is free again for another tenant.
    assert.equal((await put(b.admin_token, connection({ email_domains: ['acme.test'] }))).status, 200);
  });
});
