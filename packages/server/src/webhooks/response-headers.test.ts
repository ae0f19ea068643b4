import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  isCredentialHeader,
  keptResponseHeaders,
  MASKED_VALUE,
  RESPONSE_HEADER_VALUE_MAX_CHARS,
  RESPONSE_HEADERS_MAX_BYTES,
  readResponseHeaders,
} from './response-headers.ts';

const kept = (h: Record<string, string | string[] | undefined>) => readResponseHeaders(keptResponseHeaders(h));

describe('the response headers an attempt keeps', () => {
  test('keeps each header in the order received, duplicates joined', () => {
    assert.deepEqual(kept({ 'content-type': 'application/json', vary: ['accept', 'origin'], 'x-request-id': 'r1' }), {
      headers: { 'content-type': 'application/json', vary: 'accept, origin', 'x-request-id': 'r1' },
      omitted: 0,
    });
  });

  test('masks the value of every credential-like header, keeps authentication challenges', () => {
    const h = kept({
      'set-cookie': ['sid=abc; HttpOnly', 'csrf=def'],
      authorization: 'Bearer xyz',
      'x-api-key': 'k',
      'x-auth-token': 't',
      'x-session-id': 's',
      'www-authenticate': 'Bearer realm="hooks"',
      'retry-after': '30',
    });
    assert.deepEqual(h?.headers, {
      'set-cookie': MASKED_VALUE,
      authorization: MASKED_VALUE,
      'x-api-key': MASKED_VALUE,
      'x-auth-token': MASKED_VALUE,
      'x-session-id': MASKED_VALUE,
      'www-authenticate': 'Bearer realm="hooks"',
      'retry-after': '30',
    });
    assert.equal(isCredentialHeader('Keep-Alive'), false);
    assert.equal(isCredentialHeader('X-Webhook-Signature'), true);
  });

  test('cuts a long value and stops at the size cap, counting what it left out', () => {
    const long = kept({ server: 'x'.repeat(2000) });
    assert.equal(long?.headers.server, `${'x'.repeat(RESPONSE_HEADER_VALUE_MAX_CHARS)}…`);
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`x-h-${i}`, 'v'.repeat(100)]));
    const json = keptResponseHeaders(many);
    assert.ok(Buffer.byteLength(json) <= RESPONSE_HEADERS_MAX_BYTES, `${Buffer.byteLength(json)} bytes`);
    const read = readResponseHeaders(json);
    assert.ok(read && read.omitted > 0 && Object.keys(read.headers).length + read.omitted === 100);
  });

  test('a header named like an Object member is kept as a header', () => {
    assert.deepEqual(kept({ constructor: 'a', __proto__: 'b' } as never)?.headers, { constructor: 'a' });
    assert.deepEqual(kept(JSON.parse('{"__proto__":"b"}'))?.headers, JSON.parse('{"__proto__":"b"}'));
  });

  test('reads nothing from nothing, or from what is not its JSON', () => {
    assert.equal(readResponseHeaders(null), null);
    assert.equal(readResponseHeaders('not json'), null);
    assert.equal(readResponseHeaders('[]'), null);
  });
});
