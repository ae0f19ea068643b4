// Audit log export (GET /v1/audit/export) against the real server on loopback: CSV with a
// header row, RFC 4180 quoting and formula neutralising, JSON Lines, the audit page's filters,
// a dated attachment name, tenant scoping (an admin exports their tenant's entries only;
// support staff any tenant's or all), every page of a long log, and the export audited itself.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { asBrowser, signIn } from './console-session.ts';
import { api, isErrorShape, type Loose, setupTenant, startTestServer, type TestServer } from './harness.ts';

/** Splits a CSV body into records of cells (RFC 4180: quoted cells may hold commas, quotes and line breaks). */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      record.push(cell);
      cell = '';
    } else if (c === '\r' && text[i + 1] === '\n') {
      record.push(cell);
      records.push(record);
      record = [];
      cell = '';
      i++;
    } else cell += c;
  }
  assert.equal(cell, '', 'the body ends with CRLF');
  return records;
}

describe('audit log export', () => {
  let server: TestServer;
  let base: string;
  let a: Awaited<ReturnType<typeof setupTenant>>;
  let b: Awaited<ReturnType<typeof setupTenant>>;

  async function addUser(token: string, email: string) {
    const res = await api(base, 'POST', '/v1/users', { token, body: { email, role: 'member' } });
    assert.equal(res.status, 201, res.text);
    return res.json.id as string;
  }

  /** Writes an entry whose target a user could have chosen (a formula, quotes, a comma, a line break). */
  async function hostileEntry(tenantId: string, target: string) {
    await server.deps.db
      .insertInto('audit_log')
      .values({
        id: `au_hostile_${target.length}`,
        at: new Date(server.clock.ms).toISOString(),
        actor_id: 'sso:oidc',
        actor_role: 'sso',
        tenant_id: tenantId,
        action: 'user.create',
        target,
      })
      .execute();
  }

  before(async () => {
    server = await startTestServer();
    base = server.url;
    a = await setupTenant(server);
    b = await setupTenant(server);
    await addUser(a.admin_token, 'first@example.com');
    server.clock.advance(1000);
    await addUser(a.admin_token, 'second@example.com');
    server.clock.advance(1000);
    await addUser(b.admin_token, 'other-tenant@example.com');
    server.clock.advance(1000);
    await hostileEntry(a.tenant_id, '=HYPERLINK("https://evil.example","click"),\r\n+1');
    server.clock.advance(1000);
  });
  after(() => server.cleanup());

  it("exports the admin's tenant as CSV: header, quoting, formulas neutralised, a dated attachment", async () => {
    const res = await api(base, 'GET', '/v1/audit/export?format=csv', { token: a.admin_token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'text/csv; charset=utf-8');
    assert.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="guard-audit-${a.tenant_id}-2026-11-21.csv"`,
    );
    assert.equal(res.headers.get('cache-control'), 'no-store');
    const [header, ...rows] = parseCsv(res.text);
    assert.deepEqual(header, ['id', 'at', 'actor_id', 'actor_email', 'actor_role', 'tenant_id', 'action', 'target']);
    assert.ok(
      rows.every((r) => r.length === 8 && r[5] === a.tenant_id),
      "only the tenant's rows",
    );
    const hostile = rows.find((r) => r[2] === 'sso:oidc');
    assert.ok(hostile);
    assert.equal(hostile[7], '\'=HYPERLINK("https://evil.example","click"),\r\n+1');
    assert.equal(rows.filter((r) => r[6] === 'user.create').length, 3);
    assert.ok(!res.text.includes('other-tenant'), "another tenant's entries are not there");
    const times = rows.map((r) => r[1]);
    assert.deepEqual(times, [...times].sort().reverse(), 'newest first');
  });

  it('exports JSON Lines with the action filter, and records the export in the audit log', async () => {
    const res = await api(base, 'GET', '/v1/audit/export?format=jsonl&action=user.create', { token: a.admin_token });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.headers.get('content-type'), 'application/jsonl; charset=utf-8');
    assert.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="guard-audit-${a.tenant_id}-2026-11-21.jsonl"`,
    );
    const lines = res.text.split('\n');
    assert.equal(lines.pop(), '', 'each line ends with a newline');
    const entries = lines.map((l) => JSON.parse(l));
    assert.equal(entries.length, 3);
    assert.ok(entries.every((e: Loose) => e.action === 'user.create' && e.tenant_id === a.tenant_id));
    assert.deepEqual(Object.keys(entries[0]), [
      'id',
      'at',
      'actor_id',
      'actor_email',
      'actor_role',
      'tenant_id',
      'action',
      'target',
    ]);
    assert.equal(
      entries[0].target,
      '=HYPERLINK("https://evil.example","click"),\r\n+1',
      'JSON carries the value as it is',
    );

    const log = await api(base, 'GET', '/v1/audit?action=audit.export', { token: a.admin_token });
    assert.equal(log.status, 200);
    const targets = log.json.entries.map((e: Loose) => e.target);
    assert.ok(targets.includes(`format=jsonl action=user.create tenant_id=${a.tenant_id}`), targets.join('; '));
    assert.ok(log.json.entries.every((e: Loose) => e.actor_role === 'admin'));
  });

  it('an admin cannot export another tenant by tenant_id', async () => {
    const res = await api(base, 'GET', `/v1/audit/export?format=jsonl&tenant_id=${b.tenant_id}`, {
      token: a.admin_token,
    });
    assert.equal(res.status, 200);
    assert.ok(
      res.text
        .split('\n')
        .filter(Boolean)
        .every((l) => JSON.parse(l).tenant_id === a.tenant_id),
    );
  });

  it('support staff export every tenant, or one; members not at all', async () => {
    const all = await api(base, 'GET', '/v1/audit/export?format=jsonl', { token: server.supportToken });
    assert.equal(all.status, 200, all.text);
    assert.match(all.headers.get('content-disposition') ?? '', /guard-audit-all-tenants-2026-11-21\.jsonl/);
    const tenants = new Set(
      all.text
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).tenant_id),
    );
    assert.ok(tenants.has(a.tenant_id) && tenants.has(b.tenant_id));
    const one = await api(base, 'GET', `/v1/audit/export?format=csv&tenant_id=${b.tenant_id}`, {
      token: server.supportToken,
    });
    const rows = parseCsv(one.text).slice(1);
    assert.ok(rows.length > 0 && rows.every((r) => r[5] === b.tenant_id));

    const added = await api(base, 'POST', '/v1/users', {
      token: a.admin_token,
      body: { email: 'member-export@example.com', role: 'member' },
    });
    const url: string = added.json.set_password_url;
    const password = 'correct horse battery staple';
    await api(base, 'POST', '/v1/auth/set-password', { body: { token: url.slice(url.indexOf('#') + 1), password } });
    const session = await signIn(base, 'member-export@example.com', password);
    const refused = await asBrowser(base, session, 'GET', '/v1/audit/export?format=csv');
    assert.equal(refused.status, 403, refused.text);
    assert.ok(isErrorShape(refused.json));
  });

  it('refuses an unknown format', async () => {
    const res = await api(base, 'GET', '/v1/audit/export?format=xlsx', { token: a.admin_token });
    assert.equal(res.status, 400);
    assert.equal(res.json.error.code, 'invalid_request');
  });

  it('streams every page of a long log', async () => {
    const at = Date.parse('2026-11-20T00:00:00.000Z');
    const rows = Array.from({ length: 1234 }, (_, i) => ({
      id: `au_bulk_${String(i).padStart(5, '0')}`,
      at: new Date(at + Math.floor(i / 3) * 1000).toISOString(),
      actor_id: 'scim:tok_1',
      actor_role: 'scim',
      tenant_id: b.tenant_id,
      action: 'user.role',
      target: `usr_${i}`,
    }));
    for (let i = 0; i < rows.length; i += 200)
      await server.deps.db
        .insertInto('audit_log')
        .values(rows.slice(i, i + 200))
        .execute();
    const res = await api(base, 'GET', '/v1/audit/export?format=csv&action=user.role', { token: b.admin_token });
    assert.equal(res.status, 200);
    const records = parseCsv(res.text).slice(1);
    assert.equal(records.length, 1234);
    assert.equal(new Set(records.map((r) => r[0])).size, 1234, 'no entry twice across pages');
  });

  it('a scoped token needs audit:read', async () => {
    const scoped = await api(base, 'POST', '/v1/me/tokens', {
      token: a.admin_token,
      body: { name: 'siem', scopes: ['audit:read'] },
    });
    assert.equal((await api(base, 'GET', '/v1/audit/export?format=csv', { token: scoped.json.token })).status, 200);
    const other = await api(base, 'POST', '/v1/me/tokens', {
      token: a.admin_token,
      body: { name: 'hooks', scopes: ['webhooks:write'] },
    });
    const res = await api(base, 'GET', '/v1/audit/export?format=csv', { token: other.json.token });
    assert.equal(res.status, 403);
    assert.equal(res.json.error.code, 'insufficient_scope');
  });
});
