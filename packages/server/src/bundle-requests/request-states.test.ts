import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { BundleRequestState } from '@guard/contract';
import { type Decision, decide, isDue, type RequestPosition } from './request-states.ts';

const at = new Date('2026-11-21T10:00:00.000Z');
const later = '2026-11-21T11:00:00.000Z';
const earlier = '2026-11-21T09:00:00.000Z';

function pos(state: BundleRequestState, acknowledged = false, expiresAt = later): RequestPosition {
  return { state, acknowledged, expiresAt };
}

const report = (state: 'collecting' | 'uploading' | 'done' | 'failed' | 'interrupted', extra = {}) =>
  ({ kind: 'report', report: { state, ...extra } }) as const;

function changedTo(d: Decision): string | undefined {
  return d.outcome === 'change' ? d.change.state : undefined;
}

describe('bundle request states', () => {
  it('an acknowledgement of a queued or delivered request makes it delivered and acknowledged', () => {
    for (const state of ['queued', 'delivered'] as const) {
      const d = decide(pos(state), { kind: 'acknowledge' }, at);
      assert.equal(changedTo(d), 'delivered');
      assert.equal(d.outcome === 'change' && d.change.acknowledge, true);
    }
  });

  it('a second acknowledgement, or one while collecting, changes nothing', () => {
    assert.deepEqual(decide(pos('delivered', true), { kind: 'acknowledge' }, at), { outcome: 'same' });
    assert.deepEqual(decide(pos('collecting', true), { kind: 'acknowledge' }, at), { outcome: 'same' });
  });

  it('steps move forward and stamp their time; the same report again changes nothing', () => {
    const c = decide(pos('delivered', true), report('collecting'), at);
    assert.equal(c.outcome === 'change' && c.change.stamp, 'collecting_at');
    const u = decide(pos('collecting', true), report('uploading'), at);
    assert.equal(u.outcome === 'change' && u.change.stamp, 'uploading_at');
    assert.deepEqual(decide(pos('uploading', true), report('uploading'), at), { outcome: 'same' });
  });

  it('a step that goes back is refused', () => {
    const d = decide(pos('uploading', true), report('collecting'), at);
    assert.equal(d.outcome, 'refuse');
    assert.equal(d.outcome === 'refuse' && d.code, 'invalid_transition');
  });

  it('done needs the bundle id; failed needs the error, and keeps the step', () => {
    assert.equal(decide(pos('uploading', true), report('done'), at).outcome, 'refuse');
    const done = decide(pos('uploading', true), report('done', { bundle_id: 'bdl_1' }), at);
    assert.equal(done.outcome === 'change' && done.change.bundleId, 'bdl_1');
    assert.equal(decide(pos('collecting', true), report('failed'), at).outcome, 'refuse');
    const failed = decide(
      pos('uploading', true),
      report('failed', { error: { code: 'server', message: 'presign failed: HTTP 503' }, step: 'presign' }),
      at,
    );
    assert.equal(changedTo(failed), 'failed');
    assert.equal(failed.outcome === 'change' && failed.change.step, 'presign');
    assert.equal(failed.outcome === 'change' && failed.change.reason, 'presign failed: HTTP 503');
  });

  it('interrupted may come from any open state and carries its reason', () => {
    for (const state of ['delivered', 'collecting', 'uploading'] as const) {
      const d = decide(pos(state, true), report('interrupted', { reason: 'SIGTERM' }), at);
      assert.equal(changedTo(d), 'interrupted');
      assert.equal(d.outcome === 'change' && d.change.reason, 'SIGTERM');
    }
  });

  it('a final report sent again is accepted; a different one is refused', () => {
    assert.deepEqual(decide(pos('done', true), report('done', { bundle_id: 'b' }), at), { outcome: 'same' });
    const d = decide(pos('done', true), report('failed', { error: { code: 'x', message: 'y' } }), at);
    assert.equal(d.outcome === 'refuse' && d.code, 'request_finished');
  });

  it('a request not acknowledged by its expiry expires first, and the event is refused after', () => {
    assert.ok(isDue(pos('queued', false, earlier), at));
    assert.ok(isDue(pos('delivered', false, earlier), at));
    assert.ok(
      !isDue(pos('delivered', true, earlier), at),
      'an acknowledged request is the agent’s: it does not expire',
    );
    assert.ok(!isDue(pos('collecting', true, earlier), at));
    assert.deepEqual(decide(pos('queued', false, earlier), { kind: 'acknowledge' }, at), { outcome: 'expire_first' });
    assert.equal(changedTo(decide(pos('queued', false, earlier), { kind: 'expire' }, at)), 'expired');
    const d = decide(pos('expired', false, earlier), { kind: 'acknowledge' }, at);
    assert.equal(d.outcome === 'refuse' && d.code, 'request_expired');
  });

  it('expiry is exactly at expires_at, not a millisecond before', () => {
    const exact = at.toISOString();
    assert.ok(isDue(pos('queued', false, exact), at));
    assert.ok(!isDue(pos('queued', false, exact), new Date(at.getTime() - 1)));
  });
});
