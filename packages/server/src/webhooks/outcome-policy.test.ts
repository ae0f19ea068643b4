import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type AttemptOutcome,
  type AttemptResult,
  decideOutcome,
  type EndpointHealth,
  type OutcomePolicyOptions,
} from './outcome-policy.ts';

const NOW = new Date('2026-11-21T10:00:00.000Z');
const STARTED = new Date('2026-11-21T09:59:59.000Z');
const OPTIONS: OutcomePolicyOptions = { schedule: [0, 5_000, 300_000], disableAfterMs: 60_000 };
/** An endpoint's health; a streak given without its length has lasted 3 attempts. */
const health = (enabled: boolean, failingSince: string | null, alertedPercent = 0): EndpointHealth => ({
  enabled,
  failingSince,
  failureStreak: failingSince === null ? 0 : 3,
  alertedPercent,
});
const HEALTHY: EndpointHealth = health(true, null);
const MIDDLE = () => 0.5; // no jitter
const NEVER = () => assert.fail('randomness was not needed here');

function outcome(result: AttemptResult, attempt = 1): AttemptOutcome {
  return {
    delivery: { id: 'd1', endpoint_id: 'e1', tenant_id: 't1', signal_id: 's1' },
    attempt,
    startedAt: STARTED,
    durationMs: 42,
    result,
  };
}
const response = (status: number, retryAfter?: string, excerpt = 'body'): AttemptResult => ({
  kind: 'response',
  status,
  retryAfter,
  excerpt,
});
const error = (message: string): AttemptResult => ({ kind: 'error', error: message });
/** The decision for an outcome; the endpoint healthy unless given (`undefined`: deleted). */
function decide(
  o: AttemptOutcome,
  ...rest: [] | [EndpointHealth | undefined] | [EndpointHealth | undefined, () => number]
) {
  return decideOutcome(o, rest.length === 0 ? HEALTHY : rest[0], OPTIONS, NOW, rest[1] ?? MIDDLE);
}

describe('decideOutcome: success', () => {
  it('any 2xx succeeds: the delivery completes with its status and the attempt is logged without an error', () => {
    for (const status of [200, 201, 204, 299]) {
      const d = decide(outcome(response(status), 2), HEALTHY, NEVER);
      assert.equal(d.outcome, 'succeeded');
      assert.deepEqual(d.delivery, {
        kind: 'succeeded',
        attempts: 2,
        lastStatus: status,
        completedAt: NOW.toISOString(),
      });
      assert.deepEqual(d.attempt, {
        attempt: 2,
        startedAt: STARTED.toISOString(),
        durationMs: 42,
        status,
        error: null,
        responseExcerpt: 'body',
        responseHeaders: null,
      });
      assert.equal(d.disable, undefined);
    }
  });

  it('ends a failing streak, and leaves a healthy or deleted endpoint as it is', () => {
    assert.equal(decide(outcome(response(200)), health(true, STARTED.toISOString())).failingSince, null);
    assert.equal(decide(outcome(response(200)), health(false, STARTED.toISOString())).failingSince, null);
    assert.equal(decide(outcome(response(200)), HEALTHY).failingSince, undefined);
    assert.equal(decide(outcome(response(200)), undefined).failingSince, undefined);
  });
});

