import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { seal } from '../kernel/secret-box.ts';
import { MASKED_HEADER_VALUE, maskHeaders, openHeaders, sealHeaders } from './endpoint-headers.ts';
import { validateHeaders } from './endpoint-rules.ts';

const KEY = randomBytes(32);
const HEADERS = { Authorization: 'Bearer receiver-token', 'X-Team': 'blue' };

describe('custom headers at rest', () => {
  it('opens what it sealed, and the sealed text shows neither names nor values', () => {
    const sealed = sealHeaders(KEY, 'we_1', HEADERS);
    assert.match(sealed, /^v1\./);
    for (const s of ['Authorization', 'receiver-token', 'blue']) assert.ok(!sealed.includes(s), s);
    assert.deepEqual(openHeaders(KEY, 'we_1', sealed), HEADERS);
    assert.deepEqual(openHeaders(KEY, 'we_1', sealHeaders(KEY, 'we_1', {})), {});
  });

  it('reads a map an earlier release stored in clear', () => {
    assert.deepEqual(openHeaders(KEY, 'we_1', JSON.stringify(HEADERS)), HEADERS);
    assert.deepEqual(openHeaders(KEY, 'we_1', '{}'), {});
  });

  it("won't open a map copied from another endpoint, an endpoint secret, or under another key", () => {
    assert.throws(() => openHeaders(KEY, 'we_2', sealHeaders(KEY, 'we_1', HEADERS)));
    assert.throws(() => openHeaders(KEY, 'we_1', seal(KEY, JSON.stringify(HEADERS), 'we_1')));
    assert.throws(() => openHeaders(randomBytes(32), 'we_1', sealHeaders(KEY, 'we_1', HEADERS)));
  });

  it('masks every value with a text no real value can be (it is refused as a header value)', () => {
    assert.deepEqual(maskHeaders(HEADERS), { Authorization: MASKED_HEADER_VALUE, 'X-Team': MASKED_HEADER_VALUE });
    assert.ok(validateHeaders({ 'X-Test': MASKED_HEADER_VALUE }), 'the mask is not a storable value');
  });
});
