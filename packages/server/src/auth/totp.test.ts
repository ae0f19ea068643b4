// TOTP against RFC 6238's published vectors (Appendix B, SHA-1, the ASCII secret
// "12345678901234567890"): DESIGN §6 takes 6 digits, the vectors' last six. One step of drift
// either way is taken, two are not; recovery codes are ten, distinct, without look-alikes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { newRecoveryCodes, normaliseRecoveryCode, otpauthUrl, totpStep } from './totp.ts';

/** base32 of the ASCII "12345678901234567890". */
const RFC_SECRET = 'GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ';

/** [Unix seconds, the RFC's 8-digit SHA-1 TOTP]. */
const VECTORS: [number, string][] = [
  [59, '94287082'],
  [1111111109, '07081804'],
  [1111111111, '14050471'],
  [1234567890, '89005924'],
  [2000000000, '69279037'],
  [20000000000, '65353130'],
];

describe('TOTP (RFC 6238, SHA-1, 6 digits, 30 s)', () => {
  it("takes each published code's last six digits at its time, with the step it belongs to", () => {
    for (const [seconds, code] of VECTORS) {
      const at = new Date(seconds * 1000);
      assert.equal(totpStep(RFC_SECRET, code.slice(2), at), Math.floor(seconds / 30), `T=${seconds}`);
    }
  });

  it('takes a code one step early or late, not two; and nothing but six digits', () => {
    const [seconds, code] = VECTORS[3];
    const six = code.slice(2);
    const step = Math.floor(seconds / 30);
    assert.equal(totpStep(RFC_SECRET, six, new Date((seconds + 30) * 1000)), step);
    assert.equal(totpStep(RFC_SECRET, six, new Date((seconds - 30) * 1000)), step);
    assert.equal(totpStep(RFC_SECRET, six, new Date((seconds + 60) * 1000)), undefined);
    assert.equal(totpStep(RFC_SECRET, `${six.slice(0, 3)} ${six.slice(3)}`, new Date(seconds * 1000)), step);
    for (const bad of ['', '12345', '1234567', 'abcdef', code])
      assert.equal(totpStep(RFC_SECRET, bad, new Date(seconds * 1000)), undefined);
  });

  it('the otpauth URL names Guard and the account, with the parameters apps read', () => {
    const url = new URL(otpauthUrl(RFC_SECRET, 'ada@acme.example'));
    assert.equal(`${url.protocol}//${url.host}`, 'otpauth://totp');
    assert.equal(decodeURIComponent(url.pathname), '/Guard:ada@acme.example');
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      issuer: 'Guard',
      secret: RFC_SECRET,
      algorithm: 'SHA1',
      digits: '6',
      period: '30',
    });
  });

  it('recovery codes: ten, distinct, xxxxx-xxxxx without look-alikes; typed in any form they normalise', () => {
    const codes = newRecoveryCodes();
    assert.equal(codes.length, 10);
    assert.equal(new Set(codes).size, 10);
    for (const c of codes) assert.match(c, /^[a-hjkmnp-z2-9]{5}-[a-hjkmnp-z2-9]{5}$/);
    assert.equal(normaliseRecoveryCode(` ${codes[0].toUpperCase().replace('-', '')} `), codes[0]);
  });
});
