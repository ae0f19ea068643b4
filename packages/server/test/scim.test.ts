// SCIM 2.0 provisioning (issue 22, item 5) against the real server on loopback, on both
// engines: an admin makes a tenant's SCIM token (shown once, stored as SHA-256); an identity
// provider with it creates, finds, pages, replaces, patches and deletes users and groups at
// /scim/v2; `active: false` ends the user's live console session and API token at once and
// reactivation lets them sign in again; membership of the tenant's SSO admin group makes admins,
// and leaving it members, but never demotes the last admin; another tenant's token sees nothing
// of this tenant; a user token opens nothing at /scim/v2 and a SCIM token nothing at /v1; and
// PATCH bodies as Okta and Microsoft Entra ID send them are understood.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { hashSecret } from '../src/auth/secrets.ts';
import { asBrowser, type Browser, signIn } from './console-session.ts';
import { type ApiResult, api, type Loose, setupTenant, sleep, startTestServer, type TestServer } from './harness.ts';

const ERROR = 'urn:ietf:params:scim:api:messages:2.0:Error';
const LIST = 'urn:ietf:params:scim:api:messages:2.0:ListResponse';
const PATCH_OP = 'urn:ietf:params:scim:api:messages:2.0:PatchOp';
const USER = 'urn:ietf:params:scim:schemas:core:2.0:User';
const GROUP = 'urn:ietf:params:scim:schemas:core:2.0:Group';
const PASSWORD = 'correct horse battery staple';
/** Rounds of each race below. */
const ROUNDS = 10;
/** Cases of the property test below. */
const FUZZ_RUNS = 150;

type Tenant = Awaited<ReturnType<typeof setupTenant>>;

function assertScimError(res: ApiResult, status: number, scimType?: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.match(res.headers.get('content-type') ?? '', /^application\/scim\+json/);
  assert.deepEqual(res.json.schemas, [ERROR], res.text);
  assert.equal(res.json.status, String(status), res.text);
  assert.equal(typeof res.json.detail, 'string', res.text);
  assert.equal(res.json.scimType, scimType, res.text);
}

