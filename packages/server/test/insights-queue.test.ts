// The analysis queue takes tenants in turn (issue 19, finding 1): one tenant's flood of
// uploads must not keep everyone else's bundle waiting. Rows written straight into a real
// database of this run's engine; InsightsRepository.claim is what every replica's worker calls.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { InsightsRepository } from '../src/insights/insights-repository.ts';
import { openTestDatabase, type TestDatabase } from './test-database.ts';

let t: TestDatabase;
before(async () => {
  t = await openTestDatabase('insights-queue');
});
after(() => t?.close());

const at = (s: number) => new Date(Date.UTC(2026, 10, 27, 10, 0, s)).toISOString();

/** A tenant with an agent, and a queued bundle per entry of `queuedAt` (seconds). */
async function tenantWithQueue(tenant: string, queuedAt: number[]): Promise<void> {
  const { db } = t;
  await db
    .insertInto('tenants')
    .values({ id: tenant, name: tenant, created_at: at(0) })
    .execute();
  const agent = `${tenant}-agent`;
  await db
    .insertInto('agents')
    .values({
      id: agent,
      tenant_id: tenant,
      api_key_hash: `${tenant}-hash`,
      hostname: 'web-1',
      environment: 'prod',
      agent_version: '0.1.0',
      enrolled_at: at(0),
    })
    .execute();
  for (const [i, s] of queuedAt.entries()) {
    const id = `${tenant}-b${i + 1}`;
    const row = { tenant_id: tenant, agent_id: agent, filename: `${id}.tar.zst`, size: 1, sha256: '0'.repeat(64) };
    await db
      .insertInto('uploads')
      .values({ object_key: id, ...row, expires_at: at(3600), state: 'registered', created_at: at(s) })
      .execute();
    await db
      .insertInto('bundles')
      .values({ id, object_key: id, ...row, manifest: '{}', uploaded_at: at(s) })
      .execute();
    await db
      .insertInto('bundle_insights')
      .values({ bundle_id: id, tenant_id: tenant, agent_id: agent, state: 'pending', attempts: 0, created_at: at(s) })
      .execute();
  }
}

describe('the analysis queue', () => {
  it('takes tenants in turn: a flood of one tenant waits behind the others’ bundles', async () => {
    // Tenant A uploaded six bundles first; B and C one each, later.
    await tenantWithQueue('ten_a', [1, 2, 3, 4, 5, 6]);
    await tenantWithQueue('ten_b', [10]);
    await tenantWithQueue('ten_c', [11]);
    const jobs = new InsightsRepository(t.db);
    const order: string[] = [];
    for (let n = 0; n < 8; n++) {
      const claimedAt = new Date(Date.UTC(2026, 10, 27, 11, 0, n));
      const job = await jobs.claim(claimedAt, new Date(claimedAt.getTime() + 60_000));
      assert.ok(job, `claim ${n + 1}`);
      order.push(job.bundleId);
      await jobs.finish(job, { state: 'done', findings: [], summary: null }, claimedAt);
    }
    assert.deepEqual(order, [
      'ten_a-b1',
      'ten_b-b1',
      'ten_c-b1',
      'ten_a-b2',
      'ten_a-b3',
      'ten_a-b4',
      'ten_a-b5',
      'ten_a-b6',
    ]);
    assert.equal(
      await jobs.claim(new Date(Date.UTC(2026, 10, 27, 12)), new Date(Date.UTC(2026, 10, 27, 13))),
      undefined,
    );
  });
});
