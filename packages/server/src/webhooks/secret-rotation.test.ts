import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeRotation, graceEnd, signingSecrets } from './secret-rotation.ts';

const T0 = new Date('2026-11-21T10:00:00.000Z');
const at = (s: number) => new Date(T0.getTime() + s * 1000);

describe('signingSecrets', () => {
  const endpoint = { secret: 'new', previousSecret: 'old', previousExpiresAtMs: at(60).getTime() };

  it('signs with the new secret, then the old one, during the grace period', () => {
    assert.deepEqual(signingSecrets(endpoint, false, at(0)), ['new', 'old']);
    assert.deepEqual(signingSecrets(endpoint, false, at(59.999)), ['new', 'old']);
  });

  it('signs with the new secret alone from the end of the grace period on, even before the old one is erased', () => {
    assert.deepEqual(signingSecrets(endpoint, false, at(60)), ['new']);
    assert.deepEqual(signingSecrets(endpoint, false, at(3600)), ['new']);
  });

  it('signs the proof test event with the new secret alone', () => {
    assert.deepEqual(signingSecrets(endpoint, true, at(0)), ['new']);
  });

  it('signs with the one secret outside a rotation', () => {
    const plain = { secret: 'only', previousSecret: undefined, previousExpiresAtMs: undefined };
    assert.deepEqual(signingSecrets(plain, false, at(0)), ['only']);
  });
});

describe('activeRotation', () => {
  const columns = {
    previous_secret_sealed: 'v1.x.y.z',
    previous_secret_expires_at: at(60).toISOString(),
    rotation_started_at: T0.toISOString(),
    rotation_proof_signal_id: null,
  };

  it('is the rotation while its grace period runs, with its start, end and proof', () => {
    assert.deepEqual(activeRotation(columns, at(1)), {
      startedAt: T0.toISOString(),
      graceEndsAt: at(60).toISOString(),
      proofSignalId: null,
    });
  });

  it('is nothing once the grace period is over, or without an old secret', () => {
    assert.equal(activeRotation(columns, at(60)), undefined);
    assert.equal(activeRotation({ ...columns, previous_secret_sealed: null }, at(1)), undefined);
    assert.equal(activeRotation({}, at(1)), undefined);
  });
});

describe('graceEnd', () => {
  it('adds the grace period; 0 keeps no old secret', () => {
    assert.equal(graceEnd(T0, 86_400), '2026-11-22T10:00:00.000Z');
    assert.equal(graceEnd(T0, 0), undefined);
  });
});