describe('decideOutcome: failure', () => {
  it('names the failure: HTTP status, redirects not followed, or the error as the send step gave it', () => {
    const lastError = (r: AttemptResult) => {
      const d = decide(outcome(r)).delivery;
      assert.ok(d.kind === 'retry');
      return d.lastError;
    };
    assert.equal(lastError(response(500)), 'HTTP 500');
    assert.equal(lastError(response(404)), 'HTTP 404');
    assert.equal(lastError(response(199)), 'HTTP 199');
    assert.equal(lastError(response(301)), 'HTTP 301 (redirects are not followed)');
    assert.equal(lastError(response(399)), 'HTTP 399 (redirects are not followed)');
    assert.equal(lastError(response(300)), 'HTTP 300 (redirects are not followed)');
    assert.equal(lastError(error('ECONNREFUSED: connect ECONNREFUSED')), 'ECONNREFUSED: connect ECONNREFUSED');
  });

  it('retries at the next scheduled time after the batch is recorded, keeping status and excerpt', () => {
    const d = decide(outcome(response(503, undefined, 'busy'), 2));
    assert.equal(d.outcome, 'retrying');
    assert.deepEqual(d.delivery, {
      kind: 'retry',
      attempts: 2,
      lastStatus: 503,
      lastError: 'HTTP 503',
      nextAttemptAt: new Date(NOW.getTime() + 300_000).toISOString(),
    });
    assert.deepEqual(d.attempt, {
      attempt: 2,
      startedAt: STARTED.toISOString(),
      durationMs: 42,
      status: 503,
      error: 'HTTP 503',
      responseExcerpt: 'busy',
      responseHeaders: null,
    });
  });

  it('keeps the response headers the send step kept, and none without a response', () => {
    const headers = JSON.stringify({ headers: { 'content-type': 'text/plain' }, omitted: 0 });
    assert.equal(decide(outcome({ ...response(503), headers } as AttemptResult)).attempt?.responseHeaders, headers);
    assert.equal(decide(outcome({ ...response(200), headers } as AttemptResult)).attempt?.responseHeaders, headers);
    assert.equal(decide(outcome(error('ECONNRESET'))).attempt?.responseHeaders, null);
  });

  it('an error without a response has no status and no excerpt', () => {
    const d = decide(outcome(error('timed out after 15 s')));
    assert.equal(d.attempt?.status, null);
    assert.equal(d.attempt?.responseExcerpt, null);
    assert.equal(d.attempt?.error, 'timed out after 15 s');
    assert.ok(d.delivery.kind === 'retry');
    assert.equal(d.delivery.lastStatus, null);
  });

  it('jitters the retry time with the randomness it is given', () => {
    const at = (random: () => number) => {
      const d = decide(outcome(response(500), 2), HEALTHY, random).delivery;
      assert.ok(d.kind === 'retry');
      return Date.parse(d.nextAttemptAt) - NOW.getTime();
    };
    assert.equal(
      at(() => 0),
      240_000,
    );
    assert.equal(
      at(() => 0.5),
      300_000,
    );
  });

  it('honours a longer Retry-After, in seconds or as a date; a shorter one does not hurry the schedule', () => {
    const delay = (retryAfter: string) => {
      const d = decide(outcome(response(429, retryAfter))).delivery;
      assert.ok(d.kind === 'retry');
      return Date.parse(d.nextAttemptAt) - NOW.getTime();
    };
    assert.equal(delay('120'), 120_000);
    assert.equal(delay(new Date(NOW.getTime() + 90_000).toUTCString()), 90_000);
    assert.equal(delay('1'), 5_000);
    assert.equal(delay('soon'), 5_000);
  });

  it('fails the delivery once the schedule is exhausted', () => {
    const d = decide(outcome(response(500), 3), HEALTHY, NEVER);
    assert.equal(d.outcome, 'failed');
    assert.deepEqual(d.delivery, {
      kind: 'failed',
      attempts: 3,
      lastStatus: 500,
      lastError: 'HTTP 500',
      completedAt: NOW.toISOString(),
    });
    assert.equal(d.attempt?.attempt, 3);
  });

  it('gives no retry when the endpoint was disabled or deleted meanwhile, and leaves its health alone', () => {
    for (const h of [health(false, null), undefined]) {
      const d = decide(outcome(response(500), 1), h, NEVER);
      assert.equal(d.outcome, 'failed');
      assert.equal(d.delivery.kind, 'failed');
      assert.ok(d.attempt, 'the attempt is still logged');
      assert.equal(d.failingSince, undefined);
      assert.equal(d.disable, undefined);
    }
  });
});

