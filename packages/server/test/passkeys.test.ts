// Passkeys (docs/identity.md#passkeys) against the real server on loopback, with a software
// authenticator (soft-authenticator.ts) answering as a browser would: adding, listing, renaming
// and removing one's passkeys; a password-less sign-in; a passkey as the second factor of a
// password sign-in; and every answer that must be refused (another challenge or origin, a
// replayed challenge, a counter gone back, another user's passkey, a deactivated user).

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { hashPassword } from '../src/auth/secrets.ts';
import { asBrowser, type Browser, sessionSetCookie, signIn } from './console-session.ts';
import { api, isErrorShape, type Loose, setupTenant, startTestServer, type TestServer } from './harness.ts';
import { SoftAuthenticator } from './soft-authenticator.ts';

function assertError(res: { status: number; json: Loose; text: string }, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

const MIN = 60_000;

describe('passkeys', () => {
  let server: TestServer;
  let base: string;
  /** Two users of two tenants, each with their own authenticator. */
  let alice: { token: string; email: string; password: string; id: string; device: SoftAuthenticator };
  let bob: { token: string; email: string; password: string; id: string; device: SoftAuthenticator };

  before(async () => {
    server = await startTestServer();
    base = server.url;
    const one = await setupTenant(server);
    const two = await setupTenant(server);
    const person = async (s: typeof one) => {
      const b = await signIn(base, s.admin_email, s.admin_password);
      return {
        token: s.admin_token,
        email: s.admin_email,
        password: s.admin_password,
        id: b.login.user.id as string,
        device: new SoftAuthenticator(base),
      };
    };
    alice = await person(one);
    bob = await person(two);
  });
  after(() => server.cleanup());

  // Each test starts with the login limits' window behind it (failures of one test are not the next's).
  beforeEach(() => server.clock.advance(16 * MIN));

  /** A console session of the user, signed in anew when the clock moved since (sessions idle out). */
  const sessions = new Map<string, { at: number; browser: Browser }>();
  async function sessionOf(who: { email: string; password: string; device?: SoftAuthenticator }): Promise<Browser> {
    const kept = sessions.get(who.email);
    if (kept && kept.at === server.clock.ms) return kept.browser;
    const browser = await signInWithSecondFactor(who);
    sessions.set(who.email, { at: server.clock.ms, browser });
    return browser;
  }

  /** A password sign-in, its second step answered with the user's passkey once they hold one. */
  async function signInWithSecondFactor(who: {
    email: string;
    password: string;
    device?: SoftAuthenticator;
  }): Promise<Browser> {
    const first = await api(base, 'POST', '/v1/auth/login', {
      body: { email: who.email, password: who.password },
      headers: { origin: base },
    });
    if (first.json.mfa_required !== true || !who.device) return signIn(base, who.email, who.password);
    const opts = await api(base, 'POST', '/v1/auth/login/mfa/passkey/options', {
      body: { mfa_token: first.json.mfa_token },
      headers: { origin: base },
    });
    const id = opts.json.options.allowCredentials[0].id;
    const done = await api(base, 'POST', '/v1/auth/login/mfa/passkey', {
      body: { mfa_token: first.json.mfa_token, response: who.device.get(opts.json.options, id) },
      headers: { origin: base },
    });
    const cookie = sessionSetCookie(done);
    assert.ok(cookie, done.text);
    return { cookie: cookie.split(';')[0], csrf: done.json.csrf_token, origin: base, login: done.json };
  }

  /** A request of the user's console session (cookie, Origin, CSRF token). */
  async function asUser(who: { email: string; password: string }, method: string, path: string, body?: unknown) {
    return asBrowser(base, await sessionOf(who), method, path, body === undefined ? {} : { body });
  }

  /** Adds a passkey made by the user's authenticator; returns its id. */
  async function addPasskey(who: typeof alice, name = 'Laptop'): Promise<string> {
    const started = await asUser(who, 'POST', '/v1/me/passkeys/options');
    assert.equal(started.status, 200, started.text);
    const response = who.device.create(started.json.options);
    const added = await asUser(who, 'POST', '/v1/me/passkeys', { flow_id: started.json.flow_id, name, response });
    assert.equal(added.status, 201, added.text);
    return added.json.id;
  }

  async function signInOptions() {
    const res = await api(base, 'POST', '/v1/auth/passkey/options', { headers: { origin: base } });
    assert.equal(res.status, 200, res.text);
    return res.json as { flow_id: string; options: Loose };
  }

  function passkeySignIn(flowId: string, response: Loose) {
    return api(base, 'POST', '/v1/auth/passkey', { body: { flow_id: flowId, response }, headers: { origin: base } });
  }

  /** The password step of a user who holds a passkey: POST /v1/auth/login answers with its token. */
  async function passwordStep(who: typeof alice): Promise<string> {
    const res = await api(base, 'POST', '/v1/auth/login', {
      body: { email: who.email, password: who.password },
      headers: { origin: base },
    });
    assert.equal(res.json.mfa_required, true, res.text);
    assert.ok(res.json.methods.includes('passkey'));
    return res.json.mfa_token;
  }

  describe('adding one', () => {
    it('registration options name the server as relying party, ask for a discoverable credential and exclude your passkeys', async () => {
      const res = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const { options } = res.json;
      assert.deepEqual(options.rp, { name: 'Guard', id: '127.0.0.1' });
      assert.equal(options.user.name, alice.email);
      assert.equal(Buffer.from(options.user.id, 'base64url').toString(), alice.id);
      assert.equal(options.authenticatorSelection.residentKey, 'required');
      assert.equal(options.authenticatorSelection.userVerification, 'preferred');
      assert.equal(options.attestation, 'none');
      assert.match(options.challenge, /^[A-Za-z0-9_-]{43}$/);
      assert.match(res.json.flow_id, /^[A-Za-z0-9_-]{43}$/);

      const id = await addPasskey(alice, 'Work laptop');
      const again = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      assert.ok(
        again.json.options.excludeCredentials.some((c: Loose) => c.id === id),
        'a passkey already added is excluded',
      );
      await api(base, 'DELETE', `/v1/me/passkeys/${id}`, { token: alice.token });
    });

    it('an added passkey is listed with its name, times and kind; another user sees none of it', async () => {
      const id = await addPasskey(alice, 'YubiKey 5');
      const list = await api(base, 'GET', '/v1/me/passkeys', { token: alice.token });
      assert.equal(list.status, 200, list.text);
      const mine = list.json.passkeys.find((p: Loose) => p.id === id);
      assert.deepEqual(mine, {
        id,
        name: 'YubiKey 5',
        created_at: server.clock.now().toISOString(),
        last_used_at: null,
        device_type: 'singleDevice',
        backed_up: false,
      });
      const theirs = await api(base, 'GET', '/v1/me/passkeys', { token: bob.token });
      assert.ok(!theirs.json.passkeys.some((p: Loose) => p.id === id));
      assertError(await api(base, 'GET', '/v1/me/passkeys'), 401, 'unauthorized');
      await api(base, 'DELETE', `/v1/me/passkeys/${id}`, { token: alice.token });
    });

    it('a passkey is added from a console session only (403 session_required with an API token), CSRF-checked', async () => {
      assertError(await api(base, 'POST', '/v1/me/passkeys/options', { token: alice.token }), 403, 'session_required');
      const b: Browser = await signIn(base, alice.email, alice.password);
      const started = await asBrowser(base, b, 'POST', '/v1/me/passkeys/options');
      assert.equal(started.status, 200, started.text);
      const response = alice.device.create(started.json.options);
      const body = { flow_id: started.json.flow_id, name: 'Phone', response };
      assertError(await api(base, 'POST', '/v1/me/passkeys', { token: alice.token, body }), 403, 'session_required');
      assertError(await asBrowser(base, b, 'POST', '/v1/me/passkeys', { body, csrf: null }), 403, 'csrf_failed');
      const added = await asBrowser(base, b, 'POST', '/v1/me/passkeys', { body });
      assert.equal(added.status, 201, added.text);
      await api(base, 'DELETE', `/v1/me/passkeys/${added.json.id}`, { token: alice.token });
    });

    it('an answer to another challenge or from another origin is refused (400 invalid_passkey), and nothing is added', async () => {
      for (const bad of [
        { challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        { origin: 'https://evil.example' },
      ]) {
        const started = await asUser(alice, 'POST', '/v1/me/passkeys/options');
        const response = alice.device.create(started.json.options, bad);
        const res = await asUser(alice, 'POST', '/v1/me/passkeys', {
          flow_id: started.json.flow_id,
          name: 'Bad',
          response,
        });
        assertError(res, 400, 'invalid_passkey');
      }
      const list = await api(base, 'GET', '/v1/me/passkeys', { token: alice.token });
      assert.deepEqual(list.json.passkeys, []);
    });

    it('a registration flow is answered once, and only by the user who started it', async () => {
      const started = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      const theirs = await asUser(bob, 'POST', '/v1/me/passkeys', {
        flow_id: started.json.flow_id,
        name: 'Not mine',
        response: bob.device.create(started.json.options),
      });
      assertError(theirs, 400, 'invalid_passkey');

      const mine = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      const body = { flow_id: mine.json.flow_id, name: 'Once', response: alice.device.create(mine.json.options) };
      const first = await asUser(alice, 'POST', '/v1/me/passkeys', body);
      assert.equal(first.status, 201, first.text);
      assertError(await asUser(alice, 'POST', '/v1/me/passkeys', body), 400, 'invalid_passkey');
      await api(base, 'DELETE', `/v1/me/passkeys/${first.json.id}`, { token: alice.token });
    });

    it('a registration flow expires after 5 minutes', async () => {
      const started = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      server.clock.advance(5 * MIN + 1000);
      const res = await asUser(alice, 'POST', '/v1/me/passkeys', {
        flow_id: started.json.flow_id,
        name: 'Late',
        response: alice.device.create(started.json.options),
      });
      assertError(res, 400, 'invalid_passkey');
    });

    it('names are 1 to 100 characters and answers are bounded', async () => {
      const started = await asUser(alice, 'POST', '/v1/me/passkeys/options');
      const response = alice.device.create(started.json.options);
      for (const name of ['', 'x'.repeat(101)]) {
        const res = await asUser(alice, 'POST', '/v1/me/passkeys', { flow_id: started.json.flow_id, name, response });
        assert.equal(res.status, 400, res.text);
      }
      const huge = { ...response, response: { ...response.response, attestationObject: 'A'.repeat(40_000) } };
      const res = await asUser(alice, 'POST', '/v1/me/passkeys', {
        flow_id: started.json.flow_id,
        name: 'Huge',
        response: huge,
      });
      assert.equal(res.status, 400, res.text);
      const tooBig = await asUser(alice, 'POST', '/v1/me/passkeys', {
        flow_id: started.json.flow_id,
        name: 'Huge',
        response,
        padding: 'x'.repeat(70_000),
      });
      assert.equal(tooBig.status, 413, tooBig.text);
    });
  });

  describe('renaming and removing', () => {
    it('a passkey is renamed and removed by its owner only; a removed passkey signs in no more', async () => {
      const id = await addPasskey(alice, 'Old name');
      assertError(
        await api(base, 'PATCH', `/v1/me/passkeys/${id}`, { token: bob.token, body: { name: 'Stolen' } }),
        404,
        'not_found',
      );
      assertError(await api(base, 'DELETE', `/v1/me/passkeys/${id}`, { token: bob.token }), 404, 'not_found');
      const renamed = await api(base, 'PATCH', `/v1/me/passkeys/${id}`, {
        token: alice.token,
        body: { name: 'New name' },
      });
      assert.equal(renamed.status, 200, renamed.text);
      assert.equal(renamed.json.name, 'New name');

      const removed = await api(base, 'DELETE', `/v1/me/passkeys/${id}`, { token: alice.token });
      assert.equal(removed.status, 204, removed.text);
      assertError(await api(base, 'DELETE', `/v1/me/passkeys/${id}`, { token: alice.token }), 404, 'not_found');
      const { flow_id, options } = await signInOptions();
      assertError(await passkeySignIn(flow_id, alice.device.get(options, id)), 401, 'passkey_not_accepted');
    });
  });

  it("a reset through a set-password link deletes the user's passkeys (an intruder's among them)", async () => {
    const email = 'reset-passkeys@example.com';
    const added = await api(base, 'POST', '/v1/users', { token: alice.token, body: { email, role: 'member' } });
    assert.equal(added.status, 201, added.text);
    const linkToken = (url: string) => new URL(url).hash.slice(1);
    const set = await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: linkToken(added.json.set_password_url), password: 'first password 123' },
    });
    assert.equal(set.status, 204, set.text);
    const b = await signIn(base, email, 'first password 123');
    const device = new SoftAuthenticator(base);
    const started = await asBrowser(base, b, 'POST', '/v1/me/passkeys/options');
    const made = await asBrowser(base, b, 'POST', '/v1/me/passkeys', {
      body: { flow_id: started.json.flow_id, name: 'Intruder', response: device.create(started.json.options) },
    });
    assert.equal(made.status, 201, made.text);

    const link = await api(base, 'POST', `/v1/users/${added.json.id}/password-link`, { token: alice.token });
    const reset = await api(base, 'POST', '/v1/auth/set-password', {
      body: { token: linkToken(link.json.set_password_url), password: 'a brand new passphrase' },
    });
    assert.equal(reset.status, 204, reset.text);
    const { flow_id, options } = await signInOptions();
    assertError(await passkeySignIn(flow_id, device.get(options, made.json.id)), 401, 'passkey_not_accepted');
    const fresh = await signIn(base, email, 'a brand new passphrase');
    assert.deepEqual((await asBrowser(base, fresh, 'GET', '/v1/me/passkeys')).json.passkeys, []);
  });

  describe('password-less sign-in', () => {
    let passkey: string;
    before(async () => {
      passkey = await addPasskey(alice, 'Sign-in key');
    });

    it('options allow any discoverable passkey and require user verification', async () => {
      const { options } = await signInOptions();
      assert.equal(options.rpId, '127.0.0.1');
      assert.equal(options.userVerification, 'required');
      assert.equal(options.allowCredentials, undefined);
    });

    it('a passkey signs in: the session cookie, the session info (method passkey), the use recorded', async () => {
      const { flow_id, options } = await signInOptions();
      const res = await passkeySignIn(flow_id, alice.device.get(options, passkey));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.user.id, alice.id);
      assert.equal(res.json.method, 'passkey');
      assert.equal(res.headers.get('cache-control'), 'no-store');
      const cookie = (sessionSetCookie(res) ?? '').split(';')[0];
      assert.match(cookie, /^guard_session=gss_/);
      const session = await api(base, 'GET', '/v1/auth/session', { headers: { cookie } });
      assert.equal(session.status, 200, session.text);
      assert.equal(session.json.user.email, alice.email);

      const list = await api(base, 'GET', '/v1/me/passkeys', { token: alice.token });
      const used = list.json.passkeys.find((p: Loose) => p.id === passkey);
      assert.equal(used.last_used_at, server.clock.now().toISOString());
      const stored = await server.deps.db
        .selectFrom('webauthn_credentials')
        .select('counter')
        .where('id', '=', passkey)
        .executeTakeFirstOrThrow();
      assert.equal(Number(stored.counter), alice.device.credentials.get(passkey)?.counter);
    });

    it('an answer to another challenge, from another origin or without user verification is refused', async () => {
      for (const bad of [
        { challenge: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' },
        { origin: 'https://evil.example' },
        { userVerified: false },
      ]) {
        const { flow_id, options } = await signInOptions();
        const res = await passkeySignIn(flow_id, alice.device.get(options, passkey, bad));
        assertError(res, 401, 'passkey_not_accepted');
        assert.equal(sessionSetCookie(res), undefined);
      }
    });

    it('a challenge is answered once: the same answer again is refused', async () => {
      const { flow_id, options } = await signInOptions();
      const answer = alice.device.get(options, passkey);
      assert.equal((await passkeySignIn(flow_id, answer)).status, 200);
      assertError(await passkeySignIn(flow_id, answer), 401, 'passkey_not_accepted');
    });

    it('a signature counter that went back is refused (a cloned authenticator)', async () => {
      const { flow_id, options } = await signInOptions();
      assert.equal((await passkeySignIn(flow_id, alice.device.get(options, passkey, { counter: 10 }))).status, 200);
      const next = await signInOptions();
      assertError(
        await passkeySignIn(next.flow_id, alice.device.get(next.options, passkey, { counter: 9 })),
        401,
        'passkey_not_accepted',
      );
      const same = await signInOptions();
      assertError(
        await passkeySignIn(same.flow_id, alice.device.get(same.options, passkey, { counter: 10 })),
        401,
        'passkey_not_accepted',
      );
      const later = await signInOptions();
      assert.equal(
        (await passkeySignIn(later.flow_id, alice.device.get(later.options, passkey, { counter: 11 }))).status,
        200,
      );
    });

    it("an answer naming another user's handle, or an unknown passkey, is refused", async () => {
      const { flow_id, options } = await signInOptions();
      const handle = Buffer.from(bob.id).toString('base64url');
      assertError(
        await passkeySignIn(flow_id, alice.device.get(options, passkey, { userHandle: handle })),
        401,
        'passkey_not_accepted',
      );
      const stranger = new SoftAuthenticator(base);
      const made = stranger.create({ challenge: 'AAAA', user: { id: handle } });
      const unknown = await signInOptions();
      assertError(
        await passkeySignIn(unknown.flow_id, stranger.get(unknown.options, made.id)),
        401,
        'passkey_not_accepted',
      );
    });

    it('sign-in from another origin is refused (login CSRF)', async () => {
      const { flow_id, options } = await signInOptions();
      const res = await api(base, 'POST', '/v1/auth/passkey', {
        body: { flow_id, response: alice.device.get(options, passkey) },
        headers: { origin: 'https://evil.example' },
      });
      assertError(res, 403, 'csrf_failed');
      assertError(
        await api(base, 'POST', '/v1/auth/passkey/options', { headers: { origin: 'https://evil.example' } }),
        403,
        'csrf_failed',
      );
    });

    it('failures count toward the login limits: five lock the account from this address (429 with Retry-After)', async () => {
      for (let i = 0; i < 5; i++) {
        const { flow_id, options } = await signInOptions();
        const res = await passkeySignIn(flow_id, alice.device.get(options, passkey, { userVerified: false }));
        assertError(res, 401, 'passkey_not_accepted');
      }
      const { flow_id, options } = await signInOptions();
      const locked = await passkeySignIn(flow_id, alice.device.get(options, passkey));
      assertError(locked, 429, 'too_many_attempts');
      assert.match(locked.headers.get('retry-after') ?? '', /^\d+$/);
      const password = await api(base, 'POST', '/v1/auth/login', {
        body: { email: alice.email, password: alice.password },
      });
      assertError(password, 429, 'too_many_attempts');
    });

    it('a tenant that signs in through its SSO (sso_only) takes a passkey from its admins only (403 sso_required)', async () => {
      const org = await setupTenant(server);
      const email = 'sso-member@example.com';
      const added = await api(base, 'POST', '/v1/users', { token: org.admin_token, body: { email, role: 'member' } });
      const token = new URL(added.json.set_password_url).hash.slice(1);
      await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: 'member password 123' } });
      const memberSession = await signIn(base, email, 'member password 123');
      const device = new SoftAuthenticator(base);
      const started = await asBrowser(base, memberSession, 'POST', '/v1/me/passkeys/options');
      const made = await asBrowser(base, memberSession, 'POST', '/v1/me/passkeys', {
        body: { flow_id: started.json.flow_id, name: 'Member key', response: device.create(started.json.options) },
      });
      assert.equal(made.status, 201, made.text);
      const adminDevice = new SoftAuthenticator(base);
      const adminPasskey = await addPasskey({
        token: org.admin_token,
        email: org.admin_email,
        password: org.admin_password,
        id: '',
        device: adminDevice,
      });
      await server.deps.db.updateTable('tenants').set({ sso_only: 1 }).where('id', '=', org.tenant_id).execute();

      const one = await signInOptions();
      const refused = await passkeySignIn(one.flow_id, device.get(one.options, made.json.id));
      assertError(refused, 403, 'sso_required');
      assert.equal(sessionSetCookie(refused), undefined);
      const two = await signInOptions();
      const admin = await passkeySignIn(two.flow_id, adminDevice.get(two.options, adminPasskey));
      assert.equal(admin.status, 200, admin.text);
      assert.equal(admin.json.user.email, org.admin_email);
    });

    it("a deactivated user's passkey signs in no more", async () => {
      const carol = await setupTenant(server);
      const who = {
        token: carol.admin_token,
        email: carol.admin_email,
        password: carol.admin_password,
        id: (await signIn(base, carol.admin_email, carol.admin_password)).login.user.id,
        device: new SoftAuthenticator(base),
      };
      const id = await addPasskey(who);
      await server.deps.db
        .updateTable('users')
        .set({ deactivated_at: server.clock.now().toISOString() })
        .where('id', '=', who.id)
        .execute();
      const { flow_id, options } = await signInOptions();
      assertError(await passkeySignIn(flow_id, who.device.get(options, id)), 401, 'passkey_not_accepted');
    });
  });

  describe('second factor after a password', () => {
    let alicePasskey: string;
    let bobPasskey: string;
    before(async () => {
      alicePasskey = await addPasskey(alice, 'Second factor');
      bobPasskey = await addPasskey(bob, 'Bob key');
    });

    async function factorOptions(mfaToken: string) {
      return api(base, 'POST', '/v1/auth/login/mfa/passkey/options', {
        body: { mfa_token: mfaToken },
        headers: { origin: base },
      });
    }
    function answer(mfaToken: string, response: Loose) {
      return api(base, 'POST', '/v1/auth/login/mfa/passkey', {
        body: { mfa_token: mfaToken, response },
        headers: { origin: base },
      });
    }

    it("options allow the user's own passkeys; the right answer opens the session once (method passkey)", async () => {
      const token = await passwordStep(alice);
      const opts = await factorOptions(token);
      assert.equal(opts.status, 200, opts.text);
      const allowed = opts.json.options.allowCredentials.map((c: Loose) => c.id);
      assert.ok(allowed.includes(alicePasskey));
      assert.ok(!allowed.includes(bobPasskey));
      const res = await answer(token, alice.device.get(opts.json.options, alicePasskey));
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.user.id, alice.id);
      assert.equal(res.json.method, 'passkey');
      assert.match(sessionSetCookie(res) ?? '', /^guard_session=gss_/);
      // The password step is used: neither new options nor another answer.
      assertError(await factorOptions(token), 401, 'mfa_expired');
      const replay = await answer(token, alice.device.get(opts.json.options, alicePasskey));
      assertError(replay, 401, 'mfa_expired');
    });

    it("another user's passkey, another step's challenge or a replayed answer is refused, and five failures end the step", async () => {
      const token = await passwordStep(alice);
      // Bob's passkey answering Alice's challenge.
      const opts = await factorOptions(token);
      assertError(await answer(token, bob.device.get(opts.json.options, bobPasskey)), 401, 'passkey_not_accepted');
      // A challenge of another password step (Bob's).
      const bobToken = await passwordStep(bob);
      const bobOpts = await factorOptions(bobToken);
      assertError(
        await answer(token, alice.device.get(bobOpts.json.options, alicePasskey)),
        401,
        'passkey_not_accepted',
      );
      // A challenge of the password-less sign-in.
      const free = await signInOptions();
      assertError(await answer(token, alice.device.get(free.options, alicePasskey)), 401, 'passkey_not_accepted');
      // The challenge of the first options, already taken by Bob's failed answer.
      assertError(await answer(token, alice.device.get(opts.json.options, alicePasskey)), 401, 'passkey_not_accepted');
      // The fifth failure ends the step: even a right answer is too late.
      const last = await factorOptions(token);
      assertError(
        await answer(token, alice.device.get(last.json.options, alicePasskey, { challenge: 'AAAA' })),
        401,
        'passkey_not_accepted',
      );
      const after5 = await factorOptions(token);
      assertError(after5, 401, 'mfa_expired');
    });

    it('a second-factor challenge does not sign in without the password', async () => {
      const token = await passwordStep(alice);
      const opts = await factorOptions(token);
      const response = alice.device.get(opts.json.options, alicePasskey);
      // Its flow is keyed by the challenge: named as a password-less flow id, it is still refused.
      assertError(await passkeySignIn(opts.json.options.challenge, response), 401, 'passkey_not_accepted');
      const free = await signInOptions();
      assertError(await passkeySignIn(free.flow_id, response), 401, 'passkey_not_accepted');
    });

    it('a password changed meanwhile ends the step (401), and a user without passkeys gets 400 no_passkeys', async () => {
      const token = await passwordStep(alice);
      const opts = await factorOptions(token);
      const original = await server.deps.db
        .selectFrom('users')
        .select('password_hash')
        .where('id', '=', alice.id)
        .executeTakeFirstOrThrow();
      await server.deps.db
        .updateTable('users')
        .set({ password_hash: await hashPassword('a brand new password 1') })
        .where('id', '=', alice.id)
        .execute();
      try {
        assertError(await answer(token, alice.device.get(opts.json.options, alicePasskey)), 401, 'invalid_credentials');
      } finally {
        await server.deps.db
          .updateTable('users')
          .set({ password_hash: original.password_hash })
          .where('id', '=', alice.id)
          .execute();
      }
      const dave = await setupTenant(server);
      const daveId = (await signIn(base, dave.admin_email, dave.admin_password)).login.user.id;
      // Dave holds an authenticator app (the sealed secret's content does not matter here), no passkey.
      await server.deps.db
        .updateTable('users')
        .set({ totp_secret_sealed: 'v1.x.y.z' })
        .where('id', '=', daveId)
        .execute();
      const first = await api(base, 'POST', '/v1/auth/login', {
        body: { email: dave.admin_email, password: dave.admin_password },
        headers: { origin: base },
      });
      assert.deepEqual(first.json.methods, ['totp', 'recovery_code']);
      const daveToken = first.json.mfa_token;
      assertError(await factorOptions(daveToken), 400, 'no_passkeys');
      assertError(await factorOptions('not-a-token'), 401, 'mfa_expired');
    });
  });
});
