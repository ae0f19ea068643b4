// Two-step sign-in against the real server on loopback (DESIGN §6, contract — two-step
// sign-in): TOTP set up and confirmed, the password sign-in's second step with a code or a
// recovery code, each accepted once, one step of drift, failures counted toward the login
// limits, TOTP turned off; the tenant's require_mfa and sso_only policies; an admin's reset
// of a user who lost their factors; and the second step answered by another replica than the
// first (PostgreSQL pass: the step lives in the shared database); the operator's
// `guard-server reset-mfa`.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { copyFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as OTPAuth from 'otpauth';
import { MASTER_KEY_FILE } from '../src/kernel/master-key.ts';
import type { SetupResult } from '../src/setup.ts';
import { asBrowser, type Browser, sessionSetCookie, signIn } from './console-session.ts';
import {
  api,
  isErrorShape,
  type Loose,
  makeTempDir,
  SERVER_BIN,
  setupTenant,
  startTestServer,
  type TestServer,
} from './harness.ts';
import { databaseArgs, databaseFlags, ON_POSTGRES } from './test-database.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

/** What an authenticator app shows at `ms` for the secret (an independent TOTP, from the URL's parameters). */
function appCode(otpauthUrl: string, ms: number): string {
  return OTPAuth.URI.parse(otpauthUrl).generate({ timestamp: ms });
}

const STEP = 30_000;

/** Adds a member with a password, through the admin's API and the one-time link. */
async function addMember(base: string, adminToken: string, email: string, password: string): Promise<string> {
  const added = await api(base, 'POST', '/v1/users', { token: adminToken, body: { email, role: 'member' } });
  assert.equal(added.status, 201, added.text);
  const token = new URL(added.json.set_password_url).hash.slice(1);
  const set = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password } });
  assert.equal(set.status, 204, set.text);
  return added.json.id;
}

/** Sets TOTP up for the signed-in browser: returns the otpauth URL and the recovery codes. */
async function enableTotp(server: TestServer, b: Browser): Promise<{ url: string; codes: string[] }> {
  const started = await asBrowser(server.url, b, 'POST', '/v1/me/mfa/totp');
  assert.equal(started.status, 201, started.text);
  const code = appCode(started.json.otpauth_url, server.clock.ms);
  const confirmed = await asBrowser(server.url, b, 'POST', '/v1/me/mfa/totp/confirm', { body: { code } });
  assert.equal(confirmed.status, 200, confirmed.text);
  return { url: started.json.otpauth_url, codes: confirmed.json.recovery_codes };
}

function login(base: string, email: string, password: string) {
  return api(base, 'POST', '/v1/auth/login', { body: { email, password }, headers: { origin: base } });
}

function secondStep(base: string, body: Record<string, string>) {
  return api(base, 'POST', '/v1/auth/login/mfa', { body, headers: { origin: base } });
}