describe('decideOutcome: endpoint health', () => {
  it('a first failure starts the streak at the attempt’s start', () => {
    const d = decide(outcome(response(500)));
    assert.equal(d.failingSince, STARTED.toISOString());
    assert.equal(d.disable, undefined);
  });

  it("a test event's failure moves no streak: no failing, no alert, no disabling; it is still retried", () => {
    const test = (result: AttemptResult): AttemptOutcome => ({ ...outcome(result), testEvent: true });
    const first = decide(test(response(500)));
    assert.equal(first.failingSince, undefined);
    assert.equal(first.failureStreak, undefined);
    assert.equal(first.outcome, 'retrying');
    const late = decide(test(error('ECONNREFUSED')), health(true, new Date(NOW.getTime() - 59_000).toISOString(), 50));
    assert.equal(late.disable, undefined);
    assert.equal(late.alert, undefined);
    const expired = decide(test(response(503)), health(true, new Date(NOW.getTime() - 120_000).toISOString()));
    assert.equal(expired.disable, undefined);
    assert.equal(
      decide(test(response(200)), health(true, STARTED.toISOString())).failingSince,
      null,
      'a success still ends a streak',
    );
    assert.ok(decide(test(response(410))).disable, '410 Gone still disables');
  });

  it('a failure inside the window continues the streak', () => {
    const since = new Date(NOW.getTime() - 59_999).toISOString();
    const d = decide(outcome(response(500)), health(true, since));
    assert.equal(d.failingSince, undefined);
    assert.equal(d.disable, undefined);
  });

  it('a failure once the streak has lasted the window disables the endpoint, saying since when and the last error', () => {
    const since = new Date(NOW.getTime() - 60_000).toISOString();
    const d = decide(outcome(error('ECONNREFUSED: refused')), health(true, since));
    assert.deepEqual(d.disable, {
      reason: `disabled automatically: every delivery attempt failed since ${since} (last: ECONNREFUSED: refused)`,
      at: NOW.toISOString(),
    });
    assert.equal(d.outcome, 'retrying', 'the delivery itself is decided as usual; disabling fails it with the rest');
  });

  it('410 Gone disables the endpoint at once, on its first failure, and fails the delivery without a retry', () => {
    for (const h of [HEALTHY, health(true, new Date(NOW.getTime() - 1000).toISOString())]) {
      const d = decide(outcome(response(410)), h, NEVER);
      assert.deepEqual(d.disable, {
        reason: 'disabled: the receiver answered 410 Gone (the endpoint is no more)',
        at: NOW.toISOString(),
      });
      assert.equal(d.outcome, 'failed');
      assert.equal(d.delivery.kind, 'failed');
      assert.equal(d.failureStreak, h.failureStreak + 1);
      assert.equal(d.failingSince, h.failingSince === null ? STARTED.toISOString() : undefined);
    }
    // An endpoint already disabled (or deleted) is not disabled again.
    assert.equal(decide(outcome(response(410)), health(false, null)).disable, undefined);
  });

  it('the endpoint disables exactly when the streak reaches the window (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10 * 60_000 }), (age) => {
        const since = new Date(NOW.getTime() - age).toISOString();
        const d = decide(outcome(response(502)), health(true, since));
        assert.equal(d.disable !== undefined, age >= OPTIONS.disableAfterMs);
        assert.equal(d.failingSince, undefined);
      }),
    );
  });
});

describe('decideOutcome: abandoned', () => {
  it('fails the delivery without an attempt row, a retry, or a change to the endpoint', () => {
    const d = decide(
      outcome({ kind: 'abandoned', reason: 'the signal no longer exists' }),
      health(true, new Date(0).toISOString()),
      NEVER,
    );
    assert.deepEqual(d, {
      outcome: 'failed',
      delivery: { kind: 'abandoned', lastError: 'the signal no longer exists', completedAt: NOW.toISOString() },
      attempt: undefined,
      failingSince: undefined,
      failureStreak: undefined,
      alert: undefined,
      disable: undefined,
    });
  });
});

