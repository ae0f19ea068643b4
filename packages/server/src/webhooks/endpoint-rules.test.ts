import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  HEADER_VALUE_MAX_LENGTH,
  HEADERS_MAX_COUNT,
  HEADERS_MAX_TOTAL_BYTES,
  URL_MAX_LENGTH,
  validateEndpointAddress,
  validateEndpointUrl,
  validateHeaders,
} from './endpoint-rules.ts';

describe('validateEndpointUrl', () => {
  it('accepts https URLs with a host, port, path and query', () => {
    for (const url of [
      'https://example.com/hook',
      'https://hooks.example.com:8443/a/b?token=1&x=y',
      'https://example.com./trailing-dot',
      'https://bücher.example/idn',
      'https://127.0.0.1:8443/',
      'https://[::1]:8443/',
      'https://10.0.0.1/',
    ])
      assert.equal(validateEndpointUrl(url), undefined, url);
  });

  it('refuses http:// with a message that says https is required and why', () => {
    for (const url of ['http://example.com/hook', 'HTTP://example.com/hook', 'http://127.0.0.1:8080/']) {
      const problem = validateEndpointUrl(url);
      assert.ok(problem, url);
      assert.match(problem, /https:\/\//);
      assert.match(problem, /http:\/\//);
    }
  });

  it('refuses other schemes and things that are not absolute URLs', () => {
    for (const url of ['ftp://example.com/', 'ws://example.com/', 'file:///etc/passwd', 'javascript:alert(1)'])
      assert.match(validateEndpointUrl(url) ?? '', /https:\/\//, url);
    for (const url of ['', 'example.com/hook', '/relative', 'https://', 'not a url'])
      assert.ok(validateEndpointUrl(url), JSON.stringify(url));
  });

  it('refuses credentials in the URL and points to a custom Authorization header instead', () => {
    for (const url of ['https://user:pw@example.com/', 'https://user@example.com/', 'https://:pw@example.com/'])
      assert.match(validateEndpointUrl(url) ?? '', /credentials.*Authorization/, url);
  });

  it('refuses a fragment', () => {
    assert.match(validateEndpointUrl('https://example.com/hook#part') ?? '', /fragment/);
  });

  it(`refuses URLs longer than ${URL_MAX_LENGTH} characters`, () => {
    const prefix = 'https://example.com/';
    assert.equal(validateEndpointUrl(prefix + 'a'.repeat(URL_MAX_LENGTH - prefix.length)), undefined);
    assert.match(validateEndpointUrl(prefix + 'a'.repeat(URL_MAX_LENGTH - prefix.length + 1)) ?? '', /at most 2048/);
  });

  it('refuses hosts that are not valid hostnames', () => {
    for (const url of [
      'https://exa_mple.com/',
      'https://-leading.example/',
      'https://trailing-.example/',
      'https://a..b/',
      `https://${'a'.repeat(64)}.example/`,
    ])
      assert.match(validateEndpointUrl(url) ?? '', /not a valid hostname/, url);
  });
});

describe('validateEndpointAddress', () => {
  it('refuses IP-literal hosts outside the public address space, naming the range and the development flag', () => {
    for (const [url, why] of [
      ['https://127.0.0.1:8443/', /127\.0\.0\.1 is a loopback address \(127\.0\.0\.0\/8\)/],
      ['https://[::1]/', /::1 is a loopback address/],
      ['https://[::]/', /:: is an unspecified address/],
      ['https://10.0.0.1/', /private/],
      ['https://192.0.2.1/', /documentation/],
      ['https://198.51.100.1/', /documentation/],
      ['https://203.0.113.1/', /documentation/],
      ['https://[::127.0.0.1]/', /loopback.*embedded as 127\.0\.0\.1/],
      ['https://[::ffff:0:7f00:1]/', /loopback.*embedded as 127\.0\.0\.1/],
      ['https://[2002:7f00:1::]/', /loopback.*embedded as 127\.0\.0\.1/],
      ['https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/', /Teredo/],
      ['https://2130706433/', /127\.0\.0\.1 is a loopback/],
      ['https://0x7f.1/', /127\.0\.0\.1 is a loopback/],
    ] as const) {
      const problem = validateEndpointAddress(url, false);
      assert.ok(problem, url);
      assert.match(problem, why, url);
      assert.match(problem, /--webhook-allow-private/, url);
    }
  });

  it('leaves names to the connect-time check, and accepts public literals', () => {
    for (const url of [
      'https://localhost/',
      'https://example.com/',
      'https://93.184.215.14/',
      'https://[2606:4700::1111]/',
    ])
      assert.equal(validateEndpointAddress(url, false), undefined, url);
  });

  it('accepts every literal when private targets are allowed (development and tests)', () => {
    for (const url of ['https://127.0.0.1/', 'https://[::1]/', 'https://192.0.2.1/'])
      assert.equal(validateEndpointAddress(url, true), undefined, url);
  });
});

describe('validateHeaders', () => {
  it('accepts ordinary custom headers, Authorization included', () => {
    assert.equal(validateHeaders({}), undefined);
    assert.equal(
      validateHeaders({ Authorization: 'Bearer abc.def', 'X-Custom': 'a value\twith tab', "X-Odd!#$%&'*+.^_`|~": '1' }),
      undefined,
    );
  });

  it('refuses names that are not RFC 7230 tokens', () => {
    for (const name of ['', 'X Space', 'X:Colon', 'X-Ü', '(paren)', 'X"quote', 'X\r\nY', 'a'.repeat(101)])
      assert.match(validateHeaders({ [name]: 'v' }) ?? '', /not a valid HTTP header name/, JSON.stringify(name));
  });

  it('refuses CR, LF, NUL and other control characters in values', () => {
    for (const value of ['a\r\nX-Injected: 1', 'a\nb', 'a\rb', 'a\u0000b', 'bell\u0007', 'del\u007f'])
      assert.match(validateHeaders({ 'X-V': value }) ?? '', /control characters/, JSON.stringify(value));
  });

  it('refuses non-string values', () => {
    assert.match(validateHeaders({ 'X-N': 1 }) ?? '', /string value/);
    assert.match(validateHeaders({ 'X-N': null }) ?? '', /string value/);
  });

  it('refuses reserved names in any case: Content-Type, User-Agent, Host, Content-Length, Transfer-Encoding, Connection, Guard-*, webhook-id/-timestamp/-signature', () => {
    const reserved = [
      'Content-Type',
      'content-type',
      'CONTENT-TYPE',
      'User-Agent',
      'Host',
      'Content-Length',
      'Transfer-Encoding',
      'Connection',
      'Guard-Signature',
      'guard-event',
      'GUARD-DELIVERY',
      'Guard-Timestamp',
      'Guard-Anything-Else',
      'webhook-id',
      'Webhook-Timestamp',
      'WEBHOOK-SIGNATURE',
    ];
    for (const name of reserved)
      assert.match(validateHeaders({ [name]: 'x' }) ?? '', /set by Guard and cannot be overridden/, name);
  });

  it('refuses the same name twice in different case', () => {
    assert.match(validateHeaders({ 'X-A': '1', 'x-a': '2' }) ?? '', /twice/);
  });

  it(`refuses more than ${HEADERS_MAX_COUNT} headers`, () => {
    const many = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`X-H${i}`, 'v']));
    assert.equal(validateHeaders(many(HEADERS_MAX_COUNT)), undefined);
    assert.match(validateHeaders(many(HEADERS_MAX_COUNT + 1)) ?? '', /at most 20/);
  });

  it(`refuses a value over ${HEADER_VALUE_MAX_LENGTH} characters and more than ${HEADERS_MAX_TOTAL_BYTES} bytes in all`, () => {
    assert.equal(validateHeaders({ 'X-Big': 'v'.repeat(HEADER_VALUE_MAX_LENGTH) }), undefined);
    assert.match(validateHeaders({ 'X-Big': 'v'.repeat(HEADER_VALUE_MAX_LENGTH + 1) }) ?? '', /longer than 4096/);
    const five = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`X-H${i}`, 'v'.repeat(4000)]));
    assert.match(validateHeaders(five) ?? '', /larger than 16384 bytes/);
  });
});