describe('SCIM provisioning', () => {
  let server: TestServer;
  let base: string;
  let a: Tenant;
  let b: Tenant;
  let scimA: string;
  let scimB: string;

  /** A request to /scim/v2 as an identity provider sends it: application/scim+json. */
  const scim = (token: string, method: string, path: string, body?: unknown, contentType = 'application/scim+json') =>
    api(base, method, `/scim/v2${path}`, {
      token,
      ...(body === undefined ? {} : { rawBody: JSON.stringify(body), headers: { 'content-type': contentType } }),
    });
  const makeToken = async (adminToken: string, name = 'Okta') => {
    const res = await api(base, 'POST', '/v1/tenant/scim-tokens', { token: adminToken, body: { name } });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };
  const createUser = async (token: string, userName: string, extra: Record<string, unknown> = {}) => {
    const res = await scim(token, 'POST', '/Users', { schemas: [USER], userName, ...extra });
    assert.equal(res.status, 201, res.text);
    return res.json;
  };
  const patch = (token: string, path: string, Operations: unknown[]) =>
    scim(token, 'PATCH', path, { schemas: [PATCH_OP], Operations });
  /** Gives a provisioned user a password (through the admin's one-time link) and signs them in. */
  const signInAs = async (t: Tenant, userId: string, email: string): Promise<Browser> => {
    const link = await api(base, 'POST', `/v1/users/${userId}/password-link`, { token: t.admin_token });
    assert.equal(link.status, 201, link.text);
    const token = link.json.set_password_url.slice(link.json.set_password_url.indexOf('#') + 1);
    const set = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: PASSWORD } });
    assert.equal(set.status, 204, set.text);
    return signIn(base, email, PASSWORD);
  };
  const roleOf = async (t: Tenant, id: string) =>
    (await api(base, 'GET', '/v1/users', { token: t.admin_token })).json.users.find((u: Loose) => u.id === id)?.role;

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
    b = await setupTenant(server);
    scimA = (await makeToken(a.admin_token)).token;
    scimB = (await makeToken(b.admin_token, 'Entra ID')).token;
  });
  after(() => server.cleanup());

  it('an admin makes a token shown once and stored as its hash, lists it with its last use, and revokes it', async () => {
    const made = await makeToken(a.admin_token, 'Rotation');
    assert.match(made.token, /^gsc_[A-Za-z0-9_-]{43}$/);
    assert.equal(made.base_url, `${base}/scim/v2`);
    assert.equal(made.last_used_at, null);
    const stored = await server.deps.db
      .selectFrom('scim_tokens')
      .selectAll()
      .where('id', '=', made.id)
      .executeTakeFirst();
    assert.equal(stored?.token_hash, hashSecret(made.token));
    assert.ok(!JSON.stringify(stored).includes(made.token), 'the token itself is not stored');

    const listed = await api(base, 'GET', '/v1/tenant/scim-tokens', { token: a.admin_token });
    assert.equal(listed.status, 200, listed.text);
    assert.equal(listed.json.base_url, `${base}/scim/v2`);
    const row = listed.json.tokens.find((t: Loose) => t.id === made.id);
    assert.deepEqual(row, { id: made.id, name: 'Rotation', created_at: made.created_at, last_used_at: null });
    assert.ok(!listed.text.includes('gsc_'), 'no token in the list');
    assert.equal(
      (await api(base, 'GET', '/v1/tenant/scim-tokens', { token: b.admin_token })).json.tokens.some(
        (t: Loose) => t.id === made.id,
      ),
      false,
      'another tenant does not see it',
    );

    assert.equal((await scim(made.token, 'GET', '/ServiceProviderConfig')).status, 200);
    const used = (await api(base, 'GET', '/v1/tenant/scim-tokens', { token: a.admin_token })).json.tokens.find(
      (t: Loose) => t.id === made.id,
    );
    assert.equal(used.last_used_at, server.clock.now().toISOString());

    // Another tenant's admin cannot revoke it; its own admin can, and it stops working at once.
    assert.equal(
      (await api(base, 'DELETE', `/v1/tenant/scim-tokens/${made.id}`, { token: b.admin_token })).status,
      404,
    );
    const revoked = await api(base, 'DELETE', `/v1/tenant/scim-tokens/${made.id}`, { token: a.admin_token });
    assert.equal(revoked.status, 204, revoked.text);
    assertScimError(await scim(made.token, 'GET', '/Users'), 401);
    assert.equal(
      (await api(base, 'DELETE', `/v1/tenant/scim-tokens/${made.id}`, { token: a.admin_token })).status,
      404,
    );

    const audit = await api(base, 'GET', '/v1/audit?limit=200', { token: a.admin_token });
    const actions = audit.json.entries.filter((e: Loose) => e.target === made.id).map((e: Loose) => e.action);
    assert.deepEqual(actions.sort(), ['scim_token.create', 'scim_token.revoke']);
  });

  it('members may not manage SCIM tokens; names are bounded', async () => {
    const member = await createUser(scimA, 'token-member@example.com');
    const browser = await signInAs(a, member.id, 'token-member@example.com');
    assert.equal((await asBrowser(base, browser, 'GET', '/v1/tenant/scim-tokens')).status, 403);
    const post = await asBrowser(base, browser, 'POST', '/v1/tenant/scim-tokens', { body: { name: 'x' } });
    assert.equal(post.status, 403, post.text);
    const long = await api(base, 'POST', '/v1/tenant/scim-tokens', {
      token: a.admin_token,
      body: { name: 'x'.repeat(101) },
    });
    assert.equal(long.status, 400, long.text);
  });

  it('a user token is refused at /scim/v2, a SCIM token at /v1, and no token or a bad one at /scim/v2', async () => {
    const userToken = await scim(a.admin_token, 'GET', '/Users');
    assertScimError(userToken, 401);
    assert.match(userToken.headers.get('www-authenticate') ?? '', /^Bearer/);
    assertScimError(await api(base, 'GET', '/scim/v2/Users'), 401);
    assertScimError(await scim('gsc_not-a-real-token-at-all', 'GET', '/Users'), 401);
    for (const path of ['/v1/users', '/v1/tenant/settings', '/v1/tenant/scim-tokens', '/v1/me/tokens']) {
      const res = await api(base, 'GET', path, { token: scimA });
      assert.equal(res.status, 401, `${path}: ${res.status} ${res.text}`);
    }
  });

  it('discovery: ServiceProviderConfig, ResourceTypes and Schemas', async () => {
    const config = await scim(scimA, 'GET', '/ServiceProviderConfig');
    assert.equal(config.status, 200, config.text);
    assert.match(config.headers.get('content-type') ?? '', /^application\/scim\+json/);
    assert.equal(config.json.patch.supported, true);
    assert.equal(config.json.filter.supported, true);
    assert.equal(config.json.bulk.supported, false);
    assert.equal(config.json.authenticationSchemes[0].type, 'oauthbearertoken');
    const types = await scim(scimA, 'GET', '/ResourceTypes');
    assert.deepEqual(
      types.json.Resources.map((t: Loose) => [t.id, t.endpoint, t.schema]),
      [
        ['User', '/Users', USER],
        ['Group', '/Groups', GROUP],
      ],
    );
    assert.equal((await scim(scimA, 'GET', '/ResourceTypes/User')).json.id, 'User');
    const schemas = await scim(scimA, 'GET', '/Schemas');
    assert.deepEqual(
      schemas.json.Resources.map((s: Loose) => s.id),
      [USER, GROUP],
    );
    const user = await scim(scimA, 'GET', `/Schemas/${USER}`);
    assert.ok(
      user.json.attributes.some((x: Loose) => x.name === 'userName' && x.required && x.uniqueness === 'server'),
    );
    assertScimError(await scim(scimA, 'GET', '/Schemas/urn:nope'), 404);
    assertScimError(await scim(scimA, 'GET', '/Nothing'), 404);
  });

  it('creates, reads, replaces and deletes a user; userName is the email, lowercased and unique in the tenant', async () => {
    const created = await scim(scimA, 'POST', '/Users', {
      schemas: [USER],
      userName: 'Ada.Lovelace@Example.com',
      name: { givenName: 'Ada', familyName: 'Lovelace' },
      externalId: '00u1okta',
      emails: [{ value: 'ada.lovelace@example.com', type: 'work', primary: true }],
      active: true,
      title: 'Countess', // not kept, not refused
    });
    assert.equal(created.status, 201, created.text);
    assert.match(created.headers.get('content-type') ?? '', /^application\/scim\+json/);
    const ada = created.json;
    assert.equal(created.headers.get('location'), `${base}/scim/v2/Users/${ada.id}`);
    assert.deepEqual(ada, {
      schemas: [USER],
      id: ada.id,
      externalId: '00u1okta',
      userName: 'ada.lovelace@example.com',
      displayName: 'Ada Lovelace',
      name: { formatted: 'Ada Lovelace' },
      emails: [{ value: 'ada.lovelace@example.com', type: 'work', primary: true }],
      active: true,
      groups: [],
      meta: {
        resourceType: 'User',
        created: server.clock.now().toISOString(),
        location: `${base}/scim/v2/Users/${ada.id}`,
      },
    });
    // A provisioned user is a member of the tenant, with no password: they sign in through SSO.
    const listed = (await api(base, 'GET', '/v1/users', { token: a.admin_token })).json.users.find(
      (u: Loose) => u.id === ada.id,
    );
    assert.equal(listed.role, 'member');
    assert.equal(listed.has_password, false);

    assert.deepEqual((await scim(scimA, 'GET', `/Users/${ada.id}`)).json, ada);
    assertScimError(await scim(scimA, 'POST', '/Users', { userName: 'ADA.LOVELACE@example.com' }), 409, 'uniqueness');
    assertScimError(await scim(scimA, 'POST', '/Users', { userName: 'not an email' }), 400, 'invalidValue');
    assertScimError(await scim(scimA, 'POST', '/Users', { displayName: 'no userName' }), 400, 'invalidValue');
    assertScimError(
      await scim(scimA, 'POST', '/Users', { userName: 'x@example.com', active: 'maybe' }),
      400,
      'invalidValue',
    );
    assertScimError(
      await scim(scimA, 'POST', '/Users', { userName: 'x@example.com', displayName: 'x'.repeat(257) }),
      400,
      'invalidValue',
    );

    // PUT replaces: what is not sent is cleared (externalId), active defaults to true.
    const put = await scim(scimA, 'PUT', `/Users/${ada.id}`, {
      schemas: [USER],
      userName: 'ada@example.com',
      displayName: 'Ada King',
    });
    assert.equal(put.status, 200, put.text);
    assert.equal(put.json.userName, 'ada@example.com');
    assert.equal(put.json.displayName, 'Ada King');
    assert.equal(put.json.externalId, undefined);
    const other = await createUser(scimA, 'other@example.com');
    assertScimError(await scim(scimA, 'PUT', `/Users/${other.id}`, { userName: 'ada@example.com' }), 409, 'uniqueness');

    const gone = await scim(scimA, 'DELETE', `/Users/${ada.id}`);
    assert.equal(gone.status, 204, gone.text);
    assertScimError(await scim(scimA, 'GET', `/Users/${ada.id}`), 404);
    assertScimError(await scim(scimA, 'DELETE', `/Users/${ada.id}`), 404);
    assertScimError(await scim(scimA, 'PUT', `/Users/${ada.id}`, { userName: 'ada@example.com' }), 404);

    const audit = await api(base, 'GET', '/v1/audit?limit=200', { token: a.admin_token });
    const ofAda = audit.json.entries.filter((e: Loose) => e.target === ada.id);
    assert.deepEqual(ofAda.map((e: Loose) => e.action).sort(), ['user.create', 'user.delete', 'user.update']);
    assert.ok(ofAda.every((e: Loose) => /^scim:sct_/.test(e.actor_id) && e.actor_role === 'scim'));
  });

  it('accepts application/json too; refuses other media types, broken JSON and oversized bodies in SCIM’s error shape', async () => {
    const json = await scim(scimA, 'POST', '/Users', { userName: 'json@example.com' }, 'application/json');
    assert.equal(json.status, 201, json.text);
    const charset = await scim(
      scimA,
      'POST',
      '/Users',
      { userName: 'cs@example.com' },
      'application/scim+json; charset=utf-8',
    );
    assert.equal(charset.status, 201, charset.text);
    assertScimError(await scim(scimA, 'POST', '/Users', { userName: 'txt@example.com' }, 'text/plain'), 415);
    assertScimError(await scim(scimA, 'POST', '/Users', { userName: 'xml@example.com' }, 'application/xml'), 415);
    const broken = await api(base, 'POST', '/scim/v2/Users', {
      token: scimA,
      rawBody: '{"userName": ',
      headers: { 'content-type': 'application/scim+json' },
    });
    assertScimError(broken, 400, 'invalidSyntax');
    const huge = await api(base, 'POST', '/scim/v2/Users', {
      token: scimA,
      rawBody: JSON.stringify({ userName: 'big@example.com', displayName: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/scim+json' },
    });
    assertScimError(huge, 413);
    const many = await patch(
      scimA,
      `/Users/${json.json.id}`,
      Array.from({ length: 101 }, () => ({ op: 'replace', path: 'displayName', value: 'x' })),
    );
    assertScimError(many, 400, 'invalidValue');
  });

  it('filters by userName, externalId and emails.value; refuses any other filter as invalidFilter', async () => {
    const c = await createUser(scimA, 'Filter.Me@example.com', { externalId: 'ext-filter-1' });
    const find = async (filter: string) => {
      const res = await scim(scimA, 'GET', `/Users?filter=${encodeURIComponent(filter)}`);
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.json.schemas, [LIST]);
      return res.json;
    };
    for (const filter of [
      'userName eq "filter.me@example.com"',
      'username EQ "FILTER.ME@example.com"',
      'externalId eq "ext-filter-1"',
      'emails.value eq "filter.me@example.com"',
    ]) {
      const found = await find(filter);
      assert.equal(found.totalResults, 1, filter);
      assert.equal(found.Resources[0].id, c.id, filter);
    }
    const none = await find('userName eq "nobody@example.com"');
    assert.deepEqual(none, { schemas: [LIST], totalResults: 0, startIndex: 1, itemsPerPage: 0, Resources: [] });
    for (const filter of [
      'userName sw "filter"',
      'userName eq "a" or userName eq "b"',
      'title eq "x"',
      'userName eq unquoted',
      'userName pr',
    ]) {
      assertScimError(await scim(scimA, 'GET', `/Users?filter=${encodeURIComponent(filter)}`), 400, 'invalidFilter');
    }
    assertScimError(
      await scim(scimA, 'GET', `/Groups?filter=${encodeURIComponent('members eq "x"')}`),
      400,
      'invalidFilter',
    );
  });

  it('pages with startIndex and count', async () => {
    const t = await setupTenant(server);
    const token = (await makeToken(t.admin_token)).token;
    const ids = [];
    for (let i = 0; i < 5; i++) {
      server.clock.advance(1000); // listed oldest first
      ids.push((await createUser(token, `page${i}@example.com`)).id);
    }
    const page = async (query: string) => (await scim(token, 'GET', `/Users?${query}`)).json;
    const all = await page('');
    assert.equal(all.totalResults, 6, 'the setup admin and five users');
    assert.equal(all.itemsPerPage, 6);
    const first = await page('startIndex=1&count=2');
    assert.deepEqual([first.totalResults, first.startIndex, first.itemsPerPage], [6, 1, 2]);
    const second = await page('startIndex=3&count=2');
    assert.deepEqual(
      second.Resources.map((u: Loose) => u.id),
      ids.slice(1, 3),
    );
    const last = await page('startIndex=6&count=2');
    assert.deepEqual(
      last.Resources.map((u: Loose) => u.id),
      [ids[4]],
    );
    const past = await page('startIndex=50');
    assert.deepEqual([past.totalResults, past.itemsPerPage], [6, 0]);
    const countOnly = await page('count=0');
    assert.deepEqual([countOnly.totalResults, countOnly.Resources.length], [6, 0]);
    const lowStart = await page('startIndex=0&count=1');
    assert.equal(lowStart.startIndex, 1);
    const capped = await page('count=100000');
    assert.equal(capped.itemsPerPage, 6);
  });

  it('PATCH active false (Okta’s shape) ends the user’s live console session and API token; reactivation lets them sign in again', async () => {
    const user = await createUser(scimA, 'leaver@example.com');
    const browser = await signInAs(a, user.id, 'leaver@example.com');
    const made = await asBrowser(base, browser, 'POST', '/v1/me/tokens', { body: { name: 'laptop' } });
    assert.equal(made.status, 201, made.text);
    const apiToken = made.json.token;
    assert.equal((await asBrowser(base, browser, 'GET', '/v1/me/sessions')).status, 200);
    assert.equal((await api(base, 'GET', '/v1/me/tokens', { token: apiToken })).status, 200);

    const off = await patch(scimA, `/Users/${user.id}`, [{ op: 'replace', value: { active: false } }]);
    assert.equal(off.status, 200, off.text);
    assert.equal(off.json.active, false);
    assert.equal((await asBrowser(base, browser, 'GET', '/v1/me/sessions')).status, 401, 'the session ended');
    assert.equal((await api(base, 'GET', '/v1/me/tokens', { token: apiToken })).status, 401, 'the token ended');
    await assert.rejects(signIn(base, 'leaver@example.com', PASSWORD), /40[13]/);
    const row = await server.deps.db
      .selectFrom('users')
      .select('deactivated_at')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    assert.equal(row.deactivated_at, server.clock.now().toISOString());
    const shown = (await api(base, 'GET', '/v1/users', { token: a.admin_token })).json.users.find(
      (u: Loose) => u.id === user.id,
    );
    assert.equal(shown.deactivated_at, server.clock.now().toISOString(), 'the users API shows it');
    const listed = await scim(scimA, 'GET', `/Users?filter=${encodeURIComponent('userName eq "leaver@example.com"')}`);
    assert.equal(listed.json.Resources[0].active, false);

    const on = await patch(scimA, `/Users/${user.id}`, [{ op: 'replace', value: { active: true } }]);
    assert.equal(on.status, 200, on.text);
    assert.equal(on.json.active, true);
    // What deactivation ended stays ended; the user signs in again.
    assert.equal((await asBrowser(base, browser, 'GET', '/v1/me/sessions')).status, 401);
    assert.equal((await api(base, 'GET', '/v1/me/tokens', { token: apiToken })).status, 401);
    const again = await signIn(base, 'leaver@example.com', PASSWORD);
    assert.equal((await asBrowser(base, again, 'GET', '/v1/me/sessions')).status, 200);

    const audit = await api(base, 'GET', '/v1/audit?limit=200', { token: a.admin_token });
    const actions = audit.json.entries.filter((e: Loose) => e.target === user.id).map((e: Loose) => e.action);
    assert.ok(actions.includes('user.deactivate') && actions.includes('user.reactivate'), actions.join());
  });

  it('understands Entra ID’s PATCH: capitalised ops, paths, "False"/"True" strings, name parts', async () => {
    const user = await createUser(scimA, 'entra@example.com', { externalId: 'entra-1' });
    const browser = await signInAs(a, user.id, 'entra@example.com');
    const renamed = await patch(scimA, `/Users/${user.id}`, [
      { op: 'Replace', path: 'name.givenName', value: 'Grace' },
      { op: 'Replace', path: 'name.familyName', value: 'Hopper' },
      { op: 'Add', path: 'externalId', value: 'entra-2' },
      { op: 'Replace', path: 'emails[type eq "work"].value', value: 'entra@example.com' },
      { op: 'Add', path: 'urn:ietf:params:scim:schemas:extension:enterprise:2.0:User:department', value: 'Security' },
    ]);
    assert.equal(renamed.status, 200, renamed.text);
    assert.equal(renamed.json.displayName, 'Grace Hopper');
    assert.equal(renamed.json.externalId, 'entra-2');
    const off = await patch(scimA, `/Users/${user.id}`, [{ op: 'Replace', path: 'active', value: 'False' }]);
    assert.equal(off.status, 200, off.text);
    assert.equal(off.json.active, false);
    assert.equal((await asBrowser(base, browser, 'GET', '/v1/me/sessions')).status, 401);
    const on = await patch(scimA, `/Users/${user.id}`, [{ op: 'Replace', path: 'active', value: 'True' }]);
    assert.equal(on.json.active, true);
    const userName = await patch(scimA, `/Users/${user.id}`, [
      { op: 'Replace', path: 'userName', value: 'Grace.Hopper@example.com' },
      { op: 'Replace', path: 'displayName', value: 'Rear Admiral Hopper' },
    ]);
    assert.equal(userName.json.userName, 'grace.hopper@example.com');
    assert.equal(userName.json.displayName, 'Rear Admiral Hopper');
    const removed = await patch(scimA, `/Users/${user.id}`, [{ op: 'Remove', path: 'externalId' }]);
    assert.equal(removed.json.externalId, undefined);
    assertScimError(
      await patch(scimA, `/Users/${user.id}`, [{ op: 'Replace', path: 'active', value: 'no' }]),
      400,
      'invalidValue',
    );
    assertScimError(
      await patch(scimA, `/Users/${user.id}`, [{ op: 'move', path: 'active', value: true }]),
      400,
      'invalidSyntax',
    );
    assertScimError(await patch(scimA, `/Users/${user.id}`, [{ op: 'remove' }]), 400, 'noTarget');
    assertScimError(await patch(scimA, `/Users/${user.id}`, [{ op: 'remove', path: 'userName' }]), 400, 'mutability');
    assertScimError(await patch(scimA, '/Users/u_nobody', [{ op: 'replace', path: 'active', value: false }]), 404);
  });

  it('groups: create, filter, read, replace, PATCH members as Okta and Entra send them, delete', async () => {
    const u1 = await createUser(scimA, 'g1@example.com');
    const u2 = await createUser(scimA, 'g2@example.com');
    const u3 = await createUser(scimA, 'g3@example.com');
    const created = await scim(scimA, 'POST', '/Groups', {
      schemas: [GROUP],
      displayName: 'Engineering',
      externalId: 'okta-grp-1',
      members: [{ value: u1.id }, { value: u2.id }],
    });
    assert.equal(created.status, 201, created.text);
    const g = created.json;
    assert.equal(created.headers.get('location'), `${base}/scim/v2/Groups/${g.id}`);
    assert.deepEqual(g.members.map((m: Loose) => m.value).sort(), [u1.id, u2.id].sort());
    assert.equal(g.displayName, 'Engineering');
    assert.equal(g.externalId, 'okta-grp-1');
    assertScimError(await scim(scimA, 'POST', '/Groups', { displayName: 'Engineering' }), 409, 'uniqueness');
    assertScimError(
      await scim(scimA, 'POST', '/Groups', { displayName: 'Bad', members: [{ value: 'u_nobody' }] }),
      400,
      'invalidValue',
    );
    assertScimError(await scim(scimA, 'POST', '/Groups', { members: [] }), 400, 'invalidValue');

    const byName = await scim(scimA, 'GET', `/Groups?filter=${encodeURIComponent('displayName eq "Engineering"')}`);
    assert.equal(byName.json.totalResults, 1);
    assert.equal(byName.json.Resources[0].id, g.id);
    const slim = await scim(scimA, 'GET', `/Groups/${g.id}?excludedAttributes=members`);
    assert.equal(slim.json.members, undefined);
    const user1 = await scim(scimA, 'GET', `/Users/${u1.id}`);
    assert.deepEqual(
      user1.json.groups.map((x: Loose) => [x.value, x.display]),
      [[g.id, 'Engineering']],
    );

    // Entra: add and remove with a members value.
    const entraAdd = await patch(scimA, `/Groups/${g.id}`, [{ op: 'Add', path: 'members', value: [{ value: u3.id }] }]);
    assert.equal(entraAdd.status, 200, entraAdd.text);
    assert.equal(entraAdd.json.members.length, 3);
    const entraRemove = await patch(scimA, `/Groups/${g.id}`, [
      { op: 'Remove', path: 'members', value: [{ value: u1.id }] },
    ]);
    assert.deepEqual(entraRemove.json.members.map((m: Loose) => m.value).sort(), [u2.id, u3.id].sort());
    // Okta: remove by a value filter, and rename without a path.
    const oktaRemove = await patch(scimA, `/Groups/${g.id}`, [{ op: 'remove', path: `members[value eq "${u2.id}"]` }]);
    assert.deepEqual(
      oktaRemove.json.members.map((m: Loose) => m.value),
      [u3.id],
    );
    const oktaRename = await patch(scimA, `/Groups/${g.id}`, [
      { op: 'replace', value: { id: g.id, displayName: 'Platform' } },
    ]);
    assert.equal(oktaRename.json.displayName, 'Platform');
    const replaced = await patch(scimA, `/Groups/${g.id}`, [
      { op: 'replace', path: 'members', value: [{ value: u1.id }, { value: u2.id }] },
    ]);
    assert.deepEqual(replaced.json.members.map((m: Loose) => m.value).sort(), [u1.id, u2.id].sort());
    assertScimError(
      await patch(scimA, `/Groups/${g.id}`, [{ op: 'add', path: 'members', value: [{ value: 'u_nobody' }] }]),
      400,
      'invalidValue',
    );

    // PUT replaces the whole group.
    const put = await scim(scimA, 'PUT', `/Groups/${g.id}`, { displayName: 'Platform', members: [{ value: u3.id }] });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(
      put.json.members.map((m: Loose) => m.value),
      [u3.id],
    );
    assert.equal(put.json.externalId, undefined);

    assert.equal((await scim(scimA, 'DELETE', `/Groups/${g.id}`)).status, 204);
    assertScimError(await scim(scimA, 'GET', `/Groups/${g.id}`), 404);
    assert.deepEqual((await scim(scimA, 'GET', `/Users/${u3.id}`)).json.groups, []);
    const audit = await api(base, 'GET', '/v1/audit?limit=200', { token: a.admin_token });
    const actions = audit.json.entries.filter((e: Loose) => e.target === g.id).map((e: Loose) => e.action);
    assert.ok(actions.includes('scim_group.create') && actions.includes('scim_group.delete'), actions.join());
  });

  it('membership of the SSO admin group makes admins and leaving it members, but never demotes the last admin', async () => {
    const t = await setupTenant(server);
    const token = (await makeToken(t.admin_token)).token;
    const find = async (email: string) =>
      (await scim(token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${email}"`)}`)).json.Resources[0];
    const founder = await find(t.admin_email);
    const ops = await createUser(token, 'ops@example.com');

    // Without an admin group configured, groups change no role.
    const admins = await scim(token, 'POST', '/Groups', { displayName: 'Guard Admins', members: [{ value: ops.id }] });
    assert.equal(admins.status, 201, admins.text);
    assert.equal(await roleOf(t, ops.id), 'member');

    const at = server.clock.now().toISOString();
    await server.deps.db
      .insertInto('sso_connections')
      .values({
        tenant_id: t.tenant_id,
        protocol: 'oidc',
        config: JSON.stringify({ issuer: 'https://idp.example', client_id: 'guard' }),
        secret_sealed: null,
        email_domains: JSON.stringify(['example.com']),
        admin_group: 'Guard Admins',
        created_at: at,
        updated_at: at,
      })
      .execute();

    // Joining the admin group makes an admin (the group's next membership change judges all who join).
    const joined = await patch(token, `/Groups/${admins.json.id}`, [
      { op: 'add', path: 'members', value: [{ value: founder.id }] },
    ]);
    assert.equal(joined.status, 200, joined.text);
    assert.equal(await roleOf(t, founder.id), 'admin');
    const newcomer = await createUser(token, 'newcomer@example.com');
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'add', path: 'members', value: [{ value: newcomer.id }] }]);
    assert.equal(await roleOf(t, newcomer.id), 'admin');
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'add', path: 'members', value: [{ value: ops.id }] }]);

    // Leaving it (or being in a group of another name) makes a member.
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'remove', path: `members[value eq "${newcomer.id}"]` }]);
    assert.equal(await roleOf(t, newcomer.id), 'member');
    await scim(token, 'POST', '/Groups', { displayName: 'Everyone', members: [{ value: newcomer.id }] });
    assert.equal(await roleOf(t, newcomer.id), 'member');
    // ops joined while it was not the admin group; the rename away and back judges every member.
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'replace', path: 'displayName', value: 'Old Admins' }]);
    assert.equal(await roleOf(t, ops.id), 'member');
    assert.equal(await roleOf(t, founder.id), 'admin', 'the last admin stays admin');
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'replace', path: 'displayName', value: 'Guard Admins' }]);
    assert.equal(await roleOf(t, ops.id), 'admin');

    // With two admins, one may leave; the last one stays admin when removed from the group.
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'remove', path: `members[value eq "${ops.id}"]` }]);
    assert.equal(await roleOf(t, ops.id), 'member');
    const emptied = await patch(token, `/Groups/${admins.json.id}`, [{ op: 'remove', path: 'members' }]);
    assert.equal(emptied.status, 200, emptied.text);
    assert.deepEqual(emptied.json.members, []);
    assert.equal(await roleOf(t, founder.id), 'admin', 'the last admin is never demoted');

    // The last active admin can be neither deactivated nor deleted.
    assertScimError(await patch(token, `/Users/${founder.id}`, [{ op: 'replace', path: 'active', value: false }]), 409);
    assertScimError(await scim(token, 'DELETE', `/Users/${founder.id}`), 409);
    assert.equal((await api(base, 'GET', '/v1/users', { token: t.admin_token })).status, 200, 'still signed in');

    // With another admin, the founder may go; a deleted group's members lose its role.
    await patch(token, `/Groups/${admins.json.id}`, [{ op: 'add', path: 'members', value: [{ value: ops.id }] }]);
    assert.equal(await roleOf(t, ops.id), 'admin');
    assert.equal(
      (await patch(token, `/Users/${founder.id}`, [{ op: 'replace', path: 'active', value: false }])).status,
      200,
    );
    assert.equal(
      (await api(base, 'GET', '/v1/users', { token: t.admin_token })).status,
      401,
      'the founder’s token ended',
    );
    assert.equal((await scim(token, 'DELETE', `/Groups/${admins.json.id}`)).status, 204);
    const remaining = await server.deps.db
      .selectFrom('users')
      .select(['id', 'role'])
      .where('tenant_id', '=', t.tenant_id)
      .where('role', '=', 'admin')
      .where('deactivated_at', 'is', null)
      .execute();
    assert.deepEqual(
      remaining.map((r) => r.id),
      [ops.id],
      'ops, the only active admin, stays admin when its group goes',
    );
    const audit = await server.deps.db
      .selectFrom('audit_log')
      .select(['action', 'target', 'actor_role'])
      .where('tenant_id', '=', t.tenant_id)
      .where('action', '=', 'user.role')
      .execute();
    assert.ok(audit.some((e) => e.target === `${newcomer.id}:admin` && e.actor_role === 'scim'));
    assert.ok(audit.some((e) => e.target === `${newcomer.id}:member`));
  });

  it('another tenant’s token sees and changes nothing of this tenant', async () => {
    const user = await createUser(scimA, 'private@example.com');
    const group = (await scim(scimA, 'POST', '/Groups', { displayName: 'Private', members: [{ value: user.id }] }))
      .json;
    const filter = encodeURIComponent('userName eq "private@example.com"');
    assert.equal((await scim(scimB, 'GET', `/Users?filter=${filter}`)).json.totalResults, 0);
    const listB = await scim(scimB, 'GET', '/Users?count=200');
    assert.ok(!listB.json.Resources.some((u: Loose) => u.id === user.id));
    assert.ok(!listB.text.includes(a.admin_email));
    assertScimError(await scim(scimB, 'GET', `/Users/${user.id}`), 404);
    assertScimError(await scim(scimB, 'PUT', `/Users/${user.id}`, { userName: 'stolen@example.com' }), 404);
    assertScimError(await patch(scimB, `/Users/${user.id}`, [{ op: 'replace', path: 'active', value: false }]), 404);
    assertScimError(await scim(scimB, 'DELETE', `/Users/${user.id}`), 404);
    assertScimError(await scim(scimB, 'GET', `/Groups/${group.id}`), 404);
    assertScimError(await patch(scimB, `/Groups/${group.id}`, [{ op: 'remove', path: 'members' }]), 404);
    assertScimError(await scim(scimB, 'DELETE', `/Groups/${group.id}`), 404);
    assert.equal(
      (await scim(scimB, 'GET', `/Groups?filter=${encodeURIComponent('displayName eq "Private"')}`)).json.totalResults,
      0,
    );
    // Nor may b put a's user in one of its groups; the same userName is free in b.
    assertScimError(
      await scim(scimB, 'POST', '/Groups', { displayName: 'Grab', members: [{ value: user.id }] }),
      400,
      'invalidValue',
    );
    assert.equal((await scim(scimB, 'POST', '/Users', { userName: 'private@example.com' })).status, 201);
    const still = await scim(scimA, 'GET', `/Users/${user.id}`);
    assert.equal(still.json.active, true);
    assert.equal(still.json.groups.length, 1);
  });
  it('whatever a provider sends, the answer is never a 5xx and every error has SCIM’s shape', async () => {
    const t = await setupTenant(server);
    const token = (await makeToken(t.admin_token)).token;
    const user = await createUser(token, 'fuzz@example.com');
    const group = (await scim(token, 'POST', '/Groups', { displayName: 'Fuzz', members: [{ value: user.id }] })).json;
    const text = fc.oneof(
      fc.string({ maxLength: 40 }),
      fc.constantFrom('', 'True', 'False', 'x@example.com', 'FUZZ@example.com', user.id, group.id, 'members'),
    );
    const value = fc.oneof(
      fc.jsonValue({ maxDepth: 3 }),
      text,
      fc.array(fc.record({ value: fc.oneof(text, fc.jsonValue({ maxDepth: 1 })) }), { maxLength: 4 }),
    );
    const attribute = fc.constantFrom(
      'active',
      'userName',
      'displayName',
      'externalId',
      'name',
      'name.givenName',
      'members',
      `members[value eq "${user.id}"]`,
      'members[value eq 1]',
      'emails[type eq "work"].value',
      'urn:ietf:params:scim:schemas:core:2.0:User:active',
      '__proto__',
    );
    const operation = fc.record(
      { op: fc.constantFrom('add', 'Replace', 'remove', 'copy', ''), path: attribute, value },
      { requiredKeys: ['op'] },
    );
    const body = fc.oneof(
      fc.record({ Operations: fc.array(operation, { maxLength: 4 }) }),
      fc.dictionary(attribute, value, { maxKeys: 5 }),
      fc.jsonValue({ maxDepth: 2 }),
    );
    const target = fc.constantFrom(
      '/Users',
      `/Users/${user.id}`,
      '/Groups',
      `/Groups/${group.id}`,
      '/Users/u_missing',
      '/Users?filter=userName%20eq%20%22x%22&startIndex=-5&count=999999',
      `/Groups?filter=${encodeURIComponent('displayName eq "Fuzz"')}&excludedAttributes=members`,
      '/Users?filter=%22',
      '/Users?startIndex=abc',
    );
    const result = await fc.check(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'PATCH'),
        target,
        body,
        fc.constantFrom('application/scim+json', 'application/json'),
        async (method, path, sent, contentType) => {
          const res = await scim(token, method, path, method === 'GET' ? undefined : sent, contentType);
          assert.ok(res.status < 500, `${method} ${path} ${JSON.stringify(sent)}: ${res.status} ${res.text}`);
          if (res.status >= 400) {
            assert.deepEqual(res.json?.schemas, [ERROR], `${method} ${path}: ${res.text}`);
            assert.equal(res.json.status, String(res.status));
          }
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
    if (result.failed) throw new Error((await fc.asyncDefaultReportMessage(result)) ?? 'property failed');
    // The tenant still has its admin, and the server still answers.
    const admins = await server.deps.db
      .selectFrom('users')
      .select('id')
      .where('tenant_id', '=', t.tenant_id)
      .where('role', '=', 'admin')
      .where('deactivated_at', 'is', null)
      .execute();
    assert.equal(admins.length, 1);
    assert.equal((await scim(token, 'GET', '/ServiceProviderConfig')).status, 200);
  });
  it(`sign-ins racing a deactivation leave no live session; one admin deactivated while the other leaves the admin group leaves one admin; one userName created twice at once is one user (${ROUNDS} rounds)`, async () => {
    const t = await setupTenant(server);
    const token = (await makeToken(t.admin_token)).token;
    const db = server.deps.db;
    const wrong: string[] = [];
    const at = server.clock.now().toISOString();
    await db
      .insertInto('sso_connections')
      .values({
        tenant_id: t.tenant_id,
        protocol: 'saml',
        config: '{}',
        secret_sealed: null,
        email_domains: '["race.example"]',
        admin_group: 'Race Admins',
        created_at: at,
        updated_at: at,
      })
      .execute();
    for (let round = 0; round < ROUNDS; round++) {
      // Sign-ins and a deactivation at once: whatever signed in first is ended with the rest.
      const email = `racer-${round}@race.example`;
      const user = await createUser(token, email);
      await signInAs(t, user.id, email);
      const logins = Array.from({ length: 3 }, () =>
        api(base, 'POST', '/v1/auth/login', { body: { email, password: PASSWORD } }),
      );
      await sleep((round % 5) * 10);
      const off = await patch(token, `/Users/${user.id}`, [{ op: 'replace', path: 'active', value: false }]);
      const answers = await Promise.all(logins);
      server.clock.advance(16 * 60_000); // refused sign-ins leave the limits' window
      const live = await db
        .selectFrom('sessions')
        .select('id')
        .where('user_id', '=', user.id)
        .where('revoked_at', 'is', null)
        .execute();
      if (off.status !== 200 || live.length > 0 || answers.some((r) => r.status !== 200 && r.status !== 401))
        wrong.push(`deactivation round ${round}: ${off.status}, ${live.length} live, ${answers.map((r) => r.status)}`);

      // Two admins, and only they: one deactivated while the other leaves the admin group.
      const x = await createUser(token, `x-${round}@race.example`);
      const y = await createUser(token, `y-${round}@race.example`);
      const group = (
        await scim(token, 'POST', '/Groups', {
          displayName: 'Race Admins',
          members: [{ value: x.id }, { value: y.id }],
        })
      ).json;
      const founder = await db
        .updateTable('users')
        .set({ role: 'member' })
        .where('tenant_id', '=', t.tenant_id)
        .where('email', '=', t.admin_email)
        .executeTakeFirst();
      assert.ok(founder);
      // At once: x is deactivated while y leaves the admin group (different rows: only the
      // tenant's lock orders them).
      const [offX] = await Promise.all([
        patch(token, `/Users/${x.id}`, [{ op: 'replace', path: 'active', value: false }]),
        patch(token, `/Groups/${group.id}`, [{ op: 'remove', path: `members[value eq "${y.id}"]` }]),
      ]);
      if (offX.status !== 200 && offX.status !== 409) wrong.push(`group round ${round}: deactivation ${offX.status}`);
      const admins = await db
        .selectFrom('users')
        .select('id')
        .where('tenant_id', '=', t.tenant_id)
        .where('role', '=', 'admin')
        .where('deactivated_at', 'is', null)
        .execute();
      if (admins.length !== 1) wrong.push(`group round ${round}: ${admins.length} admins left`);
      await scim(token, 'DELETE', `/Groups/${group.id}`);
      await db
        .updateTable('users')
        .set({ role: 'member', deactivated_at: null })
        .where('id', 'in', [x.id, y.id])
        .execute();
      await db
        .updateTable('users')
        .set({ role: 'admin' })
        .where('tenant_id', '=', t.tenant_id)
        .where('email', '=', t.admin_email)
        .execute();

      // One userName provisioned twice at once.
      const twice = await Promise.all(
        [0, 1].map(() => scim(token, 'POST', '/Users', { userName: `twice-${round}@race.example` })),
      );
      const statuses = twice.map((r) => r.status).sort();
      if (statuses.join() !== '201,409' || !twice.some((r) => r.json?.scimType === 'uniqueness'))
        wrong.push(`create round ${round}: ${twice.map((r) => `${r.status} ${r.text}`).join(' | ')}`);
    }
    assert.deepEqual(wrong, [], `wrong in ${wrong.length} checks`);
  });
  it('a deactivated admin does not count as the admin a tenant keeps: the last active one can be neither demoted nor removed', async () => {
    const t = await setupTenant(server);
    const token = (await makeToken(t.admin_token)).token;
    const founder = (await scim(token, 'GET', `/Users?filter=${encodeURIComponent(`userName eq "${t.admin_email}"`)}`))
      .json.Resources[0];
    const other = await createUser(token, 'second-admin@example.com');
    const promoted = await api(base, 'PATCH', `/v1/users/${other.id}`, {
      token: t.admin_token,
      body: { role: 'admin' },
    });
    assert.equal(promoted.status, 200, promoted.text);
    const off = await patch(token, `/Users/${other.id}`, [{ op: 'replace', path: 'active', value: false }]);
    assert.equal(off.status, 200, off.text);
    // Two admins on paper, one who can act: the founder is the last.
    const demote = await api(base, 'PATCH', `/v1/users/${founder.id}`, {
      token: t.admin_token,
      body: { role: 'member' },
    });
    assert.equal(demote.status, 409, demote.text);
    assert.equal(demote.json.error.code, 'last_admin');
    const remove = await api(base, 'DELETE', `/v1/users/${founder.id}`, { token: t.admin_token });
    assert.equal(remove.status, 409, remove.text);
    // The deactivated admin may be demoted or removed.
    const demoteOther = await api(base, 'PATCH', `/v1/users/${other.id}`, {
      token: t.admin_token,
      body: { role: 'member' },
    });
    assert.equal(demoteOther.status, 200, demoteOther.text);
    assert.equal((await api(base, 'DELETE', `/v1/users/${other.id}`, { token: t.admin_token })).status, 204);
  });
});