describe('two-step sign-in (TOTP)', () => {
  let server: TestServer;
  let base: string;
  let setup: SetupResult;
  const email = 'tess@acme.example';
  const password = 'a long enough password';

  before(async () => {
    server = await startTestServer();
    base = server.url;
    setup = await setupTenant(server);
    await addMember(base, setup.admin_token, email, password);
  });
  after(() => server.cleanup());

  it('sets up with a base32 secret and an otpauth URL, confirmed by a code; ten recovery codes come once', async () => {
    const b = await signIn(base, email, password);
    assert.equal(b.login.method, 'password');
    const started = await asBrowser(base, b, 'POST', '/v1/me/mfa/totp');
    assert.equal(started.status, 201, started.text);
    assert.match(started.json.secret, /^[A-Z2-7]{32}$/);
    const url = new URL(started.json.otpauth_url);
    assert.equal(url.protocol, 'otpauth:');
    assert.equal(url.host, 'totp');
    assert.equal(decodeURIComponent(url.pathname), `/Guard:${email}`);
    assert.equal(url.searchParams.get('secret'), started.json.secret);
    assert.equal(url.searchParams.get('algorithm'), 'SHA1');
    assert.equal(url.searchParams.get('digits'), '6');
    assert.equal(url.searchParams.get('period'), '30');
    assert.equal(started.headers.get('cache-control'), 'no-store');
    // Nothing is on until a code confirms it: sign-in still takes the password alone.
    assert.equal((await login(base, email, password)).json.mfa_required, undefined);

    const wrong = await asBrowser(base, b, 'POST', '/v1/me/mfa/totp/confirm', { body: { code: '000000' } });
    assertError(wrong, 400, 'invalid_code');
    const code = appCode(started.json.otpauth_url, server.clock.ms);
    const confirmed = await asBrowser(base, b, 'POST', '/v1/me/mfa/totp/confirm', { body: { code } });
    assert.equal(confirmed.status, 200, confirmed.text);
    assert.equal(confirmed.json.recovery_codes.length, 10);
    assert.equal(new Set(confirmed.json.recovery_codes).size, 10);
    for (const c of confirmed.json.recovery_codes) assert.match(c, /^[a-z2-9]{5}-[a-z2-9]{5}$/);
    const status = await asBrowser(base, b, 'GET', '/v1/me/mfa');
    assert.deepEqual(
      { ...status.json, totp_enabled_at: typeof status.json.totp_enabled_at },
      {
        totp_enabled: true,
        totp_enabled_at: 'string',
        recovery_codes_left: 10,
        passkeys: 0,
        required_by_tenant: false,
      },
    );
    assertError(await asBrowser(base, b, 'POST', '/v1/me/mfa/totp'), 409, 'totp_enabled');
    // The secret is sealed at rest.
    const row = await server.deps.db
      .selectFrom('users')
      .select(['totp_secret_sealed', 'totp_pending_sealed'])
      .where('email', '=', email)
      .executeTakeFirstOrThrow();
    assert.ok(row.totp_secret_sealed?.startsWith('v1.'));
    assert.ok(!row.totp_secret_sealed?.includes(started.json.secret));
    assert.equal(row.totp_pending_sealed, null);
  });

  it('asks for the second step with no cookie, then a code signs in once; the same code never twice', async () => {
    server.clock.advance(STEP);
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    assert.ok(b);
    const first = await login(base, email, password);
    assert.equal(first.status, 200, first.text);
    assert.equal(first.json.mfa_required, true);
    assert.deepEqual(first.json.methods, ['totp', 'recovery_code']);
    assert.equal(sessionSetCookie(first), undefined, 'no session before the second factor');
    assert.equal(first.headers.get('cache-control'), 'no-store');

    const url = await totpUrlOf(server, email);
    const code = appCode(url, server.clock.ms);
    const ok = await secondStep(base, { mfa_token: first.json.mfa_token, code });
    assert.equal(ok.status, 200, ok.text);
    assert.ok(sessionSetCookie(ok));
    assert.equal(ok.json.user.email, email);
    assert.equal(ok.json.method, 'totp');
    // The token is used up, and so is the code: another sign-in cannot reuse it (replay).
    assertError(await secondStep(base, { mfa_token: first.json.mfa_token, code }), 401, 'mfa_expired');
    const again = await login(base, email, password);
    assertError(await secondStep(base, { mfa_token: again.json.mfa_token, code }), 401, 'invalid_code');
  });

  it('takes a code one step old or one step ahead, not two', async () => {
    const url = await totpUrlOf(server, email);
    server.clock.advance(3 * STEP);
    const behind = await login(base, email, password);
    const late = appCode(url, server.clock.ms - 2 * STEP);
    assertError(await secondStep(base, { mfa_token: behind.json.mfa_token, code: late }), 401, 'invalid_code');
    const previous = appCode(url, server.clock.ms - STEP);
    assert.equal((await secondStep(base, { mfa_token: behind.json.mfa_token, code: previous })).status, 200);
    server.clock.advance(3 * STEP);
    const ahead = await login(base, email, password);
    const next = appCode(url, server.clock.ms + STEP);
    assert.equal((await secondStep(base, { mfa_token: ahead.json.mfa_token, code: next })).status, 200);
    // The step just accepted was ahead: the code of the current step (an earlier one) is now refused too.
    const now = await login(base, email, password);
    const current = appCode(url, server.clock.ms);
    assertError(await secondStep(base, { mfa_token: now.json.mfa_token, code: current }), 401, 'invalid_code');
    server.clock.advance(2 * STEP);
  });

  it('a recovery code signs in once, typed in any case or without its dash', async () => {
    const b = await signIn(base, setup.admin_email, setup.admin_password);
    const { codes } = await enableTotp(server, b);
    const typed = codes[0].toUpperCase().replace('-', '');
    const first = await login(base, setup.admin_email, setup.admin_password);
    const ok = await secondStep(base, { mfa_token: first.json.mfa_token, recovery_code: typed });
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.json.method, 'recovery_code');
    const second = await login(base, setup.admin_email, setup.admin_password);
    assertError(
      await secondStep(base, { mfa_token: second.json.mfa_token, recovery_code: codes[0] }),
      401,
      'invalid_code',
    );
    const admin = await secondStep(base, { mfa_token: second.json.mfa_token, recovery_code: codes[1] });
    const status = await api(base, 'GET', '/v1/me/mfa', { headers: { cookie: cookieOf(admin) } });
    assert.equal(status.json.recovery_codes_left, 8);
    const third = await login(base, setup.admin_email, setup.admin_password);
    assertError(await secondStep(base, { mfa_token: third.json.mfa_token }), 400, 'invalid_request');
  });

  it('five wrong codes end the step, and they count toward the login limits', async () => {
    const who = 'wrong@acme.example';
    await addMember(base, setup.admin_token, who, password);
    const b = await signIn(base, who, password);
    await enableTotp(server, b);
    server.clock.advance(STEP);
    const first = await login(base, who, password);
    for (let i = 0; i < 4; i++)
      assertError(await secondStep(base, { mfa_token: first.json.mfa_token, code: '123456' }), 401, 'invalid_code');
    assertError(await secondStep(base, { mfa_token: first.json.mfa_token, code: '123456' }), 401, 'mfa_expired');
    // Five failures for this account and address: the sign-in itself is now held back.
    const held = await login(base, who, password);
    assertError(held, 429, 'too_many_attempts');
    assert.ok(Number(held.headers.get('retry-after')) > 0);
    server.clock.advance(16 * 60_000);
  });

  it('turning TOTP off takes a current code; sign-in is then one step again', async () => {
    const who = 'off@acme.example';
    await addMember(base, setup.admin_token, who, password);
    const b = await signIn(base, who, password);
    const { url } = await enableTotp(server, b);
    server.clock.advance(STEP);
    assertError(
      await asBrowser(base, b, 'POST', '/v1/me/mfa/totp/disable', { body: { code: '999999' } }),
      400,
      'invalid_code',
    );
    const off = await asBrowser(base, b, 'POST', '/v1/me/mfa/totp/disable', {
      body: { code: appCode(url, server.clock.ms) },
    });
    assert.equal(off.status, 204, off.text);
    const again = await login(base, who, password);
    assert.equal(again.json.mfa_required, undefined);
    assert.ok(sessionSetCookie(again));
    const status = await asBrowser(base, b, 'GET', '/v1/me/mfa');
    assert.equal(status.json.recovery_codes_left, 0);
  });

  it('new recovery codes replace the old ones', async () => {
    const who = 'renew@acme.example';
    await addMember(base, setup.admin_token, who, password);
    const b = await signIn(base, who, password);
    const { codes } = await enableTotp(server, b);
    const renewed = await asBrowser(base, b, 'POST', '/v1/me/mfa/recovery-codes', { body: { code: codes[0] } });
    assert.equal(renewed.status, 200, renewed.text);
    assert.equal(renewed.json.recovery_codes.length, 10);
    const first = await login(base, who, password);
    assertError(
      await secondStep(base, { mfa_token: first.json.mfa_token, recovery_code: codes[1] }),
      401,
      'invalid_code',
    );
    const ok = await secondStep(base, {
      mfa_token: first.json.mfa_token,
      recovery_code: renewed.json.recovery_codes[0],
    });
    assert.equal(ok.status, 200, ok.text);
  });
});

