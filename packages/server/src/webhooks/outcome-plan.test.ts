import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { OutcomePolicy } from './delivery-queue.ts';
import { planOutcomes, recordedOf } from './outcome-plan.ts';
import {
  type AttemptOutcome,
  type AttemptResult,
  decideOutcome,
  type EndpointHealth,
  type OutcomeDecision,
  type OutcomePolicyOptions,
} from './outcome-policy.ts';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const OPTIONS: OutcomePolicyOptions = { schedule: [0, 5_000, 300_000], disableAfterMs: 60_000 };
const policy: OutcomePolicy = (o, e) => decideOutcome(o, e, OPTIONS, NOW, () => 0.5);
const HEALTHY: EndpointHealth = { enabled: true, failingSince: null, failureStreak: 0, alertedPercent: 0 };
const ok: AttemptResult = { kind: 'response', status: 200, retryAfter: undefined, excerpt: '' };
const failed: AttemptResult = { kind: 'response', status: 500, retryAfter: undefined, excerpt: 'oops' };

function outcome(
  id: string,
  endpointId: string,
  result: AttemptResult,
  startedAt = '2026-11-21T09:59:59.000Z',
): AttemptOutcome {
  return {
    delivery: { id, endpoint_id: endpointId, tenant_id: 't1', signal_id: `s_${id}` },
    attempt: 1,
    startedAt: new Date(startedAt),
    durationMs: 5,
    result,
  };
}
const reads = (health: Record<string, EndpointHealth>, existing: string[]) => ({
  health: new Map(Object.entries(health)),
  existing: new Set(existing),
});

describe('planOutcomes', () => {
  it('writes each existing delivery with its attempt, in the batch order', () => {
    const batch = [outcome('d1', 'e1', ok), outcome('d2', 'e1', failed)];
    const plan = planOutcomes(batch, reads({ e1: HEALTHY }, ['d1', 'd2']), policy);
    assert.deepEqual(
      plan.deliveries.map((w) => [w.outcome.delivery.id, w.update.kind, w.attempt?.status]),
      [
        ['d1', 'succeeded', 200],
        ['d2', 'retry', 500],
      ],
    );
    assert.deepEqual(
      plan.decisions.map((d) => d?.outcome),
      ['succeeded', 'retrying'],
    );
  });

  it('a delivery that no longer exists is not decided and writes nothing', () => {
    const decided: string[] = [];
    const spy: OutcomePolicy = (o, e) => {
      decided.push(o.delivery.id);
      return policy(o, e);
    };
    const plan = planOutcomes(
      [outcome('gone', 'e1', failed), outcome('d2', 'e1', ok)],
      reads({ e1: HEALTHY }, ['d2']),
      spy,
    );
    assert.deepEqual(decided, ['d2']);
    assert.equal(plan.decisions[0], undefined);
    assert.deepEqual(
      plan.deliveries.map((w) => w.outcome.delivery.id),
      ['d2'],
    );
    assert.equal(plan.health.size, 0, 'the gone delivery started no streak');
    assert.deepEqual(
      [...plan.counts.values()].map((c) => [c.succeeded, c.failed]),
      [[1, 0]],
    );
  });

  it('each outcome sees its endpoint as the outcomes before it left it; only the end state is written', () => {
    const batch = [outcome('d1', 'e1', failed), outcome('d2', 'e1', failed), outcome('d3', 'e2', ok)];
    const seen: (EndpointHealth | undefined)[] = [];
    const spy: OutcomePolicy = (o, e) => {
      seen.push(e);
      return policy(o, e);
    };
    const plan = planOutcomes(batch, reads({ e1: HEALTHY, e2: HEALTHY }, ['d1', 'd2', 'd3']), spy);
    assert.deepEqual(
      seen.map((h) => h?.failureStreak),
      [0, 1, 0],
    );
    assert.deepEqual(
      [...plan.health],
      [['e1', { enabled: true, failingSince: '2026-11-21T09:59:59.000Z', failureStreak: 2, alertedPercent: 0 }]],
    );
    assert.deepEqual(
      [...plan.counts.values()].map((c) => [c.endpointId, c.succeeded, c.failed]),
      [
        ['e1', 0, 2],
        ['e2', 1, 0],
      ],
    );
  });

  it('counts attempts per endpoint and hour, not abandoned deliveries', () => {
    const batch = [
      outcome('d1', 'e1', failed, '2026-11-21T08:59:59.000Z'),
      outcome('d2', 'e1', failed),
      outcome('d3', 'e1', { kind: 'abandoned', reason: 'the signal is gone' }),
    ];
    const plan = planOutcomes(batch, reads({ e1: HEALTHY }, ['d1', 'd2', 'd3']), policy);
    assert.deepEqual(
      [...plan.counts.values()].map((c) => [c.hour, c.failed]),
      [
        ['2026-11-21T08:00:00.000Z', 1],
        ['2026-11-21T09:00:00.000Z', 1],
      ],
    );
    assert.equal(plan.deliveries[2]?.attempt, undefined);
  });

  it('a streak past the disable window disables the endpoint and announces that alone', () => {
    const failing: EndpointHealth = {
      enabled: true,
      failingSince: '2026-11-21T09:58:00.000Z',
      failureStreak: 7,
      alertedPercent: 90,
    };
    const plan = planOutcomes([outcome('d1', 'e1', failed)], reads({ e1: failing }, ['d1']), policy);
    const reason =
      'disabled automatically: every delivery attempt failed since 2026-11-21T09:58:00.000Z (last: HTTP 500)';
    assert.deepEqual([...plan.disable], [['e1', { reason, at: NOW.toISOString() }]]);
    assert.deepEqual(
      plan.announcements.map((a) => [a.endpointId, a.disabled?.reason, a.lastError]),
      [['e1', reason, 'HTTP 500']],
    );
    assert.deepEqual([...recordedOf(plan).disabled], [['e1', reason]]);
  });

  it('announces the newest threshold a batch crossed, once per endpoint', () => {
    const failing = (alertedPercent: number): EndpointHealth => ({
      enabled: true,
      failingSince: '2026-11-21T09:59:05.000Z',
      failureStreak: 3,
      alertedPercent,
    });
    const plan = planOutcomes(
      [outcome('d1', 'e1', failed), outcome('d2', 'e1', failed)],
      reads({ e1: failing(0) }, ['d1', 'd2']),
      policy,
    );
    assert.deepEqual(
      plan.announcements.map((a) => [a.endpointId, a.alert?.percent]),
      [['e1', 90]],
    );
    assert.equal(plan.health.get('e1')?.alertedPercent, 90);
    assert.equal(plan.disable.size, 0);
  });

  it('never disables an endpoint that no longer exists, whatever the policy says', () => {
    const disabling: OutcomePolicy = (o, e) => ({
      ...(policy(o, e) as OutcomeDecision),
      disable: { reason: 'disabled', at: NOW.toISOString() },
    });
    const plan = planOutcomes([outcome('d1', 'deleted', failed)], reads({}, ['d1']), disabling);
    assert.equal(plan.disable.size, 0);
    assert.equal(recordedOf(plan).disabled.size, 0);
    assert.deepEqual(plan.announcements, []);
    assert.equal(plan.deliveries.length, 1, 'its delivery is still written');
  });
});
