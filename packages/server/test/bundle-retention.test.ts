// Bundle retention and deletion (issue 24, item 6), on both engines (scripts/test-postgres.ts
// runs this file on PostgreSQL) and both object stores: an admin deletes one of the tenant's
// bundles (audited, the object gone from the store, the record kept and shown as deleted, its
// content answering 410), and the maintenance sweep deletes what is past each tenant's
// retention — once, however many sweeps run at the same time.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { maintain } from '../src/server.ts';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  type Loose,
  presign,
  type StoreKind,
  setupTenant,
  startTestServer,
  type TestServer,
  uploadBundle,
} from './harness.ts';

const DAY_MS = 86_400_000;
const silent = { info() {}, error() {} };

async function auditOf(server: TestServer, bundleId: string) {
  const rows = await server.deps.db
    .selectFrom('audit_log')
    .select(['action', 'actor_id', 'actor_role', 'tenant_id'])
    .where('target', '=', bundleId)
    .where('action', 'in', ['bundle.delete', 'bundle.expire'])
    .execute();
  return rows.map((r) => ({ ...r }));
}

for (const kind of ['fs', 's3'] as StoreKind[]) {
  describe(`deleting a bundle on the ${kind === 'fs' ? 'embedded' : 'S3'} object store`, () => {
    let server: TestServer;
    let tenant: Awaited<ReturnType<typeof setupTenant>>;
    let agent: EnrolledAgent;
    before(async () => {
      server = await startTestServer({ store: kind });
      tenant = await setupTenant(server);
      agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: 'db-3.example' });
    });
    after(() => server.cleanup());

    it("the admin's DELETE removes the object and the findings, audits it, and leaves a record support sees as deleted", async () => {
      const up = await uploadBundle(server.url, agent.api_key);
      assert.ok(await server.deps.store.verify(up.object_key), 'stored before the deletion');
      const admin = await api(server.url, 'GET', '/v1/users', { token: tenant.admin_token });
      const adminId = admin.json.users.find((u: Loose) => u.email === tenant.admin_email).id;

      const del = await api(server.url, 'DELETE', `/v1/support/bundles/${up.bundle_id}`, { token: tenant.admin_token });
      assert.equal(del.status, 200, del.text);
      assert.equal(del.json.bundle_id, up.bundle_id);
      assert.deepEqual(del.json.deleted, {
        at: server.clock.now().toISOString(),
        reason: 'admin',
        by: adminId,
        by_email: tenant.admin_email,
      });
      assert.equal(await server.deps.store.verify(up.object_key), undefined, 'the object is gone from the store');
      const row = await server.deps.db
        .selectFrom('bundles')
        .select(['object_removed_at'])
        .where('id', '=', up.bundle_id)
        .executeTakeFirstOrThrow();
      assert.equal(row.object_removed_at, server.clock.now().toISOString());
      const findings = await server.deps.db
        .selectFrom('bundle_insights')
        .select('bundle_id')
        .where('bundle_id', '=', up.bundle_id)
        .execute();
      assert.deepEqual(findings, [], 'its analysis (which quotes its lines) is gone');
      assert.deepEqual(await auditOf(server, up.bundle_id), [
        { action: 'bundle.delete', actor_id: adminId, actor_role: 'admin', tenant_id: tenant.tenant_id },
      ]);

      // Support staff see that it was deleted — by whom, when, why — and nothing of its content.
      const support = server.supportToken as string;
      const list = await api(server.url, 'GET', `/v1/support/bundles?tenant_id=${tenant.tenant_id}`, {
        token: support,
      });
      const listed = list.json.bundles.find((b: Loose) => b.bundle_id === up.bundle_id);
      assert.equal(listed.deleted.reason, 'admin');
      assert.equal(listed.deleted.by_email, tenant.admin_email);
      const show = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}`, { token: support });
      assert.equal(show.status, 200, show.text);
      assert.equal(show.json.deleted.reason, 'admin');
      assert.equal(show.json.manifest, undefined, 'no manifest of a deleted bundle');
      assert.equal(show.json.object_key, undefined);
      for (const path of ['download', 'insights', 'lines?member=agent.log&line=1']) {
        const res = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}/${path}`, { token: support });
        assert.equal(res.status, 410, `${path}: ${res.text}`);
        assert.equal(res.json.error.code, 'bundle_deleted', path);
      }

      const again = await api(server.url, 'DELETE', `/v1/support/bundles/${up.bundle_id}`, {
        token: tenant.admin_token,
      });
      assert.equal(again.status, 410, again.text);
      assert.equal(again.json.error.code, 'bundle_deleted');
      assert.equal((await auditOf(server, up.bundle_id)).length, 1, 'a repeat deletes and audits nothing');
    });

    if (kind === 's3')
      it('a store that refuses the deletion: the bundle is deleted at once, the next sweep removes its object', async () => {
        const up = await uploadBundle(server.url, agent.api_key);
        const s3 = server.s3 as NonNullable<TestServer['s3']>;
        s3.faults.denyDeletes = true;
        try {
          const del = await api(server.url, 'DELETE', `/v1/support/bundles/${up.bundle_id}`, {
            token: tenant.admin_token,
          });
          assert.equal(del.status, 200, del.text);
          assert.equal(del.json.deleted.reason, 'admin');
          assert.ok(await server.deps.store.verify(up.object_key), 'the store kept it: it refused');
          const dl = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}/download`, {
            token: tenant.admin_token,
          });
          assert.equal(dl.status, 410, 'never served again, whatever the store holds');
          await maintain(server.deps, server.deps.config, silent);
          assert.ok(await server.deps.store.verify(up.object_key), 'still refused');
        } finally {
          s3.faults.denyDeletes = false;
        }
        await maintain(server.deps, server.deps.config, silent);
        assert.equal(await server.deps.store.verify(up.object_key), undefined, 'removed by the sweep');
        const row = await server.deps.db
          .selectFrom('bundles')
          .select('object_removed_at')
          .where('id', '=', up.bundle_id)
          .executeTakeFirstOrThrow();
        assert.equal(row.object_removed_at, server.clock.now().toISOString());
        assert.equal((await auditOf(server, up.bundle_id)).length, 1, 'deleted and audited once');
      });

    it("only the tenant's admin deletes: members and support staff 403, another tenant's admin 404", async () => {
      const up = await uploadBundle(server.url, agent.api_key);
      const member = await addUser(server, tenant.tenant_id, 'member');
      const other = await setupTenant(server);
      const path = `/v1/support/bundles/${up.bundle_id}`;
      assert.equal((await api(server.url, 'DELETE', path, { token: member })).status, 403);
      assert.equal((await api(server.url, 'DELETE', path, { token: server.supportToken })).status, 403);
      const foreign = await api(server.url, 'DELETE', path, { token: other.admin_token });
      assert.equal(foreign.status, 404, foreign.text);
      assert.equal(foreign.json.error.code, 'not_found');
      assert.ok(await server.deps.store.verify(up.object_key), 'still stored');
      const show = await api(server.url, 'GET', path, { token: tenant.admin_token });
      assert.equal(show.json.deleted, null);
      assert.deepEqual(await auditOf(server, up.bundle_id), []);
    });
  });
}

describe('bundle retention', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer({ flags: { 'bundle-retention-max-days': '120', 'tenant-quota-bytes': '100000' } });
  });
  after(() => server.cleanup());

  const setRetention = (token: string, days: number | null) =>
    api(server.url, 'PATCH', '/v1/tenant/settings', { token, body: { bundle_retention_days: days } });

  it('the tenant setting: 90 days by default, at most the server maximum, audited', async () => {
    const t = await setupTenant(server);
    const read = await api(server.url, 'GET', '/v1/tenant/settings', { token: t.admin_token });
    assert.equal(read.json.bundle_retention_days, 90);
    assert.equal(read.json.bundle_retention_is_default, true);
    assert.equal(read.json.bundle_retention_max_days, 120);
    const tooMany = await setRetention(t.admin_token, 121);
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.equal(tooMany.json.error.code, 'retention_above_maximum');
    assert.equal((await setRetention(t.admin_token, 0)).status, 400);
    const member = await addUser(server, t.tenant_id, 'member');
    assert.equal((await setRetention(member, 30)).status, 403);
    const set = await setRetention(t.admin_token, 30);
    assert.equal(set.status, 200, set.text);
    assert.equal(set.json.bundle_retention_days, 30);
    assert.equal(set.json.bundle_retention_is_default, false);
    const entries = await server.deps.db
      .selectFrom('audit_log')
      .select('target')
      .where('tenant_id', '=', t.tenant_id)
      .where('action', '=', 'tenant.settings')
      .execute();
    assert.deepEqual(
      entries.map((e) => e.target),
      ['bundle_retention_days=30'],
    );
    const reset = await setRetention(t.admin_token, null);
    assert.equal(reset.json.bundle_retention_days, 90);
    assert.equal(reset.json.bundle_retention_is_default, true);
  });

  it("the sweep deletes each tenant's bundles past its own retention, once, even with two sweeps at a time", async () => {
    const short = await setupTenant(server);
    const long = await setupTenant(server); // the default, 90 days
    assert.equal((await setRetention(short.admin_token, 7)).status, 200);
    const shortAgent = await enrollAgent(server.url, short.enroll_token, { hostname: 'short.example' });
    const longAgent = await enrollAgent(server.url, long.enroll_token, { hostname: 'long.example' });
    const old = [
      await uploadBundle(server.url, shortAgent.api_key),
      await uploadBundle(server.url, shortAgent.api_key),
    ];
    const kept = await uploadBundle(server.url, longAgent.api_key);
    server.clock.advance(3 * DAY_MS);
    const young = await uploadBundle(server.url, shortAgent.api_key);

    server.clock.advance(5 * DAY_MS); // the old ones are 8 days old, the young one 5
    await Promise.all([
      maintain(server.deps, server.deps.config, silent),
      maintain(server.deps, server.deps.config, silent),
    ]);
    for (const up of old) {
      assert.equal(await server.deps.store.verify(up.object_key), undefined, 'the object is gone');
      assert.deepEqual(await auditOf(server, up.bundle_id), [
        { action: 'bundle.expire', actor_id: 'guard', actor_role: 'system', tenant_id: short.tenant_id },
      ]);
      const show = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}`, { token: short.admin_token });
      assert.deepEqual(show.json.deleted, {
        at: server.clock.now().toISOString(),
        reason: 'retention',
        by: 'retention',
        by_email: null,
      });
      const dl = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}/download`, {
        token: short.admin_token,
      });
      assert.equal(dl.status, 410);
      assert.equal(dl.json.error.code, 'bundle_deleted');
    }
    for (const up of [young, kept]) {
      assert.ok(await server.deps.store.verify(up.object_key), 'within its retention: kept');
      assert.deepEqual(await auditOf(server, up.bundle_id), []);
    }

    server.clock.advance(83 * DAY_MS); // kept is 91 days old
    await maintain(server.deps, server.deps.config, silent);
    assert.equal(await server.deps.store.verify(kept.object_key), undefined);
    assert.equal((await auditOf(server, kept.bundle_id))[0]?.action, 'bundle.expire');
  });

  it("a deleted bundle's bytes no longer count against the tenant's quota", async () => {
    const t = await setupTenant(server);
    const a = await enrollAgent(server.url, t.enroll_token, { hostname: 'quota.example' });
    const up = await uploadBundle(server.url, a.api_key, { size: 60_000 });
    const ask = () => presign(server.url, a.api_key, { size: 60_000, sha256: 'a'.repeat(64) });
    const full = await ask();
    assert.equal(full.json?.error?.code, 'quota_exceeded', full.text);
    const del = await api(server.url, 'DELETE', `/v1/support/bundles/${up.bundle_id}`, { token: t.admin_token });
    assert.equal(del.status, 200, del.text);
    const fits = await ask();
    assert.equal(fits.status, 200, fits.text);
  });
});
