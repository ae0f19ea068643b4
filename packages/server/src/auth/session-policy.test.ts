import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isLive, newSessionTimes, touch } from './session-policy.ts';

const T0 = new Date('2026-11-21T10:00:00.000Z');
const at = (minutes: number) => new Date(T0.getTime() + minutes * 60_000);
const LIFETIMES = { idleTimeoutMs: 30 * 60_000, maxAgeMs: 12 * 3_600_000 };

describe('session policy', () => {
  const s = { ...newSessionTimes(T0, LIFETIMES), revoked_at: null };

  it('a new session ends after the idle timeout, and at the latest after the maximum age', () => {
    assert.equal(s.idle_expires_at, at(30).toISOString());
    assert.equal(s.expires_at, at(720).toISOString());
    assert.equal(isLive(s, at(29.99)), true);
    assert.equal(isLive(s, at(30)), false, 'the expiry itself is past');
  });

  it('a revoked session is not live', () => {
    assert.equal(isLive({ ...s, revoked_at: at(1).toISOString() }, at(2)), false);
  });

  it('use within a minute of the last write writes nothing', () => {
    assert.equal(touch(s, at(0.99), LIFETIMES), undefined);
  });

  it('use after a minute slides the idle expiry, never past the absolute one', () => {
    assert.deepEqual(touch(s, at(10), LIFETIMES), {
      last_seen_at: at(10).toISOString(),
      idle_expires_at: at(40).toISOString(),
    });
    const late = { ...s, last_seen_at: at(700).toISOString(), idle_expires_at: at(710).toISOString() };
    assert.equal(touch(late, at(705), LIFETIMES)?.idle_expires_at, at(720).toISOString());
  });

  it('an idle timeout longer than the maximum age is capped by it', () => {
    const long = newSessionTimes(T0, { idleTimeoutMs: 24 * 3_600_000, maxAgeMs: 3_600_000 });
    assert.equal(long.idle_expires_at, long.expires_at);
  });
});
