// Console sign-in against the real server on loopback (docs/console.md): the session cookie's
// attributes, CSRF on cookie-authenticated writes (and not on bearer ones), the login rate
// limits, idle and absolute expiry on the injected clock, revocation, the user's own sessions,
// password and API tokens.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Agent, fetch as undiciFetch } from 'undici';
import { loggedUrl } from '../src/kernel/logger.ts';
import { asBrowser, type Browser, sessionSetCookie, signIn } from './console-session.ts';
import { api, isErrorShape, type Loose, setupTenant, startTestServer, type TestServer } from './harness.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const MIN = 60_000;

describe('console sessions', () => {
  let server: TestServer;
  let base: string;
  let setup: Awaited<ReturnType<typeof setupTenant>>;

  before(async () => {
    server = await startTestServer();
    base = server.url;
    setup = await setupTenant(server);
  });
  after(() => server.cleanup());

  it('sign-in sets guard_session HttpOnly, SameSite=Strict, Path=/ (no Secure over http) and returns the CSRF token', async () => {
    const res = await api(base, 'POST', '/v1/auth/login', {
      body: { email: setup.admin_email, password: setup.admin_password },
      headers: { origin: base },
    });
    assert.equal(res.status, 200, res.text);
    const cookie = sessionSetCookie(res) ?? '';
    assert.match(cookie, /^guard_session=gss_[A-Za-z0-9_-]{43}; /);
    const attrs = cookie.split('; ').slice(1);
    assert.deepEqual(attrs.sort(), ['HttpOnly', 'Path=/', 'SameSite=Strict']);
    assert.equal(res.json.user.email, setup.admin_email);
    assert.equal(res.json.user.role, 'admin');
    assert.equal(res.json.user.tenant_id, setup.tenant_id);
    assert.match(res.json.csrf_token, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(res.json.expires_at, new Date(server.clock.ms + 12 * 60 * MIN).toISOString());
    assert.equal(res.json.idle_expires_at, new Date(server.clock.ms + 30 * MIN).toISOString());
    assert.equal(res.headers.get('cache-control'), 'no-store');
  });

  it('the session answers who is signed in, with the same CSRF token; without a cookie it is 401', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const res = await asBrowser(base, b, 'GET', '/v1/auth/session');
    assert.equal(res.status, 200, res.text);
    assert.equal(res.json.csrf_token, b.csrf);
    assert.equal(res.json.user.id, b.login.user.id);
    assertError(await api(base, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    assertError(await api(base, 'GET', '/v1/auth/session', { token: setup.admin_token }), 401, 'unauthorized');
  });

  it('the session cookie reads the API like a token does', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const res = await asBrowser(base, b, 'GET', '/v1/webhooks/endpoints');
    assert.equal(res.status, 200, res.text);
  });

  it('an unknown email and a wrong password get the same answer', async () => {
    const wrong = await api(base, 'POST', '/v1/auth/login', {
      body: { email: setup.admin_email, password: 'not the password' },
    });
    const unknown = await api(base, 'POST', '/v1/auth/login', {
      body: { email: 'nobody@example.com', password: 'not the password' },
    });
    assertError(wrong, 401, 'invalid_credentials');
    assertError(unknown, 401, 'invalid_credentials');
    assert.deepEqual(wrong.json, unknown.json);
    assert.equal(sessionSetCookie(wrong), undefined);
  });

  it('sign-in from another origin is refused (login CSRF); emails match without case', async () => {
    const res = await api(base, 'POST', '/v1/auth/login', {
      body: { email: setup.admin_email, password: setup.admin_password },
      headers: { origin: 'https://evil.example' },
    });
    assertError(res, 403, 'csrf_failed');
    const upper = await api(base, 'POST', '/v1/auth/login', {
      body: { email: ` ${setup.admin_email.toUpperCase()} `, password: setup.admin_password },
    });
    assert.equal(upper.status, 200, upper.text);
  });

  describe('one email in several tenants (emails are unique per tenant)', () => {
    let second: Awaited<ReturnType<typeof setupTenant>>;
    let third: Awaited<ReturnType<typeof setupTenant>>;
    const email = 'dana@shared.example';

    /** Adds `email` to the tenant of `admin` and sets its password through the one-time link. */
    async function member(admin: string, password: string): Promise<void> {
      const added = await api(base, 'POST', '/v1/users', { token: admin, body: { email, role: 'member' } });
      assert.equal(added.status, 201, added.text);
      const token = new URL(added.json.set_password_url).hash.slice(1); // …/console/set-password#gsp_…
      const set = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password } });
      assert.equal(set.status, 204, set.text);
    }

    before(async () => {
      second = await setupTenant(server);
      third = await setupTenant(server);
      await member(setup.admin_token, 'first tenant password 1');
      await member(second.admin_token, 'second tenant password 2');
      await member(third.admin_token, 'second tenant password 2');
    });

    it('the password says which tenant: each signs in to its own', async () => {
      const one = await api(base, 'POST', '/v1/auth/login', { body: { email, password: 'first tenant password 1' } });
      assert.equal(one.status, 200, one.text);
      assert.equal(one.json.user.tenant_id, setup.tenant_id);
      assertError(
        await api(base, 'POST', '/v1/auth/login', { body: { email, password: 'none of them' } }),
        401,
        'invalid_credentials',
      );
    });

    it('a password right in several tenants gets 409 tenant_required listing them; tenant_id picks one', async () => {
      const both = await api(base, 'POST', '/v1/auth/login', { body: { email, password: 'second tenant password 2' } });
      assertError(both, 409, 'tenant_required');
      assert.equal(sessionSetCookie(both), undefined, 'no session until a tenant is chosen');
      assert.deepEqual(
        both.json.error.tenants.map((t: Loose) => t.id).sort(),
        [second.tenant_id, third.tenant_id].sort(),
        'only the tenants the password is right for',
      );
      for (const t of both.json.error.tenants) assert.equal(typeof t.name, 'string');
      const picked = await api(base, 'POST', '/v1/auth/login', {
        body: { email, password: 'second tenant password 2', tenant_id: third.tenant_id },
      });
      assert.equal(picked.status, 200, picked.text);
      assert.equal(picked.json.user.tenant_id, third.tenant_id);
      // A tenant the password is wrong for is just a wrong password.
      assertError(
        await api(base, 'POST', '/v1/auth/login', {
          body: { email, password: 'second tenant password 2', tenant_id: setup.tenant_id },
        }),
        401,
        'invalid_credentials',
      );
    });
  });

  describe('CSRF on cookie-authenticated writes', () => {
    let b: Browser;
    const endpoint = { name: 'csrf', url: 'https://hooks.example.com/guard' };
    before(async () => {
      b = await signIn(base, setup.admin_email, setup.admin_password);
    });

    it('a write with the Origin and the X-CSRF-Token works', async () => {
      const res = await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', { body: endpoint });
      assert.equal(res.status, 201, res.text);
    });

    it('a write without the token is refused with 403 csrf_failed, and nothing is created', async () => {
      const before = (await asBrowser(base, b, 'GET', '/v1/webhooks/endpoints')).json.endpoints.length;
      assertError(
        await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', { body: endpoint, csrf: null }),
        403,
        'csrf_failed',
      );
      assertError(
        await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', { body: endpoint, csrf: 'x'.repeat(43) }),
        403,
        'csrf_failed',
      );
      const after = (await asBrowser(base, b, 'GET', '/v1/webhooks/endpoints')).json.endpoints.length;
      assert.equal(after, before);
    });

    it('a write from another origin, or with no Origin or Referer, is refused even with the token', async () => {
      const evil = await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', {
        body: endpoint,
        origin: 'https://evil.example',
      });
      assertError(evil, 403, 'csrf_failed');
      assertError(
        await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', { body: endpoint, origin: null }),
        403,
        'csrf_failed',
      );
      const referer = await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', {
        body: endpoint,
        origin: null,
        headers: { referer: `${base}/console/settings/integrations/webhooks` },
      });
      assert.equal(referer.status, 201, `a same-origin Referer stands in for Origin: ${referer.text}`);
    });

    it("another session's token does not pass", async () => {
      const other = await signIn(base, setup.admin_email, setup.admin_password);
      assertError(
        await asBrowser(base, b, 'POST', '/v1/webhooks/endpoints', { body: endpoint, csrf: other.csrf }),
        403,
        'csrf_failed',
      );
    });

    it('a cross-site form post is refused with 403 before its body is read', async () => {
      const res = await api(base, 'POST', '/v1/webhooks/endpoints', {
        rawBody: 'name=x&url=https%3A%2F%2Fevil.example%2F',
        headers: {
          cookie: b.cookie,
          origin: 'https://evil.example',
          'content-type': 'application/x-www-form-urlencoded',
        },
      });
      assertError(res, 403, 'csrf_failed');
    });

    it('a bearer write needs neither Origin nor token', async () => {
      const res = await api(base, 'POST', '/v1/webhooks/endpoints', { token: setup.admin_token, body: endpoint });
      assert.equal(res.status, 201, res.text);
    });

    it('a request with Authorization is judged by it alone: the cookie is ignored', async () => {
      const res = await asBrowser(base, b, 'GET', '/v1/webhooks/endpoints', {
        headers: { authorization: 'Bearer gut_not-a-real-token-at-all' },
      });
      assertError(res, 401, 'unauthorized');
    });
  });

  it('sign-out revokes the session and clears the cookie; the cookie then gets 401', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    assertError(await asBrowser(base, b, 'POST', '/v1/auth/logout', { csrf: null }), 403, 'csrf_failed');
    const out = await asBrowser(base, b, 'POST', '/v1/auth/logout');
    assert.equal(out.status, 204, out.text);
    assert.match(sessionSetCookie(out) ?? '', /^guard_session=; Max-Age=0; /);
    assertError(await asBrowser(base, b, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    assertError(await asBrowser(base, b, 'GET', '/v1/webhooks/endpoints'), 401, 'unauthorized');
  });

  it('an idle session ends after 30 minutes; use slides the idle expiry', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    server.clock.advance(20 * MIN);
    assert.equal((await asBrowser(base, b, 'GET', '/v1/auth/session')).status, 200);
    server.clock.advance(20 * MIN);
    const slid = await asBrowser(base, b, 'GET', '/v1/auth/session');
    assert.equal(slid.status, 200, '40 minutes after sign-in, 20 after its last use');
    assert.equal(slid.json.idle_expires_at, new Date(server.clock.ms + 30 * MIN).toISOString());
    server.clock.advance(30 * MIN);
    const idle = await asBrowser(base, b, 'GET', '/v1/auth/session');
    assertError(idle, 401, 'unauthorized');
    assert.match(sessionSetCookie(idle) ?? '', /Max-Age=0/, 'an expired cookie is cleared');
  });

  it('a session ends 12 hours after sign-in however active', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const start = server.clock.ms;
    while (server.clock.ms + 20 * MIN < start + 12 * 60 * MIN) {
      server.clock.advance(20 * MIN);
      assert.equal((await asBrowser(base, b, 'GET', '/v1/auth/session')).status, 200);
    }
    server.clock.ms = start + 12 * 60 * MIN;
    assertError(await asBrowser(base, b, 'GET', '/v1/auth/session'), 401, 'unauthorized');
  });

  it('the user lists their sessions (the current one marked) and revokes another', async () => {
    const one = await signIn(base, setup.admin_email, setup.admin_password);
    const two = await signIn(base, setup.admin_email, setup.admin_password);
    const list = await asBrowser(base, one, 'GET', '/v1/me/sessions');
    assert.equal(list.status, 200, list.text);
    const current = list.json.sessions.filter((s: Loose) => s.current);
    assert.equal(current.length, 1);
    const twoId = list.json.sessions.find((s: Loose) => !s.current && s.created_at >= current[0].created_at)?.id;
    const other = list.json.sessions.find((s: Loose) => s.id !== current[0].id);
    assert.ok(other && twoId);
    for (const s of list.json.sessions) assert.equal(Object.hasOwn(s, 'token_hash'), false);
    // Revoke every session but this one: `two` then gets 401.
    for (const s of list.json.sessions.filter((x: Loose) => !x.current)) {
      const del = await asBrowser(base, one, 'DELETE', `/v1/me/sessions/${s.id}`);
      assert.equal(del.status, 204, del.text);
    }
    assertError(await asBrowser(base, two, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    assert.equal((await asBrowser(base, one, 'GET', '/v1/auth/session')).status, 200);
    assertError(await asBrowser(base, one, 'DELETE', `/v1/me/sessions/${other.id}`), 404, 'not_found');
  });

  it('changing the password ends the other sessions, keeps this one, and the new password signs in', async () => {
    const s = await setupTenant(server);
    const one = await signIn(base, s.admin_email, s.admin_password);
    const two = await signIn(base, s.admin_email, s.admin_password);
    const wrong = await asBrowser(base, one, 'POST', '/v1/me/password', {
      body: { current_password: 'wrong password!', new_password: 'a new long password' },
    });
    assertError(wrong, 400, 'wrong_password');
    const short = await asBrowser(base, one, 'POST', '/v1/me/password', {
      body: { current_password: s.admin_password, new_password: 'short' },
    });
    assertError(short, 400, 'invalid_request');
    const ok = await asBrowser(base, one, 'POST', '/v1/me/password', {
      body: { current_password: s.admin_password, new_password: 'a new long password' },
    });
    assert.equal(ok.status, 204, ok.text);
    assert.equal((await asBrowser(base, one, 'GET', '/v1/auth/session')).status, 200);
    assertError(await asBrowser(base, two, 'GET', '/v1/auth/session'), 401, 'unauthorized');
    await assert.rejects(signIn(base, s.admin_email, s.admin_password), /401/);
    await signIn(base, s.admin_email, 'a new long password');
  });

  it('personal API tokens: created once, listed without the token, work as bearer, die when revoked', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const created = await asBrowser(base, b, 'POST', '/v1/me/tokens', { body: { name: 'ci' } });
    assert.equal(created.status, 201, created.text);
    assert.match(created.json.token, /^gut_/);
    const list = await asBrowser(base, b, 'GET', '/v1/me/tokens');
    const row = list.json.tokens.find((t: Loose) => t.id === created.json.id);
    assert.deepEqual(Object.keys(row).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'scopes']);
    assert.ok(!list.text.includes(created.json.token));
    assert.equal((await api(base, 'GET', '/v1/webhooks/endpoints', { token: created.json.token })).status, 200);
    const del = await asBrowser(base, b, 'DELETE', `/v1/me/tokens/${created.json.id}`);
    assert.equal(del.status, 204, del.text);
    assertError(await api(base, 'GET', '/v1/webhooks/endpoints', { token: created.json.token }), 401, 'unauthorized');
    assertError(await asBrowser(base, b, 'DELETE', `/v1/me/tokens/${created.json.id}`), 404, 'not_found');
  });

  it('a session token is not a bearer token', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const token = b.cookie.split('=')[1];
    assertError(await api(base, 'GET', '/v1/webhooks/endpoints', { token }), 401, 'unauthorized');
  });
});