describe('decideOutcome (property)', () => {
  it('succeeds exactly on 2xx; every other result is retried or failed, and only an enabled endpoint is retried', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.integer({ min: 100, max: 599 }).map((s) => response(s)),
          fc.string().map((e) => error(e)),
        ),
        fc.integer({ min: 1, max: 5 }),
        fc.option(
          fc.boolean().map((enabled) => health(enabled, null)),
          { nil: undefined },
        ),
        (result, attempt, health) => {
          const d = decide(outcome(result, attempt), health);
          const ok = result.kind === 'response' && result.status >= 200 && result.status < 300;
          assert.equal(d.outcome === 'succeeded', ok);
          assert.equal(d.attempt?.attempt, attempt);
          if (!ok) {
            const gone = result.kind === 'response' && result.status === 410;
            const retried = health?.enabled === true && attempt < OPTIONS.schedule.length && !gone;
            assert.equal(d.outcome, retried ? 'retrying' : 'failed');
            assert.equal(d.delivery.kind, retried ? 'retry' : 'failed');
            assert.equal(d.failingSince, health?.enabled ? STARTED.toISOString() : undefined);
          }
        },
      ),
    );
  });
});

describe('decideOutcome: failing alerts (window 60 s)', () => {
  const sinceAgo = (ms: number) => new Date(NOW.getTime() - ms).toISOString();

  it('counts failed attempts in a row, and a success resets the count', () => {
    assert.equal(decide(outcome(response(500))).failureStreak, 1);
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(1_000))).failureStreak, 4);
    assert.equal(decide(outcome(response(200)), health(true, sinceAgo(1_000))).failureStreak, 0);
    assert.equal(decide(outcome(response(200))).failureStreak, undefined, 'nothing to write when there was no streak');
  });

  it('announces 50 %, 75 % and 90 % of the window once each, with when the endpoint will be disabled', () => {
    const since = sinceAgo(30_000);
    assert.deepEqual(decide(outcome(response(500)), health(true, since)).alert, {
      percent: 50,
      failingSince: since,
      disableAt: new Date(Date.parse(since) + 60_000).toISOString(),
      at: NOW.toISOString(),
    });
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(29_999))).alert, undefined);
    assert.equal(decide(outcome(response(500)), health(true, since, 50)).alert, undefined, 'once per streak');
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(45_000), 50)).alert?.percent, 75);
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(54_000), 75)).alert?.percent, 90);
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(59_999), 90)).alert, undefined);
  });

  it('announces only the newest threshold when several passed between two failures', () => {
    assert.equal(decide(outcome(response(500)), health(true, sinceAgo(55_000))).alert?.percent, 90);
  });

  it('announces nothing on the failure that starts a streak, on a success, on a disabled endpoint, or on disabling', () => {
    assert.equal(decide(outcome(response(500))).alert, undefined);
    assert.equal(decide(outcome(response(200)), health(true, sinceAgo(50_000))).alert, undefined);
    assert.equal(decide(outcome(response(500)), health(false, sinceAgo(50_000))).alert, undefined);
    const disabling = decide(outcome(response(500)), health(true, sinceAgo(60_000)));
    assert.ok(disabling.disable);
    assert.equal(disabling.alert, undefined);
  });

  it('announces each threshold at most once per streak, in order, whatever the failures’ timing (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 9_000 }), { minLength: 1, maxLength: 40 }), (gaps) => {
        let h = health(true, NOW.toISOString());
        let t = NOW.getTime();
        const announced: number[] = [];
        for (const gap of gaps) {
          t += gap;
          const d = decideOutcome(outcome(response(500)), h, OPTIONS, new Date(t), MIDDLE);
          if (d.disable) break;
          if (d.alert) {
            announced.push(d.alert.percent);
            h = { ...h, alertedPercent: d.alert.percent };
          }
        }
        assert.deepEqual(
          announced,
          [...new Set(announced)].sort((a, b) => a - b),
        );
      }),
    );
  });
});
