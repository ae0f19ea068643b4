// SAML 2.0 single sign-on (issue 22, item 4) against the real server on loopback and a real
// IdP (saml-idp.ts: AuthnRequests by HTTP-Redirect, responses signed with xml-crypto, posted
// back through its HTML form): an admin configures the connection (checked: URL, certificates,
// domains unique across tenants); a sign-in goes start → IdP → ACS → session cookie, creating
// the member just in time and making admins by group; and every forged, stale, misdirected or
// replayed response is refused back to the console with ?sso_error=<code> and no session.

import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { copyFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  type ApiResult,
  addUser,
  api,
  isErrorShape,
  type Loose,
  makeTempDir,
  setupTenant,
  startTestServer,
  type TestServer,
} from './harness.ts';
import { makeTestTls } from './loopback.ts';
import {
  type AuthnRequestSeen,
  formOf,
  makeSigningKey,
  type SamlIdp,
  type SigningKey,
  startSamlIdp,
} from './saml-idp.ts';
import { databaseFlags, ON_POSTGRES } from './test-database.ts';

function assertError(res: ApiResult, status: number, code: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  assert.equal(res.json.error.code, code, res.text);
}

describe('SAML single sign-on', () => {
  let server: TestServer;
  let base: string;
  let a: Awaited<ReturnType<typeof setupTenant>>;
  let b: Awaited<ReturnType<typeof setupTenant>>;
  let idp: SamlIdp;
  let otherIdp: SigningKey;

  const connection = (overrides: Record<string, unknown> = {}) => ({
    idp_entity_id: idp.entityId,
    sso_url: idp.ssoUrl,
    idp_certificates: [idp.signing.cert],
    email_domains: ['example.com'],
    admin_group: 'guard-admins',
    groups_attribute: 'groups',
    ...overrides,
  });

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
    b = await setupTenant(server);
    [idp, otherIdp] = await Promise.all([startSamlIdp({ now: server.clock.now }), makeSigningKey('Another IdP')]);
    const put = await api(base, 'PUT', '/v1/tenant/saml', { token: a.admin_token, body: connection() });
    assert.equal(put.status, 200, put.text);
  });
  after(async () => {
    await idp?.close();
    await server?.cleanup();
  });

  /** The guard_sso cookie of the last start: the browser that started a sign-in finishes it. */
  let binding = '';

  /** GET /v1/auth/saml/start as the browser does: it keeps the guard_sso cookie set there. */
  async function startSaml(email: string, at = base): Promise<ApiResult> {
    const res = await api(at, 'GET', `/v1/auth/saml/start?email=${encodeURIComponent(email)}`);
    const set = res.headers.getSetCookie().find((c) => c.startsWith('guard_sso='));
    if (set) binding = set.split(';')[0];
    return res;
  }

  /**
   * Where a verified answer goes: the ACS sends the browser on to /v1/auth/saml/finish, which
   * opens the session with the browser's guard_sso cookie. Followed as the browser would (on
   * `at`: any replica); any other answer is returned as it is.
   */
  async function finish(acs: ApiResult, at = base, cookie = binding): Promise<ApiResult> {
    const location = acs.headers.get('location') ?? '';
    if (acs.status !== 303 || !location.includes('/v1/auth/saml/finish?')) return acs;
    const url = new URL(location);
    return api(at, 'GET', `${url.pathname}${url.search}`, { headers: { cookie } });
  }

  /** The browser's steps: start → the IdP's page → its form posted to the ACS (with `knobs` for the IdP). */
  async function signInThroughIdp(
    email: string,
    knobs: SamlIdp['next'] = {},
  ): Promise<{ acs: ApiResult; form: { action: string; fields: Record<string, string> }; request: AuthnRequestSeen }> {
    const start = await startSaml(email);
    assert.equal(start.status, 302, start.text);
    const location = start.headers.get('location') ?? '';
    assert.ok(location.startsWith(`${idp.ssoUrl}?`), location);
    idp.next = knobs;
    const page = await fetch(location);
    assert.equal(page.status, 200);
    const form = formOf(await page.text());
    const request = idp.requests.at(-1) as AuthnRequestSeen;
    return { acs: await postForm(form), form, request };
  }

  const postForm = async (form: { action: string; fields: Record<string, string> }) =>
    finish(
      await api(base, 'POST', new URL(form.action).pathname, {
        rawBody: new URLSearchParams(form.fields).toString(),
        // A cross-site form post, as the IdP's page makes it (SameSite cookies stay behind).
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: idp.url },
      }),
    );

  const sessionCookie = (res: ApiResult) =>
    res.headers
      .getSetCookie()
      .find((c) => c.startsWith('guard_session='))
      ?.split(';')[0];

  /** A refusal: 303 back to the console's sign-in with ?sso_error=code, and no session. */
  function assertRefused(res: ApiResult, code: string) {
    assert.equal(res.status, 303, res.text);
    assert.equal(res.headers.get('location'), `${base}/console/?sso_error=${code}`);
    assert.equal(sessionCookie(res), undefined, 'no session cookie');
  }

  const userRow = (email: string, tenantId = a.tenant_id) =>
    server.deps.db
      .selectFrom('users')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('email', '=', email)
      .executeTakeFirst();

  describe('the connection', () => {
    it('GET shows the SP facts to give the IdP and the connection with its certificates described', async () => {
      const res = await api(base, 'GET', '/v1/tenant/saml', { token: a.admin_token });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.service_provider, {
        entity_id: `${base}/v1/auth/saml/metadata`,
        acs_url: `${base}/v1/auth/saml/acs`,
        metadata_url: `${base}/v1/auth/saml/metadata`,
        name_id_format: 'urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress',
      });
      const c = res.json.connection;
      assert.equal(c.idp_entity_id, idp.entityId);
      assert.equal(c.sso_url, idp.ssoUrl);
      assert.deepEqual(c.email_domains, ['example.com']);
      assert.equal(c.admin_group, 'guard-admins');
      assert.equal(c.groups_attribute, 'groups');
      assert.equal(c.email_attribute, null);
      assert.equal(c.idp_certificates.length, 1);
      const x = new X509Certificate(idp.signing.cert);
      assert.equal(c.idp_certificates[0].sha256_fingerprint, x.fingerprint256);
      assert.equal(c.idp_certificates[0].subject, 'CN=Test SAML IdP');
      assert.equal(c.idp_certificates[0].pem.trim(), idp.signing.cert.trim());
    });

    it('another tenant without one sees null and the same SP facts; members may not read or change it', async () => {
      const res = await api(base, 'GET', '/v1/tenant/saml', { token: b.admin_token });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.connection, null);
      assert.equal(res.json.service_provider.acs_url, `${base}/v1/auth/saml/acs`);
      const memberToken = await addUser(server, a.tenant_id, 'member');
      assertError(await api(base, 'GET', '/v1/tenant/saml', { token: memberToken }), 403, 'forbidden');
      assertError(
        await api(base, 'PUT', '/v1/tenant/saml', { token: memberToken, body: connection() }),
        403,
        'forbidden',
      );
      assertError(await api(base, 'GET', '/v1/tenant/saml'), 401, 'unauthorized');
    });

    it('refuses an sso_url that is not https (http only on loopback)', async () => {
      for (const sso_url of [
        'http://idp.example.com/sso',
        'ftp://127.0.0.1/sso',
        'not a url',
        'https://u:p@idp.example/sso',
      ])
        assertError(
          await api(base, 'PUT', '/v1/tenant/saml', { token: b.admin_token, body: connection({ sso_url }) }),
          400,
          'invalid_sso_url',
        );
    });

    it('refuses what is not an X.509 certificate with an RSA key, and more than three', async () => {
      const ec = await makeTestTls();
      for (const cert of ['hello', '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', ec.cert]) {
        const res = await api(base, 'PUT', '/v1/tenant/saml', {
          token: b.admin_token,
          body: connection({ idp_certificates: [cert], email_domains: ['b.example'] }),
        });
        assertError(res, 400, 'invalid_certificate');
      }
      const four = Array(4).fill(idp.signing.cert);
      assertError(
        await api(base, 'PUT', '/v1/tenant/saml', {
          token: b.admin_token,
          body: connection({ idp_certificates: four, email_domains: ['b.example'] }),
        }),
        400,
        'invalid_request',
      );
    });

    it('takes a certificate as the bare base64 of its DER, as some IdPs show it', async () => {
      const bare = idp.signing.cert.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '');
      const res = await api(base, 'PUT', '/v1/tenant/saml', {
        token: b.admin_token,
        body: connection({ idp_certificates: [bare, otherIdp.cert], email_domains: ['b.example'] }),
      });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.connection.idp_certificates.length, 2);
      assert.equal(res.json.connection.idp_certificates[0].pem.trim(), idp.signing.cert.trim());
    });

    it('refuses an email domain another tenant signs in with (409 domain_taken), and a malformed one', async () => {
      assertError(
        await api(base, 'PUT', '/v1/tenant/saml', {
          token: b.admin_token,
          body: connection({ email_domains: ['b.example', 'EXAMPLE.com'] }),
        }),
        409,
        'domain_taken',
      );
      assertError(
        await api(base, 'PUT', '/v1/tenant/saml', {
          token: b.admin_token,
          body: connection({ email_domains: ['not a domain'] }),
        }),
        400,
        'invalid_domain',
      );
      // Tenant b's earlier connection is as it was.
      const res = await api(base, 'GET', '/v1/tenant/saml', { token: b.admin_token });
      assert.deepEqual(res.json.connection.email_domains, ['b.example']);
    });

    it('DELETE removes it (its domain is free again); every change is audited', async () => {
      const del = await api(base, 'DELETE', '/v1/tenant/saml', { token: b.admin_token });
      assert.equal(del.status, 204, del.text);
      assert.equal((await api(base, 'GET', '/v1/tenant/saml', { token: b.admin_token })).json.connection, null);
      assertError(await api(base, 'DELETE', '/v1/tenant/saml', { token: b.admin_token }), 404, 'not_found');
      const domains = await server.deps.db
        .selectFrom('sso_domains')
        .selectAll()
        .where('tenant_id', '=', b.tenant_id)
        .execute();
      assert.deepEqual(domains, []);
      const audit = await server.deps.db
        .selectFrom('audit_log')
        .select(['action', 'actor_role'])
        .where('tenant_id', '=', b.tenant_id)
        .where('action', 'like', 'saml.%')
        .orderBy('at')
        .execute();
      assert.deepEqual(
        audit.map((r) => r.action),
        ['saml.update', 'saml.delete'],
      );
      assert.ok(audit.every((r) => r.actor_role === 'admin'));
    });
  });

  describe('the service provider', () => {
    it('serves its metadata: entity ID, ACS URL (HTTP-POST), NameID emailAddress, signed assertions wanted', async () => {
      const res = await api(base, 'GET', '/v1/auth/saml/metadata');
      assert.equal(res.status, 200, res.text);
      assert.match(res.headers.get('content-type') ?? '', /^application\/samlmetadata\+xml/);
      assert.ok(res.text.includes(`entityID="${base}/v1/auth/saml/metadata"`), res.text);
      assert.ok(res.text.includes(`Location="${base}/v1/auth/saml/acs"`), res.text);
      assert.ok(res.text.includes('urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST'));
      assert.ok(res.text.includes('WantAssertionsSigned="true"'));
      assert.ok(res.text.includes('urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress'));
    });

    it('start sends an AuthnRequest to the IdP by the HTTP-Redirect binding, for our ACS URL', async () => {
      const start = await startSaml('Ann@Example.com');
      assert.equal(start.status, 302, start.text);
      const location = new URL(start.headers.get('location') ?? '');
      assert.equal(`${location.origin}${location.pathname}`, idp.ssoUrl);
      assert.ok(location.searchParams.get('SAMLRequest'));
      const page = await fetch(location);
      assert.equal(page.status, 200);
      const seen = idp.requests.at(-1) as AuthnRequestSeen;
      assert.equal(seen.acsUrl, `${base}/v1/auth/saml/acs`);
      assert.equal(seen.issuer, `${base}/v1/auth/saml/metadata`);
      assert.match(seen.id, /^_[0-9a-f]+$/);
    });

    it('start with an email of no SAML connection goes back to the console with sso_not_configured', async () => {
      const start = await startSaml('ann@elsewhere.org');
      assert.equal(start.status, 302);
      assert.equal(start.headers.get('location'), `${base}/console/?sso_error=sso_not_configured`);
    });
  });

  describe('signing in', () => {
    it('a new user of an allowed domain is created as a member and signed in with a session cookie', async () => {
      idp.user = { email: 'Newcomer@Example.com', groups: ['engineering'] };
      const { acs } = await signInThroughIdp('newcomer@example.com');
      assert.equal(acs.status, 303, acs.text);
      assert.equal(acs.headers.get('location'), `${base}/console/`);
      const cookie = sessionCookie(acs);
      assert.ok(cookie, 'a session cookie');
      assert.match(acs.headers.getSetCookie().join('\n'), /HttpOnly; SameSite=Strict/);
      const session = await api(base, 'GET', '/v1/auth/session', { headers: { cookie } });
      assert.equal(session.status, 200, session.text);
      assert.equal(session.json.user.email, 'newcomer@example.com');
      assert.equal(session.json.user.role, 'member');
      assert.equal(session.json.user.tenant_id, a.tenant_id);
      assert.equal(session.json.method, 'saml');
      const created = await server.deps.db
        .selectFrom('audit_log')
        .select(['actor_id', 'actor_role'])
        .where('action', '=', 'user.create')
        .where('target', '=', session.json.user.id)
        .executeTakeFirstOrThrow();
      assert.deepEqual({ ...created }, { actor_id: 'sso:saml', actor_role: 'sso' });
    });

    it('a member of the admin group is an admin, and leaves the role when the IdP drops the group', async () => {
      idp.user = { email: 'lead@example.com', groups: ['engineering', 'guard-admins'] };
      const first = await signInThroughIdp('lead@example.com');
      assert.equal(first.acs.status, 303);
      assert.equal((await userRow('lead@example.com'))?.role, 'admin');
      idp.user = { email: 'lead@example.com', groups: ['engineering'] };
      const second = await signInThroughIdp('lead@example.com');
      assert.ok(sessionCookie(second.acs));
      assert.equal((await userRow('lead@example.com'))?.role, 'member');
    });

    it('takes the email from the configured attribute when the NameID is not an email', async () => {
      const put = await api(base, 'PUT', '/v1/tenant/saml', {
        token: a.admin_token,
        body: connection({ email_attribute: 'mail' }),
      });
      assert.equal(put.status, 200, put.text);
      try {
        idp.user = { email: 'ignored' };
        const { acs } = await signInThroughIdp('attr@example.com', {
          nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
          email: 'a1b2c3',
          attributes: { mail: ['Attr@Example.com'] },
        });
        assert.ok(sessionCookie(acs), acs.headers.get('location') ?? '');
        assert.ok(await userRow('attr@example.com'));
        // Without the attribute, a NameID that is not an email signs no one in.
        const none = await signInThroughIdp('attr@example.com', {
          nameIdFormat: 'urn:oasis:names:tc:SAML:2.0:nameid-format:persistent',
          email: 'a1b2c3',
        });
        assertRefused(none.acs, 'no_email');
      } finally {
        await api(base, 'PUT', '/v1/tenant/saml', { token: a.admin_token, body: connection() });
      }
    });

    it('the ACS is not CSRF-checked: a cross-site post carrying a session cookie still signs in', async () => {
      idp.user = { email: 'second-login@example.com' };
      const first = await signInThroughIdp('second-login@example.com');
      const cookie = sessionCookie(first.acs);
      assert.ok(cookie);
      const start = await startSaml('second-login@example.com');
      const form = formOf(await (await fetch(start.headers.get('location') ?? '')).text());
      const again = await finish(
        await api(base, 'POST', '/v1/auth/saml/acs', {
          rawBody: new URLSearchParams(form.fields).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded', origin: idp.url, cookie },
        }),
        base,
        `${cookie}; ${binding}`,
      );
      assert.equal(again.status, 303, again.text);
      assert.ok(sessionCookie(again), 'a new session');
      assert.notEqual(sessionCookie(again), cookie);
    });

    it('accepts an assertion within the 60 s clock skew', async () => {
      idp.user = { email: 'skew@example.com' };
      const late = await signInThroughIdp('skew@example.com', { notOnOrAfterMs: -30_000, notBeforeMs: -120_000 });
      assert.ok(sessionCookie(late.acs), late.acs.headers.get('location') ?? '');
      const early = await signInThroughIdp('skew@example.com', { notBeforeMs: 30_000 });
      assert.ok(sessionCookie(early.acs), early.acs.headers.get('location') ?? '');
    });
  });

  describe('refused', () => {
    before(() => {
      idp.user = { email: 'victim@example.com' };
    });

    it('a tampered assertion (bad signature)', async () => {
      const { acs } = await signInThroughIdp('victim@example.com', {
        tamper: (xml) => xml.replace('>victim@example.com<', '>mallory@example.com<'),
      });
      assertRefused(acs, 'invalid_response');
      assert.equal(await userRow('mallory@example.com'), undefined);
    });

    it('an unsigned assertion', async () => {
      assertRefused((await signInThroughIdp('victim@example.com', { sign: 'none' })).acs, 'invalid_response');
    });

    it('a signed response whose assertion is not signed itself', async () => {
      assertRefused((await signInThroughIdp('victim@example.com', { sign: 'response' })).acs, 'invalid_response');
    });

    it('an assertion signed with the certificate of another IdP', async () => {
      assertRefused((await signInThroughIdp('victim@example.com', { signingKey: otherIdp })).acs, 'invalid_response');
    });

    it('an assertion from another issuer', async () => {
      assertRefused(
        (await signInThroughIdp('victim@example.com', { issuer: 'https://evil.example/idp' })).acs,
        'wrong_issuer',
      );
    });

    it('an assertion for another audience', async () => {
      assertRefused(
        (await signInThroughIdp('victim@example.com', { audience: 'https://other-sp.example/metadata' })).acs,
        'invalid_response',
      );
    });

    it('an assertion for another recipient', async () => {
      assertRefused(
        (await signInThroughIdp('victim@example.com', { recipient: 'https://other-sp.example/acs' })).acs,
        'wrong_recipient',
      );
    });

    it('an expired assertion (past NotOnOrAfter by more than the skew)', async () => {
      assertRefused(
        (await signInThroughIdp('victim@example.com', { notBeforeMs: -600_000, notOnOrAfterMs: -61_000 })).acs,
        'expired',
      );
    });

    it('an assertion not yet valid (NotBefore beyond the skew)', async () => {
      assertRefused((await signInThroughIdp('victim@example.com', { notBeforeMs: 120_000 })).acs, 'not_yet_valid');
    });

    it('a response to a request this server never made (unknown InResponseTo)', async () => {
      assertRefused(
        (await signInThroughIdp('victim@example.com', { inResponseTo: '_0123456789abcdef0123456789abcdef' })).acs,
        'unknown_request',
      );
    });

    it("an attacker's own answer posted into a victim's browser signs no one in (login CSRF)", async () => {
      // The attacker starts a sign-in with their own account and captures the IdP's form; the
      // victim's browser posts it (a page of the attacker's), but holds no guard_sso of that start.
      idp.user = { email: 'mallory@example.com' };
      const start = await startSaml('mallory@example.com');
      const form = formOf(await (await fetch(start.headers.get('location') ?? '')).text());
      const acs = await api(base, 'POST', '/v1/auth/saml/acs', {
        rawBody: new URLSearchParams(form.fields).toString(),
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin: idp.url },
      });
      assert.equal(acs.status, 303, acs.text);
      assertRefused(await finish(acs, base, ''), 'other_browser');
      // The finish step is used once: the attacker's own browser cannot take it back either.
      assertRefused(await finish(acs), 'unknown_request');
    });

    it('a response to a request whose 10 minutes have passed', async () => {
      const start = await startSaml('victim@example.com');
      const page = await fetch(start.headers.get('location') ?? '');
      const form = formOf(await page.text());
      server.clock.advance(10 * 60_000 + 1);
      try {
        assertRefused(await postForm(form), 'unknown_request');
      } finally {
        server.clock.advance(-(10 * 60_000 + 1));
      }
    });

    it('an IdP-initiated response (no InResponseTo)', async () => {
      const samlResponse = idp.respond(undefined, {
        inResponseTo: null,
        recipient: `${base}/v1/auth/saml/acs`,
        audience: `${base}/v1/auth/saml/metadata`,
      });
      assertRefused(
        await postForm({ action: `${base}/v1/auth/saml/acs`, fields: { SAMLResponse: samlResponse } }),
        'unsolicited_response',
      );
    });

    it('a replayed response: the request it answers was used', async () => {
      idp.user = { email: 'replay@example.com' };
      const first = await signInThroughIdp('replay@example.com');
      assert.ok(sessionCookie(first.acs));
      assertRefused(await postForm(first.form), 'unknown_request');
    });

    it('a replayed assertion: its ID was seen, even inside a fresh response to a new request', async () => {
      idp.user = { email: 'replay@example.com' };
      const assertionId = '_replayed0123456789abcdef01234567';
      const first = await signInThroughIdp('replay@example.com', { assertionId });
      assert.ok(sessionCookie(first.acs));
      assertRefused((await signInThroughIdp('replay@example.com', { assertionId })).acs, 'replayed_assertion');
    });

    it('an email outside the connection’s domains', async () => {
      idp.user = { email: 'someone@elsewhere.org' };
      assertRefused((await signInThroughIdp('victim@example.com')).acs, 'domain_not_allowed');
      assert.equal(await userRow('someone@elsewhere.org'), undefined);
    });

    it('a deactivated user', async () => {
      idp.user = { email: 'gone@example.com' };
      assert.ok(sessionCookie((await signInThroughIdp('gone@example.com')).acs));
      await server.deps.db
        .updateTable('users')
        .set({ deactivated_at: server.clock.now().toISOString() })
        .where('tenant_id', '=', a.tenant_id)
        .where('email', '=', 'gone@example.com')
        .execute();
      assertRefused((await signInThroughIdp('gone@example.com')).acs, 'user_deactivated');
    });

    it('a form post that is not SAML at all', async () => {
      assertRefused(
        await postForm({ action: `${base}/v1/auth/saml/acs`, fields: { SAMLResponse: 'bm90IHhtbA==' } }),
        'invalid_response',
      );
    });

    it('a form body beyond the size limit (413), or a SAMLResponse beyond its length (400)', async () => {
      const huge = await postForm({
        action: `${base}/v1/auth/saml/acs`,
        fields: { SAMLResponse: 'A'.repeat(900_000) },
      });
      assertError(huge, 413, 'body_too_large');
      const long = await postForm({
        action: `${base}/v1/auth/saml/acs`,
        fields: { SAMLResponse: 'A'.repeat(300_000) },
      });
      assertError(long, 400, 'invalid_request');
    });
  });

  // Behind one public URL, the AuthnRequest may leave through one replica and its answer come
  // back through another: the request and the assertion IDs are kept in the database. On
  // SQLite (one process per data dir) both "replicas" are the one server.
  it('a sign-in started on one replica finishes on another, and its replay is refused on the first', async () => {
    let replica: TestServer | undefined;
    try {
      if (ON_POSTGRES) {
        const dataDir = await makeTempDir('saml-replica');
        await copyFile(join(server.dataDir, 'master.key'), join(dataDir, 'master.key'));
        const shared = (await databaseFlags(server.dataDir)) as Record<string, string>;
        replica = await startTestServer({
          dataDir,
          clock: server.clock,
          flags: { ...shared, migrate: 'true', 'public-url': base },
        });
      }
      idp.user = { email: 'roaming@example.com' };
      const start = await startSaml('roaming@example.com');
      const form = formOf(await (await fetch(start.headers.get('location') ?? '')).text());
      // The answer is checked by the other replica, and the sign-in finished by the first.
      const acs = await finish(
        await api(replica?.url ?? base, 'POST', '/v1/auth/saml/acs', {
          rawBody: new URLSearchParams(form.fields).toString(),
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        }),
      );
      assert.equal(acs.status, 303, acs.text);
      const cookie = sessionCookie(acs);
      assert.ok(cookie, acs.headers.get('location') ?? '');
      const session = await api(base, 'GET', '/v1/auth/session', { headers: { cookie } });
      assert.equal(session.json.user.email, 'roaming@example.com');
      assertRefused(await postForm(form), 'unknown_request');
    } finally {
      if (replica) {
        await replica.stop();
        await rm(replica.dataDir, { recursive: true, force: true });
      }
    }
  });

  it('the member signed in through SAML is seen by the tenant only', async () => {
    const users = await api(base, 'GET', '/v1/users', { token: b.admin_token });
    assert.ok(!users.json.users.some((u: Loose) => u.email === 'newcomer@example.com'));
  });
});