describe('the tenant sign-in policy: require_mfa and sso_only', () => {
  let server: TestServer;
  let base: string;
  let setup: SetupResult;
  const password = 'a long enough password';

  before(async () => {
    server = await startTestServer();
    base = server.url;
    setup = await setupTenant(server);
  });
  after(() => server.cleanup());

  it('require_mfa: a session without a second factor may only set one up, then everything opens', async () => {
    const who = 'new@acme.example';
    await addMember(base, setup.admin_token, who, password);
    const on = await api(base, 'PATCH', '/v1/tenant/settings', {
      token: setup.admin_token,
      body: { require_mfa: true },
    });
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.require_mfa, true);
    const b = await signIn(base, who, password);
    assert.equal(b.login.mfa_setup_required, true);
    assertError(await asBrowser(base, b, 'GET', '/v1/signals'), 403, 'mfa_setup_required');
    assertError(await asBrowser(base, b, 'POST', '/v1/me/tokens', { body: { name: 'x' } }), 403, 'mfa_setup_required');
    const session = await asBrowser(base, b, 'GET', '/v1/auth/session');
    assert.equal(session.json.mfa_setup_required, true);
    assert.equal((await asBrowser(base, b, 'GET', '/v1/me/mfa')).json.required_by_tenant, true);
    const { url } = await enableTotp(server, b);
    assert.equal((await asBrowser(base, b, 'GET', '/v1/signals')).status, 200);
    assert.equal((await asBrowser(base, b, 'GET', '/v1/auth/session')).json.mfa_setup_required, false);
    // Turning the only factor off is refused while the tenant requires one.
    server.clock.advance(STEP);
    assertError(
      await asBrowser(base, b, 'POST', '/v1/me/mfa/totp/disable', { body: { code: appCode(url, server.clock.ms) } }),
      409,
      'mfa_required_by_tenant',
    );
    const audit = await server.deps.db
      .selectFrom('audit_log')
      .select('target')
      .where('action', '=', 'tenant.settings')
      .execute();
    assert.ok(audit.some((a) => a.target === 'require_mfa=true'));
    await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { require_mfa: false } });
  });

  it('sso_only needs a connection, then refuses passwords but for admins holding TOTP (break-glass)', async () => {
    const member = 'member@acme.example';
    await addMember(base, setup.admin_token, member, password);
    assertError(
      await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { sso_only: true } }),
      409,
      'sso_not_configured',
    );
    const at = server.clock.now().toISOString();
    await server.deps.db
      .insertInto('sso_connections')
      .values({
        tenant_id: setup.tenant_id,
        protocol: 'oidc',
        config: JSON.stringify({ issuer: 'https://idp.example', client_id: 'guard' }),
        secret_sealed: null,
        email_domains: '["acme.example"]',
        admin_group: null,
        created_at: at,
        updated_at: at,
      })
      .execute();
    const on = await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { sso_only: true } });
    assert.equal(on.status, 200, on.text);
    assertError(await login(base, member, password), 403, 'sso_required');
    assertError(await login(base, setup.admin_email, setup.admin_password), 403, 'sso_required');
    // The admin sets TOTP up (through a session opened before sso_only, or any other way in)…
    await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { sso_only: false } });
    const admin = await signIn(base, setup.admin_email, setup.admin_password);
    const { url } = await enableTotp(server, admin);
    await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { sso_only: true } });
    // …and is let through to the second step: break-glass.
    server.clock.advance(STEP);
    const glass = await login(base, setup.admin_email, setup.admin_password);
    assert.equal(glass.json.mfa_required, true, glass.text);
    const ok = await secondStep(base, { mfa_token: glass.json.mfa_token, code: appCode(url, server.clock.ms) });
    assert.equal(ok.status, 200, ok.text);
    // A wrong password is still just a wrong password (sso_only does not tell who exists).
    assertError(await login(base, member, 'not the password at all'), 401, 'invalid_credentials');
    await api(base, 'PATCH', '/v1/tenant/settings', { token: setup.admin_token, body: { sso_only: false } });
  });

  it('no scoped token changes who may sign in: the policy, identity providers, SCIM tokens, factor resets', async () => {
    // Made with the admin's full-access token (the admin holds TOTP since the test above).
    const made = await api(base, 'POST', '/v1/me/tokens', {
      token: setup.admin_token,
      body: { name: 'automation', scopes: ['settings:write', 'users:write', 'read'] },
    });
    const adminId = (await api(base, 'GET', '/v1/users', { token: setup.admin_token })).json.users.find(
      (u: Loose) => u.email === setup.admin_email,
    ).id;
    assert.equal(made.status, 201, made.text);
    const token = made.json.token;
    assertError(
      await api(base, 'PATCH', '/v1/tenant/settings', { token, body: { require_mfa: false } }),
      403,
      'insufficient_scope',
    );
    assert.equal(
      (await api(base, 'PATCH', '/v1/tenant/settings', { token, body: { allow_support_collection: false } })).status,
      200,
      'the other settings stay within settings:write',
    );
    for (const [method, path, body] of [
      [
        'PUT',
        '/v1/tenant/sso',
        { issuer: 'https://idp.example', client_id: 'x', client_secret: 'y', email_domains: ['acme.example'] },
      ],
      ['DELETE', '/v1/tenant/saml', undefined],
      ['POST', '/v1/tenant/scim-tokens', { name: 'x' }],
      ['DELETE', `/v1/users/${adminId}/mfa`, undefined],
    ] as const)
      assertError(await api(base, method, path, { token, body }), 403, 'insufficient_scope');
    assert.equal((await api(base, 'GET', '/v1/tenant/sso', { token })).status, 200, 'reading is a read');
  });

  it("an admin resets a user's second factors: TOTP, codes and passkeys go, sessions and tokens end", async () => {
    const who = 'lost@acme.example';
    const id = await addMember(base, setup.admin_token, who, password);
    const b = await signIn(base, who, password);
    await enableTotp(server, b);
    const member = await addMemberToken(server, b);
    const reset = await api(base, 'DELETE', `/v1/users/${id}/mfa`, { token: setup.admin_token });
    assert.equal(reset.status, 204, reset.text);
    assert.equal((await asBrowser(base, b, 'GET', '/v1/auth/session')).status, 401);
    assert.equal((await api(base, 'GET', '/v1/me/mfa', { token: member })).status, 401);
    const again = await login(base, who, password);
    assert.equal(again.json.mfa_required, undefined, 'signs in with the password alone, to set a factor up again');
    const audit = await server.deps.db
      .selectFrom('audit_log')
      .select(['action', 'target'])
      .where('action', '=', 'user.mfa_reset')
      .execute();
    assert.deepEqual(
      audit.map((a) => ({ ...a })),
      [{ action: 'user.mfa_reset', target: id }],
    );
    const memberToken = await signIn(base, who, password);
    assertError(
      await api(base, 'DELETE', `/v1/users/${id}/mfa`, { token: await addMemberToken(server, memberToken) }),
      403,
      'forbidden',
    );
    assertError(await api(base, 'DELETE', '/v1/users/u_nobody/mfa', { token: setup.admin_token }), 404, 'not_found');
  });
});

