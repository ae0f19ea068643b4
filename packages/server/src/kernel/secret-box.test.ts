import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { open, seal } from './secret-box.ts';

const KEY = randomBytes(32);
const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** Flips one bit of the base64url part `index` (1 iv, 2 tag, 3 ciphertext). */
function tamper(sealed: string, index: number): string {
  const parts = sealed.split('.');
  const bytes = Buffer.from(parts[index], 'base64url');
  bytes[0] ^= 1;
  parts[index] = bytes.toString('base64url');
  return parts.join('.');
}

describe('secret box (AES-256-GCM, endpoint id as associated data)', () => {
  it('opens what it sealed', () => {
    assert.equal(open(KEY, seal(KEY, SECRET, 'we_1'), 'we_1'), SECRET);
    assert.equal(open(KEY, seal(KEY, 'ünïcödé ✓', 'we_1'), 'we_1'), 'ünïcödé ✓');
  });

  it('never shows the plaintext and uses a fresh IV each time', () => {
    const a = seal(KEY, SECRET, 'we_1');
    const b = seal(KEY, SECRET, 'we_1');
    assert.notEqual(a, b);
    assert.ok(!a.includes(SECRET) && !a.includes(SECRET.slice(6)));
    assert.match(a, /^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
  });

  it('refuses to open under another endpoint id (a sealed secret copied to another row)', () => {
    assert.throws(() => open(KEY, seal(KEY, SECRET, 'we_1'), 'we_2'));
  });

  it('refuses to open under another key', () => {
    assert.throws(() => open(randomBytes(32), seal(KEY, SECRET, 'we_1'), 'we_1'));
  });

  it('refuses a tampered IV, tag or ciphertext', () => {
    const sealed = seal(KEY, SECRET, 'we_1');
    for (const part of [1, 2, 3]) assert.throws(() => open(KEY, tamper(sealed, part), 'we_1'), `part ${part}`);
  });

  it('refuses an unknown format or version', () => {
    const sealed = seal(KEY, SECRET, 'we_1');
    assert.throws(() => open(KEY, sealed.replace(/^v1\./, 'v2.'), 'we_1'), /unknown sealed-secret format/);
    assert.throws(() => open(KEY, 'v1.abc', 'we_1'), /unknown sealed-secret format/);
    assert.throws(() => open(KEY, SECRET, 'we_1'));
  });
});