describe('login rate limits', () => {
  let server: TestServer;
  let base: string;
  before(async () => {
    server = await startTestServer();
    base = server.url;
  });
  after(() => server.cleanup());

  it('five failures for an account lock it for 15 minutes (429 with Retry-After), even for the right password', async () => {
    const s = await setupTenant(server);
    for (let i = 0; i < 5; i++) {
      const res = await api(base, 'POST', '/v1/auth/login', { body: { email: s.admin_email, password: 'wrong' } });
      assertError(res, 401, 'invalid_credentials');
    }
    const locked = await api(base, 'POST', '/v1/auth/login', {
      body: { email: s.admin_email, password: s.admin_password },
    });
    assertError(locked, 429, 'too_many_attempts');
    assert.equal(locked.headers.get('retry-after'), String(15 * 60));
    server.clock.advance(15 * MIN);
    await signIn(base, s.admin_email, s.admin_password);
  });

  it("a guesser from one address locks only that address out: the account's owner signs in from another", async () => {
    const s = await setupTenant(server);
    // Another loopback address stands for the owner's machine (the server listens on 127.0.0.1).
    const elsewhere = new Agent({ localAddress: '127.0.0.2' });
    try {
      for (let i = 0; i < 6; i++)
        await api(base, 'POST', '/v1/auth/login', { body: { email: s.admin_email, password: 'wrong' } });
      const locked = await api(base, 'POST', '/v1/auth/login', {
        body: { email: s.admin_email, password: s.admin_password },
      });
      assertError(locked, 429, 'too_many_attempts');
      const res = await undiciFetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: base },
        body: JSON.stringify({ email: s.admin_email, password: s.admin_password }),
        dispatcher: elsewhere,
      });
      assert.equal(res.status, 200, await res.text());
    } finally {
      await elsewhere.close();
    }
  });

  it('a success clears the account’s failures', async () => {
    const s = await setupTenant(server);
    for (let i = 0; i < 4; i++)
      await api(base, 'POST', '/v1/auth/login', { body: { email: s.admin_email, password: 'wrong' } });
    await signIn(base, s.admin_email, s.admin_password);
    for (let i = 0; i < 4; i++)
      await api(base, 'POST', '/v1/auth/login', { body: { email: s.admin_email, password: 'wrong' } });
    await signIn(base, s.admin_email, s.admin_password);
  });

  it('twenty failures from one address lock it for every account; unknown emails count too', async () => {
    server.clock.advance(15 * MIN);
    const s = await setupTenant(server);
    for (let i = 0; i < 20; i++) {
      const res = await api(base, 'POST', '/v1/auth/login', {
        body: { email: `nobody-${i}@example.com`, password: 'wrong' },
      });
      assertError(res, 401, 'invalid_credentials');
    }
    const locked = await api(base, 'POST', '/v1/auth/login', {
      body: { email: s.admin_email, password: s.admin_password },
    });
    assertError(locked, 429, 'too_many_attempts');
    assert.ok(Number(locked.headers.get('retry-after')) > 0);
    server.clock.advance(15 * MIN);
  });
});