describe('guard-server reset-mfa: the operator recovers a user who lost every factor', () => {
  it('removes the factors of the email given (exit 0), says when there is no such user (exit 2)', async () => {
    const server = await startTestServer();
    try {
      const setup = await setupTenant(server);
      const b = await signIn(server.url, setup.admin_email, setup.admin_password);
      await enableTotp(server, b);
      assert.equal((await login(server.url, setup.admin_email, setup.admin_password)).json.mfa_required, true);
      const args = [
        'reset-mfa',
        '--data-dir',
        server.dataDir,
        ...(await databaseArgs(server.dataDir, { migrate: false })),
      ];
      const missing = await run([...args, '--email', 'nobody@acme.example']);
      assert.equal(missing.code, 2, missing.stderr);
      assert.match(missing.stderr, /no user nobody@acme\.example/);
      const done = await run([...args, '--email', setup.admin_email.toUpperCase()]);
      assert.equal(done.code, 0, done.stderr);
      assert.match(done.stdout, /were removed/);
      assert.equal((await login(server.url, setup.admin_email, setup.admin_password)).json.mfa_required, undefined);
      assertError(await asBrowser(server.url, b, 'GET', '/v1/me/mfa'), 401, 'unauthorized');
      const audit = await server.deps.db
        .selectFrom('audit_log')
        .select(['actor_id', 'actor_role'])
        .where('action', '=', 'user.mfa_reset')
        .execute();
      assert.deepEqual(
        audit.map((a) => ({ ...a })),
        [{ actor_id: 'operator:cli', actor_role: 'operator' }],
      );
    } finally {
      await server.cleanup();
    }
  });
});

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(SERVER_BIN, args, { timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : null) : 0, stdout, stderr }),
    );
  });
}

