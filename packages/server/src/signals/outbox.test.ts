// The outbox against a real database of this run's engine (SQLite, or PostgreSQL in the second
// pass): signals written in the same turn share one transaction, each with its own
// deliveries, and a row that fails fails only its own write.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testEndpoint, testSignal } from '../../test/signals.ts';
import { openTestDatabase, type TestDatabase } from '../../test/test-database.ts';
import type { Db, SignalTable } from '../db/index.ts';
import { timeOrderedId } from '../kernel/ids.ts';
import { PostgresDeliveryQueue, SqliteDeliveryQueue } from '../webhooks/index.ts';
import { SignalOutbox } from './outbox.ts';

const NOW = '2026-11-21T12:00:00.000Z';

const signal = (tenant: string, id = timeOrderedId('sig')): SignalTable => testSignal(tenant, new Date(NOW), id);

describe('SignalOutbox', () => {
  let test: TestDatabase;
  let db: Db;
  let outbox: SignalOutbox;

  before(async () => {
    test = await openTestDatabase('outbox');
    db = test.db;
    outbox = new SignalOutbox(test.engine === 'postgres' ? new PostgresDeliveryQueue(db) : new SqliteDeliveryQueue(db));
    await db
      .insertInto('tenants')
      .values([
        { id: 't1', name: 'one', created_at: NOW },
        { id: 't2', name: 'two', created_at: NOW },
      ])
      .execute();
    await db
      .insertInto('webhook_endpoints')
      .values([
        testEndpoint('e1', 't1', 1, new Date(NOW)),
        testEndpoint('e2', 't1', 1, new Date(NOW)),
        testEndpoint('e3', 't1', 0, new Date(NOW)),
        testEndpoint('e4', 't2', 1, new Date(NOW)),
      ])
      .execute();
  });
  after(() => test.close());

  const deliveriesOf = (signalId: string) =>
    db
      .selectFrom('webhook_deliveries')
      .select(['id', 'endpoint_id', 'state', 'tenant_id'])
      .where('signal_id', '=', signalId)
      .orderBy('endpoint_id')
      .execute();

  it('writes one pending delivery per enabled endpoint of the signal’s tenant, and returns their ids', async () => {
    const s = signal('t1');
    const ids = await outbox.write(s);
    const rows = await deliveriesOf(s.id);
    assert.deepEqual(
      rows.map((r) => [r.endpoint_id, r.state, r.tenant_id]),
      [
        ['e1', 'pending', 't1'],
        ['e2', 'pending', 't1'],
      ],
    );
    assert.deepEqual(new Set(ids), new Set(rows.map((r) => r.id)));
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('with onlyEndpointId, writes the one delivery (a test event)', async () => {
    const s = signal('t1');
    assert.equal((await outbox.write(s, 'e2')).length, 1);
    assert.deepEqual(
      (await deliveriesOf(s.id)).map((r) => r.endpoint_id),
      ['e2'],
    );
    assert.deepEqual(await outbox.write(signal('t1'), 'e4'), [], "another tenant's endpoint gets nothing");
  });

  it('signals written in the same turn all land; a failing one is refused alone, leaving no rows', async () => {
    const first = signal('t1');
    const duplicate = signal('t2', first.id); // same primary key: this insert fails
    const others = Array.from({ length: 20 }, (_, i) => signal(i % 2 ? 't1' : 't2'));
    const results = await Promise.allSettled([
      outbox.write(first),
      outbox.write(duplicate),
      ...others.map((s) => outbox.write(s)),
    ]);
    assert.equal(results[0].status, 'fulfilled');
    assert.equal(results[1].status, 'rejected');
    assert.match(String((results[1] as PromiseRejectedResult).reason), /UNIQUE|constraint/i);
    for (const r of results.slice(2)) assert.equal(r.status, 'fulfilled');
    const stored = await db.selectFrom('signals').select(['id', 'tenant_id']).where('id', '=', first.id).execute();
    assert.deepEqual(
      stored.map((r) => ({ ...r })),
      [{ id: first.id, tenant_id: 't1' }],
      'the first write stands, the duplicate left nothing',
    );
    assert.equal((await deliveriesOf(first.id)).length, 2);
    for (const s of others) assert.equal((await deliveriesOf(s.id)).length, s.tenant_id === 't1' ? 2 : 1);
  });

  it('a batch larger than one transaction’s share is written whole', async () => {
    const many = Array.from({ length: 600 }, () => signal('t2'));
    const ids = await Promise.all(many.map((s) => outbox.write(s)));
    assert.equal(new Set(ids.flat()).size, 600);
    const n = await db
      .selectFrom('webhook_deliveries')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where(
        'signal_id',
        'in',
        many.map((s) => s.id),
      )
      .executeTakeFirstOrThrow();
    assert.equal(Number(n.n), 600);
  });
});