describe('sign-in timing', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.cleanup());

  it('an unknown email costs a password check, as a wrong password does', async () => {
    const s = await setupTenant(server);
    const time = async (email: string) => {
      const t0 = performance.now();
      const res = await api(server.url, 'POST', '/v1/auth/login', { body: { email, password: 'wrong password' } });
      assert.equal(res.status, 401);
      return performance.now() - t0;
    };
    const median = (xs: number[]) => xs.sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const wrong: number[] = [];
    const unknown: number[] = [];
    for (let i = 0; i < 4; i++) {
      wrong.push(await time(s.admin_email));
      unknown.push(await time(`nobody-${i}@example.com`));
    }
    // scrypt takes tens of milliseconds; a lookup alone takes one. Without the dummy check the
    // unknown email would answer many times faster.
    assert.ok(
      median(unknown) > median(wrong) / 3,
      `unknown ${median(unknown).toFixed(1)} ms vs wrong ${median(wrong).toFixed(1)} ms`,
    );
  });
});

describe('a public URL over https', () => {
  let server: TestServer;
  let local: string;
  before(async () => {
    server = await startTestServer({ flags: { 'public-url': 'https://guard.example.com' } });
    const address = server.running.app.server.address() as { port: number };
    local = `http://127.0.0.1:${address.port}`;
  });
  after(() => server.cleanup());

  it('marks the cookie Secure, and writes must come from that origin', async () => {
    const s = await setupTenant(server);
    const origin = 'https://guard.example.com';
    const res = await api(local, 'POST', '/v1/auth/login', {
      body: { email: s.admin_email, password: s.admin_password },
      headers: { origin },
    });
    assert.equal(res.status, 200, res.text);
    assert.match(sessionSetCookie(res) ?? '', /; Secure$/);
    const b = await signIn(local, s.admin_email, s.admin_password, origin);
    const ok = await asBrowser(local, b, 'POST', '/v1/me/tokens', { body: { name: 'x' } });
    assert.equal(ok.status, 201, ok.text);
    const wrongOrigin = await asBrowser(local, b, 'POST', '/v1/me/tokens', {
      body: { name: 'x' },
      origin: local,
    });
    assertError(wrongOrigin, 403, 'csrf_failed');
  });
});

describe('the request log', () => {
  it('never holds a query string or a secret path segment', () => {
    assert.equal(loggedUrl('/v1/auth/password-links/gsp_abcDEF-123_x?x=1'), '/v1/auth/password-links/[REDACTED]');
    assert.equal(loggedUrl('/v1/objects/k?sig=abc'), '/v1/objects/k');
    assert.equal(loggedUrl('/v1/users/u_123'), '/v1/users/u_123');
  });
});