describe('the second step on another replica', { skip: !ON_POSTGRES && 'PostgreSQL pass only' }, () => {
  it('a password checked by one replica is completed by the other, and the step is used once', async () => {
    const one = await startTestServer();
    const dataDir = await makeTempDir('replica');
    // Replicas share the database and the master key (docs/deploy.md).
    await copyFile(join(one.dataDir, MASTER_KEY_FILE), join(dataDir, MASTER_KEY_FILE));
    const database = await databaseFlags(one.dataDir);
    const two = await startTestServer({ dataDir, clock: one.clock, flags: { database: String(database.database) } });
    try {
      const setup = await setupTenant(one);
      const b = await signIn(one.url, setup.admin_email, setup.admin_password);
      const { url } = await enableTotp(one, b);
      one.clock.advance(STEP);
      const first = await login(one.url, setup.admin_email, setup.admin_password);
      const code = appCode(url, one.clock.ms);
      const done = await secondStep(two.url, { mfa_token: first.json.mfa_token, code });
      assert.equal(done.status, 200, done.text);
      assertError(await secondStep(one.url, { mfa_token: first.json.mfa_token, code }), 401, 'mfa_expired');
      // The session made by replica two works on replica one.
      const cookie = cookieOf(done);
      assert.equal((await api(one.url, 'GET', '/v1/auth/session', { headers: { cookie } })).status, 200);
    } finally {
      await two.stop();
      await one.cleanup();
    }
  });
});

function cookieOf(res: { headers: Headers }): string {
  const c = res.headers.getSetCookie().find((v) => v.startsWith('guard_session='));
  assert.ok(c, 'a session cookie');
  return c.split(';')[0];
}

/** A personal API token made through the browser session. */
async function addMemberToken(server: TestServer, b: Browser): Promise<string> {
  const res = await asBrowser(server.url, b, 'POST', '/v1/me/tokens', { body: { name: 'cli' } });
  assert.equal(res.status, 201, res.text);
  return res.json.token;
}

/** The otpauth URL of a user's TOTP, rebuilt from the sealed secret (what their app holds). */
async function totpUrlOf(server: TestServer, email: string): Promise<string> {
  const row = await server.deps.db
    .selectFrom('users')
    .select(['id', 'totp_secret_sealed'])
    .where('email', '=', email)
    .executeTakeFirstOrThrow();
  const { open } = await import('../src/kernel/secret-box.ts');
  const secret = open(server.deps.masterKey.derive('totp'), row.totp_secret_sealed ?? '', row.id);
  return new OTPAuth.TOTP({ secret: OTPAuth.Secret.fromBase32(secret), label: email, issuer: 'Guard' }).toString();
}
