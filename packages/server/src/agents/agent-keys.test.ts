// The agent-key lookup: against a real database of this run's engine (SQLite, or PostgreSQL in
// the second pass), which keys answer and when an agent is marked seen; and the batching of
// the keys of one turn into one read, with a recording reader.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { testAgent } from '../../test/signals.ts';
import { openTestDatabase, type TestDatabase } from '../../test/test-database.ts';
import type { AgentKeyLookup } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import {
  AGENT_SEEN_INTERVAL_MS,
  type AgentRow,
  agentKeyLookup,
  batchedByTurn,
  KEYS_PER_STATEMENT,
} from './agent-keys.ts';

const T0 = new Date('2026-11-29T10:00:00.000Z');
const later = (ms: number) => new Date(T0.getTime() + ms);

describe('agentKeyLookup', () => {
  let test: TestDatabase;
  let db: Db;
  let lookup: AgentKeyLookup;

  before(async () => {
    test = await openTestDatabase('agent-keys');
    db = test.db;
    lookup = agentKeyLookup(db);
    await db.insertInto('tenants').values({ id: 't1', name: 'one', created_at: T0.toISOString() }).execute();
    await db
      .insertInto('agents')
      .values([
        testAgent('a1', 't1', T0),
        testAgent('a2', 't1', T0),
        testAgent('a3', 't1', T0, { revoked_at: T0.toISOString() }),
        testAgent('a4', 't1', T0),
      ])
      .execute();
  });
  after(() => test.close());

  const lastSeen = async (id: string) =>
    (await db.selectFrom('agents').select('last_seen_at').where('id', '=', id).executeTakeFirstOrThrow()).last_seen_at;

  it('answers each key asked for in one turn: live agents with their tenant, revoked and unknown keys with nothing', async () => {
    const answers = await Promise.all([
      lookup('hash-a1', T0),
      lookup('hash-a2', T0),
      lookup('hash-a1', T0),
      lookup('hash-a3', T0),
      lookup('hash-nobody', T0),
    ]);
    assert.deepEqual(
      answers.map((p) => p && [p.agentId, p.tenantId, p.hostname, p.environment]),
      [
        ['a1', 't1', 'host-a1', 'prod'],
        ['a2', 't1', 'host-a2', 'prod'],
        ['a1', 't1', 'host-a1', 'prod'],
        undefined,
        undefined,
      ],
    );
    assert.notEqual(answers[0], answers[2], 'each request gets a principal of its own');
  });

  it('marks an agent seen at most once a minute, at the latest request time of the turn', async () => {
    await Promise.all([lookup('hash-a4', later(1_000)), lookup('hash-a4', later(2_000))]);
    assert.equal(await lastSeen('a4'), later(2_000).toISOString());
    await lookup('hash-a4', later(2_000 + AGENT_SEEN_INTERVAL_MS - 1));
    assert.equal(await lastSeen('a4'), later(2_000).toISOString(), 'not again within the minute');
    await lookup('hash-a4', later(2_000 + AGENT_SEEN_INTERVAL_MS));
    assert.equal(await lastSeen('a4'), later(2_000 + AGENT_SEEN_INTERVAL_MS).toISOString());
    assert.equal(await lastSeen('a3'), null, 'a revoked agent is never marked seen');
  });

  it('refuses a key from the first request after its revocation committed (nothing is cached)', async () => {
    assert.equal((await lookup('hash-a2', T0))?.agentId, 'a2');
    await db
      .updateTable('agents')
      .set({ revoked_at: later(5_000).toISOString() })
      .where('id', '=', 'a2')
      .execute();
    assert.equal(await lookup('hash-a2', later(5_000)), undefined);
  });
});

describe('batchedByTurn', () => {
  const row = (hash: string): AgentRow => ({
    api_key_hash: hash,
    id: `agent-of-${hash}`,
    tenant_id: 't1',
    hostname: 'h',
    environment: 'prod',
    last_seen_at: null,
  });

  /** A reader that records each call and answers when the test lets it. */
  function recordingReader() {
    const calls: { hashes: string[]; at: Date; answer: (fail?: Error) => void }[] = [];
    const read = (hashes: string[], at: Date) =>
      new Promise<AgentRow[]>((resolve, reject) => {
        calls.push({ hashes, at, answer: (fail) => (fail ? reject(fail) : resolve(hashes.map(row))) });
      });
    return { calls, read };
  }
  const turn = () => new Promise((resolve) => setImmediate(resolve));

  it('reads the keys of one turn with one call, each key once, at the latest request time', async () => {
    const { calls, read } = recordingReader();
    const lookup = batchedByTurn(read, 1);
    const answers = Promise.all([lookup('k1', later(3)), lookup('k2', later(1)), lookup('k1', later(2))]);
    await turn();
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0].hashes, ['k1', 'k2']);
    assert.equal(calls[0].at.getTime(), later(3).getTime());
    calls[0].answer();
    assert.deepEqual(
      (await answers).map((p) => p?.agentId),
      ['agent-of-k1', 'agent-of-k2', 'agent-of-k1'],
    );
  });

  it('keys asked for while maxInFlight reads run wait, and go together in the next read', async () => {
    const { calls, read } = recordingReader();
    const lookup = batchedByTurn(read, 1);
    const first = lookup('k1', T0);
    await turn();
    const waiting = [lookup('k2', T0), lookup('k3', T0)];
    await turn();
    await turn();
    assert.equal(calls.length, 1, 'no second read while the first is in flight');
    calls[0].answer();
    assert.equal((await first)?.agentId, 'agent-of-k1');
    await turn();
    assert.equal(calls.length, 2);
    assert.deepEqual(calls[1].hashes, ['k2', 'k3']);
    calls[1].answer();
    assert.deepEqual(
      (await Promise.all(waiting)).map((p) => p?.agentId),
      ['agent-of-k2', 'agent-of-k3'],
    );
  });

  it(`reads at most ${KEYS_PER_STATEMENT} keys per call; the rest go in the next`, async () => {
    const { calls, read } = recordingReader();
    const lookup = batchedByTurn(read, 2);
    const hashes = Array.from({ length: KEYS_PER_STATEMENT + 3 }, (_, i) => `k${i}`);
    const answers = Promise.all(hashes.map((hash) => lookup(hash, T0)));
    await turn();
    await turn();
    assert.deepEqual(
      calls.map((call) => call.hashes.length),
      [KEYS_PER_STATEMENT, 3],
    );
    for (const call of calls) call.answer();
    assert.deepEqual(
      (await answers).map((p) => p?.agentId),
      hashes.map((hash) => `agent-of-${hash}`),
    );
  });

  it("a failed read fails its own requests only; the next turn's read goes on", async () => {
    const { calls, read } = recordingReader();
    const lookup = batchedByTurn(read, 1);
    const failing = [lookup('k1', T0), lookup('k2', T0)];
    await turn();
    calls[0].answer(new Error('database is locked'));
    for (const request of failing) await assert.rejects(request, /database is locked/);
    const next = lookup('k1', T0);
    await turn();
    calls[1].answer();
    assert.equal((await next)?.agentId, 'agent-of-k1');
  });
});
