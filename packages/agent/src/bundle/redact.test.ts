import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createReadStream, readdirSync, readFileSync } from 'node:fs';
import { type Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { describe, test } from 'node:test';
import { REDACTED_VALUE, REDACTION_PATTERN } from '@guard/contract/bundle';
import fc from 'fast-check';
import {
  compileExtraKeys,
  type KeyRules,
  longLineMarker,
  MAX_EXTRA_KEY_CHARS,
  MAX_EXTRA_KEYS,
  MAX_LINE_BYTES,
  MAX_VALUE_LINES,
  RedactStream,
  redactLine,
} from './redact.ts';

const FIXTURES = new URL('../../../../testdata/redaction/', import.meta.url);
const REQUIRED_FIXTURES = [
  'slog-text',
  'slog-dotted-groups',
  'json-lines',
  'json-nested-any-depth',
  'escaped-json-in-string',
  'malformed-lines',
  'no-secrets',
  'mixed-crlf-and-utf8',
  'already-redacted',
  'near-miss-keys',
  'escaped-keys-and-single-quotes',
  'multi-line-values',
];
const HINTS = ['_token', '_secret', 'api_key'];

interface Redacted {
  out: Buffer;
  masked: number;
  /** How many chunks the stream pushed (0 in discard mode). */
  pushes: number;
}

interface StreamOptions {
  discard?: boolean;
  extraKeys?: KeyRules;
}

async function redactStream(source: Readable, options: StreamOptions = {}): Promise<Redacted> {
  const stream = new RedactStream(options);
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      parts.push(chunk);
      done();
    },
  });
  await pipeline(source, stream, sink);
  return { out: Buffer.concat(parts), masked: stream.masked, pushes: parts.length };
}

/** Writes the chunks straight into a RedactStream (cheaper than a pipeline, for properties). */
async function redactChunks(chunks: Buffer[], options: StreamOptions = {}): Promise<Redacted> {
  const stream = new RedactStream(options);
  const parts: Buffer[] = [];
  stream.on('data', (chunk: Buffer) => parts.push(chunk));
  const ended = once(stream, 'end');
  for (const chunk of chunks) stream.write(chunk);
  stream.end();
  await ended;
  return { out: Buffer.concat(parts), masked: stream.masked, pushes: parts.length };
}

/** Splits `buf` at the given offsets (any order, duplicates and out-of-range ignored). */
function splitAt(buf: Buffer, cuts: number[]): Buffer[] {
  const points = [...new Set(cuts.filter((c) => c > 0 && c < buf.length))].sort((a, b) => a - b);
  const chunks: Buffer[] = [];
  let from = 0;
  for (const p of [...points, buf.length]) {
    chunks.push(buf.subarray(from, p));
    from = p;
  }
  return chunks;
}

function splitEvery(buf: Buffer, size: number): Buffer[] {
  const chunks: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) chunks.push(buf.subarray(i, i + size));
  return chunks;
}

/** Lines as a reader counts them: a last line without a newline still counts. */
function lineCount(buf: Buffer): number {
  let n = 0;
  for (let at = buf.indexOf(10); at >= 0; at = buf.indexOf(10, at + 1)) n++;
  return buf.length > 0 && buf[buf.length - 1] !== 10 ? n + 1 : n;
}

function occurrences(haystack: Buffer | string, needle: string): number {
  const text = typeof haystack === 'string' ? haystack : haystack.toString('latin1');
  return text.split(needle).length - 1;
}

/** redactLine works on latin1 strings (one char per byte); these tests speak UTF-8. */
function redactUtf8(line: string): { line: string; masked: number } {
  const r = redactLine(Buffer.from(line, 'utf8').toString('latin1'));
  return { line: Buffer.from(r.line, 'latin1').toString('utf8'), masked: r.masked };
}

/** Go's strconv.Quote for the printable ASCII these tests use. */
function slogQuote(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function fixtureNames(): string[] {
  const found = readdirSync(FIXTURES)
    .filter((f) => f.endsWith('.before.log'))
    .map((f) => f.slice(0, -'.before.log'.length));
  return [...new Set([...REQUIRED_FIXTURES, ...found])].sort();
}

function readFixture(name: string): { before: Buffer; after: Buffer } {
  return {
    before: readFileSync(new URL(`${name}.before.log`, FIXTURES)),
    after: readFileSync(new URL(`${name}.after.log`, FIXTURES)),
  };
}

function differingLines(before: Buffer, expected: Buffer, actual: Buffer): string[] {
  const [b, e, a] = [before, expected, actual].map((buf) => buf.toString('utf8').split('\n'));
  const out: string[] = [];
  for (let i = 0; i < Math.max(e.length, a.length); i++) {
    if (e[i] !== a[i]) out.push(`line ${i + 1}\n  input:    ${b[i]}\n  expected: ${e[i]}\n  actual:   ${a[i]}`);
  }
  return out;
}

describe('golden fixtures (testdata/redaction)', () => {
  for (const name of fixtureNames()) {
    test(`${name}: streaming .before.log gives .after.log byte for byte`, async () => {
      const { before, after } = readFixture(name);
      // A small highWaterMark puts chunk boundaries inside lines, secrets and UTF-8 chars.
      for (const highWaterMark of [64 * 1024, 61]) {
        const r = await redactStream(createReadStream(new URL(`${name}.before.log`, FIXTURES), { highWaterMark }));
        if (!r.out.equals(after)) {
          // Name the lines that differ, so a failure reads as a list of disagreements.
          assert.deepEqual(differingLines(before, after, r.out), []);
          assert.fail(`${name}: output differs from .after.log in bytes that UTF-8 decoding hides`);
        }
        assert.equal(r.masked, occurrences(after, REDACTED_VALUE) - occurrences(before, REDACTED_VALUE));
        assert.equal(lineCount(r.out), lineCount(before));
      }
    });
  }

  test('every fixture pair has as many lines after as before', () => {
    for (const name of fixtureNames()) {
      const { before, after } = readFixture(name);
      assert.equal(lineCount(after), lineCount(before), name);
    }
  });

  test('an .after.log comes back unchanged, with nothing counted: redaction is idempotent', async () => {
    for (const name of fixtureNames()) {
      const { after } = readFixture(name);
      const r = await redactChunks([after]);
      assert.ok(r.out.equals(after), name);
      assert.equal(r.masked, 0, name);
    }
  });

  test('fixtures without secrets are identical before and after', () => {
    for (const name of ['no-secrets', 'near-miss-keys']) {
      const { before, after } = readFixture(name);
      assert.ok(after.equals(before), name);
    }
  });
});

describe('redactLine', () => {
  test('masks the value of a slog key and nothing around it', () => {
    assert.deepEqual(redactLine('level=INFO api_key=gk_live_123 user=root'), {
      line: 'level=INFO api_key=[REDACTED] user=root',
      masked: 1,
    });
  });

  test('masks every key of the pattern: api_key, enroll_token, *_token, *_secret', () => {
    const r = redactLine('api_key=a1 enroll_token=b2 refresh_token=c3 client_secret=d4 _token=e5');
    assert.deepEqual(r, {
      line: 'api_key=[REDACTED] enroll_token=[REDACTED] refresh_token=[REDACTED] client_secret=[REDACTED] _token=[REDACTED]',
      masked: 5,
    });
  });

  test('masks the last segment of a dotted group key', () => {
    assert.deepEqual(redactLine('req.method=POST req.client_secret=cs_1 req.id=7'), {
      line: 'req.method=POST req.client_secret=[REDACTED] req.id=7',
      masked: 1,
    });
    assert.equal(redactLine('a.b.c.api_key=gk_1').line, 'a.b.c.api_key=[REDACTED]');
  });

  test('does not mask a dotted key whose earlier segment matches but whose last does not', () => {
    const line = 'client_secret.rotated_at=2026-11-01 api_key.id=key_01 refresh_token.ttl=1h';
    assert.deepEqual(redactLine(line), { line, masked: 0 });
  });

  test("keeps a quoted value's quotes", () => {
    assert.deepEqual(redactLine('access_token="at with \\"quotes\\" and = signs" ttl=1h'), {
      line: 'access_token="[REDACTED]" ttl=1h',
      masked: 1,
    });
  });

  test('masks key=value pairs carried inside a quoted message', () => {
    assert.deepEqual(redactLine('msg="retry with api_key=gk_1 from config" attempt=2'), {
      line: 'msg="retry with api_key=[REDACTED] from config" attempt=2',
      masked: 1,
    });
  });

  test('masks JSON string, number and literal values as a JSON string', () => {
    const line = '{"api_key":"gk_1","retry_token":12345,"cached_token":null,"a_secret":true,"b_secret":-1.5e3,"n":1}';
    assert.deepEqual(redactLine(line), {
      line: '{"api_key":"[REDACTED]","retry_token":"[REDACTED]","cached_token":"[REDACTED]","a_secret":"[REDACTED]","b_secret":"[REDACTED]","n":1}',
      masked: 5,
    });
  });

  test('masks JSON object and array values whole', () => {
    const line = '{"client_secret":{"kid":"k1","v":{"x":[1,"}]"]}},"recovery_token":["r1",["r2"]],"n":1}';
    const r = redactLine(line);
    assert.deepEqual(r, { line: '{"client_secret":"[REDACTED]","recovery_token":"[REDACTED]","n":1}', masked: 2 });
    assert.deepEqual(JSON.parse(r.line), { client_secret: '[REDACTED]', recovery_token: '[REDACTED]', n: 1 });
  });

  test('masks matching JSON keys at any depth, keeping the document valid', () => {
    const doc = { msg: 'cfg', a: { b: [{ c: { api_key: 'gk_1', keep: 'x' } }, { d: { push_token: 7 } }] }, n: 1 };
    const r = redactLine(JSON.stringify(doc));
    assert.equal(r.masked, 2);
    assert.deepEqual(JSON.parse(r.line), {
      msg: 'cfg',
      a: { b: [{ c: { api_key: '[REDACTED]', keep: 'x' } }, { d: { push_token: '[REDACTED]' } }] },
      n: 1,
    });
  });

  test('keeps the spacing around a JSON colon', () => {
    assert.equal(redactLine('{"api_key" : "gk 1" , "ok": true}').line, '{"api_key" : "[REDACTED]" , "ok": true}');
  });

  test('masks an escaped JSON string value inside a logged string', () => {
    assert.deepEqual(redactLine(String.raw`msg=resp body="{\"upload_token\":\"ut_1\",\"n\":1}" status=201`), {
      line: String.raw`msg=resp body="{\"upload_token\":\"[REDACTED]\",\"n\":1}" status=201`,
      masked: 1,
    });
  });

  test('masks an escaped JSON key that follows another escaped string value', () => {
    const line = String.raw`{"msg":"raw","raw":"{\"agent_id\":\"ag_1\",\"api_key\":\"gk_escaped_1\"}"}`;
    const r = redactLine(line);
    assert.equal(r.line, String.raw`{"msg":"raw","raw":"{\"agent_id\":\"ag_1\",\"api_key\":\"[REDACTED]\"}"}`);
    assert.equal(r.masked, 1);
  });

  test('masks escaped JSON numbers, literals, objects and arrays without breaking the enclosing string', () => {
    const cases: [string, string][] = [
      [
        String.raw`body="{\"retry_token\":12345678,\"n\":1}" user=root`,
        String.raw`body="{\"retry_token\":\"[REDACTED]\",\"n\":1}" user=root`,
      ],
      [
        String.raw`body="{\"cached_token\":null}" user=root`,
        String.raw`body="{\"cached_token\":\"[REDACTED]\"}" user=root`,
      ],
      [
        String.raw`body="{\"client_secret\":{\"kid\":\"k1\"},\"n\":1}" user=root`,
        String.raw`body="{\"client_secret\":\"[REDACTED]\",\"n\":1}" user=root`,
      ],
      [
        String.raw`body="{\"recovery_token\":[\"r1\",\"r2\"]}" user=root`,
        String.raw`body="{\"recovery_token\":\"[REDACTED]\"}" user=root`,
      ],
    ];
    for (const [line, want] of cases) assert.deepEqual(redactLine(line), { line: want, masked: 1 }, line);
  });

  test('scans a line that is not valid JSON', () => {
    const cases: [string, string][] = [
      ['{"msg":"cut","api_key":"gk_1","agent_i', '{"msg":"cut","api_key":"[REDACTED]","agent_i'],
      ['}}}{"refresh_token": "rt_1" ]]]', '}}}{"refresh_token": "[REDACTED]" ]]]'],
      ['main.enroll({0xc0, "api_key": "gk_2"})', 'main.enroll({0xc0, "api_key": "[REDACTED]"})'],
      ['{"msg":"cut","client_secret":"cs_unterminated', '{"msg":"cut","client_secret":"[REDACTED]"'],
      ['{"msg":"cut","client_secret":{"a":[1,2', '{"msg":"cut","client_secret":"[REDACTED]"'],
      ['not a log line: enroll_token=et_3 and text', 'not a log line: enroll_token=[REDACTED] and text'],
    ];
    for (const [line, want] of cases) assert.deepEqual(redactLine(line), { line: want, masked: 1 }, line);
  });

  test('does not mask keys that only resemble the pattern', () => {
    const keys = [
      'xapi_key',
      'api_keys',
      'token',
      'secret',
      'a_tokens',
      'API_KEY',
      'Api_Key',
      'my_Token',
      'CLIENT_SECRET',
      'api_key_id',
      'enroll_token_expires_at',
      'client_secret_hash',
      'secret_access_key',
      'x-api_key',
      'apikey',
      'api-key',
      'enrolltoken',
      'tokenizer',
      'the_token_is',
      'my_secrets',
      'session.token',
      'auth.secret',
    ];
    for (const key of keys) {
      for (const line of [`${key}=visible_1`, `${key}="visible 2"`, `{${JSON.stringify(key)}:"visible_3"}`]) {
        assert.deepEqual(redactLine(line), { line, masked: 0 }, line);
      }
    }
    const msg = 'msg="token refreshed" reason="the api key and the client secret expire"';
    assert.deepEqual(redactLine(msg), { line: msg, masked: 0 });
  });

  test('leaves an already-redacted value alone and does not count it', () => {
    const line = String.raw`api_key=[REDACTED] x_token="[REDACTED]" {"a_secret":"[REDACTED]"} b="{\"c_token\":\"[REDACTED]\"}"`;
    assert.deepEqual(redactLine(line), { line, masked: 0 });
  });

  test('masks a secret followed by a quoted value that starts with a colon', () => {
    assert.deepEqual(redactLine('msg="enroll failed" enroll_token=et_abc123 err=": connection reset by peer"'), {
      line: 'msg="enroll failed" enroll_token=[REDACTED] err=": connection reset by peer"',
      masked: 1,
    });
  });

  test('a key with an empty value at the end of a quoted string masks nothing else', () => {
    const line = 'msg="config lacks api_key=" user=bob host=web-01';
    assert.deepEqual(redactLine(line), { line, masked: 0 });
  });

  test('keeps the CR of a CRLF line', () => {
    assert.equal(redactLine('api_key=gk_1\r').line, 'api_key=[REDACTED]\r');
    assert.equal(redactLine('{"api_key":"gk_1"}\r').line, '{"api_key":"[REDACTED]"}\r');
    assert.equal(redactLine('api_key="gk 1"\r').line, 'api_key="[REDACTED]"\r');
  });

  test('keeps the CR of a CRLF line whose quoted secret is unterminated', () => {
    assert.equal(redactLine('msg=x api_key="gk_unterminated\r').line, 'msg=x api_key="[REDACTED]"\r');
  });

  test('redacts a line with a long unbroken base64 run in time linear in its length', () => {
    // 64 KiB of key characters without `=`: a linear scan takes a few milliseconds, a
    // backtracking (quadratic) one billions of steps. The bound is loose so that a loaded
    // machine's pause cannot fail it; only the quadratic scan can.
    const line = `msg=blob data=eyJhbGciOiJIUzI1NiJ9.${'QUJD'.repeat(16384)} api_key=gk_1`;
    const started = performance.now();
    const r = redactLine(line);
    const ms = performance.now() - started;
    assert.equal(r.masked, 1);
    assert.ok(ms < 1000, `took ${ms.toFixed(0)} ms for a ${line.length}-byte line`);
  });

  test('keeps multibyte UTF-8 next to a masked value', () => {
    assert.deepEqual(redactUtf8('hôte=é client_secret=日本語の秘密 région=日本'), {
      line: 'hôte=é client_secret=[REDACTED] région=日本',
      masked: 1,
    });
    assert.deepEqual(redactUtf8('{"msg":"café","api_key":"gk_ünï","note":"naïve"}'), {
      line: '{"msg":"café","api_key":"[REDACTED]","note":"naïve"}',
      masked: 1,
    });
  });
});

describe('RedactStream', () => {
  test('bytes that are not valid UTF-8 survive untouched', async () => {
    const hex = (s: string) => Buffer.from(s, 'hex');
    const text = (s: string) => Buffer.from(s, 'latin1');
    const input = Buffer.concat([
      hex('fffe'),
      text(' level=INFO '),
      hex('c328'),
      text(' api_key=gk_'),
      hex('ff85a0'),
      text('tail user='),
      hex('e282'),
      text('\n'),
      hex('f09f92'),
      text(' plain line '),
      hex('80bf'),
      text(' x=1\n'),
      text('{"msg":"'),
      hex('c0af'),
      text('","client_secret":"'),
      hex('fe'),
      text('s"}'),
      hex('a0'),
      text('\n'),
    ]);
    const want = Buffer.concat([
      hex('fffe'),
      text(' level=INFO '),
      hex('c328'),
      text(' api_key=[REDACTED] user='),
      hex('e282'),
      text('\n'),
      hex('f09f92'),
      text(' plain line '),
      hex('80bf'),
      text(' x=1\n'),
      text('{"msg":"'),
      hex('c0af'),
      text('","client_secret":"[REDACTED]"}'),
      hex('a0'),
      text('\n'),
    ]);
    for (const chunks of [[input], splitEvery(input, 1), splitEvery(input, 7)]) {
      const r = await redactChunks(chunks);
      assert.ok(r.out.equals(want), `got ${JSON.stringify(r.out.toString('latin1'))}`);
      assert.equal(r.masked, 2);
    }
  });

  test('preserves the line count with and without a final newline', async () => {
    for (const input of ['', '\n', 'a\nb', 'a\nb\n', 'api_key=x\n\n\napi_key=y', '\r\n\r\napi_key=z\r\n']) {
      const r = await redactChunks([Buffer.from(input)]);
      assert.equal(lineCount(r.out), lineCount(Buffer.from(input)), JSON.stringify(input));
    }
  });

  test('discard mode counts without output', async () => {
    const { before, after } = readFixture('slog-text');
    const discarded = await redactChunks(splitEvery(before, 100), { discard: true });
    assert.equal(discarded.pushes, 0);
    assert.equal(discarded.out.length, 0);
    assert.equal(discarded.masked, occurrences(after, REDACTED_VALUE) - occurrences(before, REDACTED_VALUE));
    const kept = await redactChunks(splitEvery(before, 100));
    assert.equal(discarded.masked, kept.masked);
    const clean = await redactChunks([readFixture('no-secrets').before], { discard: true });
    assert.deepEqual([clean.masked, clean.pushes], [0, 0]);
  });

  test('a line longer than MAX_LINE_BYTES never passes through even when split across chunks', async () => {
    const length = MAX_LINE_BYTES + 300_000;
    const clean = Buffer.alloc(length, 'abcdefgh ');
    const withSecrets = Buffer.alloc(length, 'x api_key=gk_live_1 ');
    const cases: [string, Buffer, Buffer][] = [
      ['a line without key hints after a clean line', Buffer.from('first'), clean],
      ['a line without key hints after a line with a secret', Buffer.from('first api_key=gk_0'), clean],
      ['a line carrying secrets', Buffer.from('first api_key=gk_0'), withSecrets],
    ];
    const failures: string[] = [];
    for (const [label, first, body] of cases) {
      const input = Buffer.concat([first, Buffer.from('\n'), body, Buffer.from('\nlast\n')]);
      const firstOut = redactLine(first.toString('latin1'));
      const want = `${firstOut.line}\n${longLineMarker(length)}\nlast\n`;
      for (const [how, size] of [
        ['one chunk', input.length],
        ['1 MiB chunks', 1 << 20],
        ['256 KiB chunks', 256 * 1024],
      ] as const) {
        const r = await redactChunks(splitEvery(input, size));
        const got =
          r.out.length > 200 ? `${r.out.length} bytes (the long line passed through)` : r.out.toString('latin1');
        if (got !== want || r.masked !== firstOut.masked + 1)
          failures.push(`${label}, ${how}: got ${JSON.stringify(got)}`);
      }
      // The same line as the last one of the input, with no newline after it.
      const last = await redactChunks(splitEvery(Buffer.concat([first, Buffer.from('\n'), body]), 256 * 1024));
      if (last.out.toString('latin1') !== `${firstOut.line}\n${longLineMarker(length)}`)
        failures.push(`${label}, as an unterminated last line: got ${last.out.length} bytes`);
    }
    assert.deepEqual(failures, []);
  });

  test('a line of exactly MAX_LINE_BYTES is still redacted, not replaced', async () => {
    const tail = ' api_key=gk_at_the_limit';
    const filler = Buffer.alloc(MAX_LINE_BYTES - tail.length, 'abcdefg ');
    const input = Buffer.concat([filler, Buffer.from(tail), Buffer.from('\nnext\n')]);
    const r = await redactChunks(splitEvery(input, 1 << 20));
    const want = Buffer.concat([filler, Buffer.from(' api_key=[REDACTED]\nnext\n')]);
    assert.ok(r.out.equals(want));
    assert.equal(r.masked, 1);
  });

  test('stream output is identical whatever the chunk boundaries', async () => {
    const input = Buffer.concat([
      ...['slog-text', 'escaped-json-in-string', 'malformed-lines', 'mixed-crlf-and-utf8'].map(
        (n) => readFixture(n).before,
      ),
      Buffer.from('\ntime=2026-11-20T10:00:00.000Z msg="日本 é" upload_token=ut_日本é_0001 b=é\r\n'),
    ]);
    const reference = await redactChunks([input]);
    assert.ok(reference.masked > 30);

    // Every cut inside a secret and inside a multi-byte char, one cut at a time.
    const secretAt = input.indexOf('ut_日本é_0001');
    const charAt = input.indexOf('日本 é');
    for (let cut = secretAt - 12; cut < secretAt + 20; cut++) {
      const r = await redactChunks(splitAt(input, [cut]));
      assert.ok(r.out.equals(reference.out), `cut at ${cut}`);
    }
    for (const cut of [charAt + 1, charAt + 2, charAt + 4, charAt + 5]) {
      const r = await redactChunks(splitAt(input, [cut, cut + 1]));
      assert.ok(r.out.equals(reference.out), `cut at ${cut}`);
    }

    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: input.length - 1 }), { maxLength: 60 }),
        async (cuts) => {
          const r = await redactChunks(splitAt(input, cuts));
          assert.ok(r.out.equals(reference.out));
          assert.equal(r.masked, reference.masked);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('JSON keys written with escapes', () => {
  test('are compared after unescaping', () => {
    const cases: [string, string][] = [
      [String.raw`{"api\u005fkey":"S1"}`, String.raw`{"api\u005fkey":"[REDACTED]"}`],
      [String.raw`{"\u0061pi_key":"S2"}`, String.raw`{"\u0061pi_key":"[REDACTED]"}`],
      [String.raw`{"api\u005Fkey" : 12}`, String.raw`{"api\u005Fkey" : "[REDACTED]"}`],
      [
        String.raw`{"a":{"client\u005f\u0073ecret":{"k":[1]}},"n":1}`,
        String.raw`{"a":{"client\u005f\u0073ecret":"[REDACTED]"},"n":1}`,
      ],
      [
        String.raw`{"\u0065\u006e\u0072\u006f\u006c\u006c\u005f\u0074\u006f\u006b\u0065\u006e":"S3"}`,
        String.raw`{"\u0065\u006e\u0072\u006f\u006c\u006c\u005f\u0074\u006f\u006b\u0065\u006e":"[REDACTED]"}`,
      ],
      [
        String.raw`msg=resp body="{\"\\u0061pi_key\":\"S4\"}"`,
        String.raw`msg=resp body="{\"\\u0061pi_key\":\"[REDACTED]\"}"`,
      ],
      [
        String.raw`{"msg":"raw","raw":"{\"x\\u005ftoken\":7}"}`,
        String.raw`{"msg":"raw","raw":"{\"x\\u005ftoken\":\"[REDACTED]\"}"}`,
      ],
    ];
    for (const [line, want] of cases) assert.deepEqual(redactLine(line), { line: want, masked: 1 }, line);
  });

  test('that unescape to a key outside the pattern stay as they are', () => {
    for (const line of [
      String.raw`{"api\u005fkeys":"v"}`,
      String.raw`{"\u0041PI_KEY":"v"}`,
      String.raw`{"api\\u005fkey":"v"}`,
      String.raw`{"token":"\u0061pi_key"}`,
    ])
      assert.deepEqual(redactLine(line), { line, masked: 0 }, line);
  });

  test('are found by the stream on lines without any other hint, whatever the chunking', async () => {
    const clean = 'time=2026-11-20T10:00:00.000Z level=INFO msg="caf\\u00e9 ok" n=1\n'.repeat(40);
    const input = Buffer.from(`${clean}{"api\\u005fkey":"S_ESC_1"}\n${clean}{"\\u0061pi_key":"S_ESC_2"}\n${clean}`);
    for (const chunks of [[input], splitEvery(input, 3), splitEvery(input, 1000)]) {
      const r = await redactChunks(chunks);
      assert.ok(!r.out.includes('S_ESC_'), r.out.toString('latin1'));
      assert.equal(r.masked, 2);
      assert.equal(r.out.length, input.length + 2 * ('"[REDACTED]"'.length - '"S_ESC_1"'.length));
    }
  });

  test('are unescaped for extra names too', async () => {
    const extraKeys = compileExtraKeys(['password']);
    const r = await redactChunks([Buffer.from('{"p\\u0061ssword":"S_EXTRA_ESC"}\n')], { extraKeys });
    assert.equal(r.out.toString(), '{"p\\u0061ssword":"[REDACTED]"}\n');
  });
});

describe('single-quoted values', () => {
  test('are masked to their closing quote', () => {
    const cases: [string, string][] = [
      ["x_token='S22 single quoted' user=bob", "x_token='[REDACTED]' user=bob"],
      [String.raw`x_token='it\'s a secret' user=bob`, "x_token='[REDACTED]' user=bob"],
      [`msg="retry with api_key='a b c' now" n=1`, `msg="retry with api_key='[REDACTED]' now" n=1`],
      [`{"api_key": 'S j k', "n": 1}`, `{"api_key": '[REDACTED]', "n": 1}`],
      ["x_token='' user=bob", "x_token='[REDACTED]' user=bob"],
    ];
    for (const [line, want] of cases) {
      const r = redactLine(line);
      assert.equal(r.line, want, line);
    }
  });

  test('an unclosed one is masked to the end of its line', () => {
    assert.deepEqual(redactLine("level=INFO x_token='S unclosed to the end"), {
      line: "level=INFO x_token='[REDACTED]'",
      masked: 1,
    });
  });

  test('an apostrophe inside a bare value does not open a quote', () => {
    assert.deepEqual(redactLine("x_token=it's user=bob"), { line: 'x_token=[REDACTED] user=bob', masked: 1 });
  });
});

describe('quoted values over several lines', () => {
  async function redactText(
    text: string,
    chunkSizes = [text.length || 1, 1, 5],
  ): Promise<{ out: string; masked: number }> {
    const input = Buffer.from(text, 'utf8');
    let first: Redacted | undefined;
    for (const size of chunkSizes) {
      const r = await redactChunks(splitEvery(input, size));
      assert.equal(lineCount(r.out), lineCount(input), `line count, ${size}-byte chunks`);
      if (first) assert.ok(r.out.equals(first.out), `${size}-byte chunks give another output`);
      first ??= r;
    }
    return { out: (first as Redacted).out.toString('utf8'), masked: (first as Redacted).masked };
  }

  test('the rest of a value is masked on the lines it runs over', async () => {
    assert.deepEqual(await redactText('api_key="LOG_MULTI\nLINE_A20"\n'), {
      out: 'api_key="[REDACTED]"\n[REDACTED]\n',
      masked: 2,
    });
    assert.deepEqual(await redactText('a=1 api_key="L1 x\nL2 y\nL3" user=bob\nnext=1 x_token=t\n'), {
      out: 'a=1 api_key="[REDACTED]"\n[REDACTED]\n[REDACTED] user=bob\nnext=1 x_token=[REDACTED]\n',
      masked: 4,
    });
  });

  test('single-quoted, escaped-JSON and JSON values run over lines the same way', async () => {
    assert.equal((await redactText("x_token='S1\nS2' user=bob\n")).out, "x_token='[REDACTED]'\n[REDACTED] user=bob\n");
    assert.equal(
      (await redactText('{"raw":"{\\"api_key\\":\\"AB\nCD\\"}"}\n')).out,
      '{"raw":"{\\"api_key\\":\\"[REDACTED]\\"\n[REDACTED]}"}\n',
    );
    assert.equal(
      (await redactText('{"client_secret":"P1\nP2","n":1}\n')).out,
      '{"client_secret":"[REDACTED]"\n[REDACTED],"n":1}\n',
    );
  });

  test('a JSON value that starts on the next line is masked there', async () => {
    assert.equal(
      (await redactText('{"client_secret":\n\n  "S_NEXT_LINE",\n  "n": 1}\n')).out,
      '{"client_secret":\n\n  "[REDACTED]",\n  "n": 1}\n',
    );
    assert.equal(
      (await redactText('{"x_token":\n  12345,\n  "n": 1}\n')).out,
      '{"x_token":\n  "[REDACTED]",\n  "n": 1}\n',
    );
  });

  test('escaped quotes do not end the value, and empty lines stay empty', async () => {
    assert.equal(
      (await redactText('api_key="A\n\nB \\" still inside\nC" end=1\n')).out,
      'api_key="[REDACTED]"\n\n[REDACTED]\n[REDACTED] end=1\n',
    );
  });

  test('CRLF line endings are kept', async () => {
    assert.equal(
      (await redactText('api_key="A\r\nB\r\nC" x=1\r\n')).out,
      'api_key="[REDACTED]"\r\n[REDACTED]\r\n[REDACTED] x=1\r\n',
    );
  });

  test('a quote opened at the end of a line opens a value unless it closes an enclosing string', async () => {
    assert.equal(
      (await redactText('msg=x api_key="\nS_ON_NEXT_LINE"\n')).out,
      'msg=x api_key="[REDACTED]"\n[REDACTED]\n',
    );
    const enclosed = 'msg="config lacks api_key="\nnext line stays\n';
    assert.deepEqual(await redactText(enclosed), { out: enclosed, masked: 0 });
  });

  test('the line where a value closes is still scanned from its start', async () => {
    // After a stray opening quote, the next line's first quote is taken as the closing one;
    // pairs on that line are masked whichever reading is right.
    assert.equal(
      (await redactText('{"client_secret":"cut\n}}}{"refresh_token": "S_AFTER" ]]]\n')).out,
      '{"client_secret":"[REDACTED]"\n[REDACTED]refresh_token": "[REDACTED]" ]]]\n',
    );
    assert.equal(
      (await redactText('api_key="cut\nmsg="next record" x_token=S_AFTER2\n')).out,
      'api_key="[REDACTED]"\n[REDACTED]next record" x_token=[REDACTED]\n',
    );
  });

  test('a value is masked over as many as MAX_VALUE_LINES lines after the one that opened it', async () => {
    const body = Array.from({ length: MAX_VALUE_LINES }, (_, i) => `LINE_${i}_SECRET`).join('\n');
    const { out } = await redactText(`api_key="${body}" user=bob\nafter=1\n`, [1 << 16, 4096]);
    assert.ok(!out.includes('_SECRET'));
    assert.ok(out.endsWith('[REDACTED] user=bob\nafter=1\n'));
  });

  test('a value that never closes stops running on after MAX_VALUE_LINES lines (bounded)', async () => {
    const lines = Array.from({ length: MAX_VALUE_LINES + 3 }, (_, i) => `text_${i}`);
    const { out } = await redactText(`api_key="OPEN\n${lines.join('\n')}\nlater x_token=T9\n`, [1 << 16, 7]);
    const got = out.split('\n');
    assert.equal(got[0], 'api_key="[REDACTED]"');
    assert.deepEqual(new Set(got.slice(1, MAX_VALUE_LINES + 1)), new Set(['[REDACTED]']));
    assert.deepEqual(got.slice(MAX_VALUE_LINES + 1, MAX_VALUE_LINES + 4), lines.slice(MAX_VALUE_LINES));
    assert.equal(got[MAX_VALUE_LINES + 4], 'later x_token=[REDACTED]');
  });

  test('a value does not run on into the next member', async () => {
    assert.equal((await redactText('api_key="unterminated')).out, 'api_key="[REDACTED]"');
    assert.equal((await redactText('next member\n')).out, 'next member\n');
  });

  test('a line over the limit inside a value is replaced and the value stays open', async () => {
    const long = 'x'.repeat(MAX_LINE_BYTES + 10);
    const input = Buffer.from(`api_key="A\n${long}\nB" x=1\n`);
    for (const size of [input.length, 1 << 20]) {
      const r = await redactChunks(splitEvery(input, size));
      assert.equal(r.out.toString(), `api_key="[REDACTED]"\n${longLineMarker(long.length)}\n[REDACTED] x=1\n`);
    }
  });
});

describe('extra keys (redaction.extra_keys)', () => {
  test('a plain name matches the whole key or its last dotted segment, in any case', () => {
    const rules = compileExtraKeys(['password', 'X-Auth-Key']);
    const cases: [string, string][] = [
      ['password=p1 user=bob', 'password=[REDACTED] user=bob'],
      ['Password="p 2" user=bob', 'Password="[REDACTED]" user=bob'],
      ['db.PASSWORD=p3', 'db.PASSWORD=[REDACTED]'],
      ['{"db":{"Password":"p4","user":"bob"}}', '{"db":{"Password":"[REDACTED]","user":"bob"}}'],
      ['{"x-auth-key":123}', '{"x-auth-key":"[REDACTED]"}'],
      ['req.X-AUTH-KEY=k5', 'req.X-AUTH-KEY=[REDACTED]'],
    ];
    for (const [line, want] of cases) assert.deepEqual(redactLine(line, rules), { line: want, masked: 1 }, line);
    for (const line of ['password_hint=visible', 'mypassword=visible', 'password.rotated_at=visible', 'x-auth=visible'])
      assert.deepEqual(redactLine(line, rules), { line, masked: 0 }, line);
  });

  test('a name with a dot matches the whole key only', () => {
    const rules = compileExtraKeys(['db.password']);
    assert.equal(
      redactLine('db.password=p1 cache.password=visible', rules).line,
      'db.password=[REDACTED] cache.password=visible',
    );
  });

  test('a pattern matches the whole key or its last dotted segment, case-sensitively as written', () => {
    const rules = compileExtraKeys(['^x-[a-z]+-key$', '^(?i:session)_id$']);
    const cases: [string, string][] = [
      ['x-goog-key=k1', 'x-goog-key=[REDACTED]'],
      ['hdr.x-amz-key=k2', 'hdr.x-amz-key=[REDACTED]'],
      ['SESSION_id=s3', 'SESSION_id=[REDACTED]'],
      ['{"Session_id":"s4"}', '{"Session_id":"[REDACTED]"}'],
    ];
    for (const [line, want] of cases) assert.deepEqual(redactLine(line, rules), { line: want, masked: 1 }, line);
    for (const line of ['X-GOOG-KEY=visible', 'y-x-goog-key=visible', 'x-goog-key-id=visible', 'session_ID=visible'])
      assert.deepEqual(redactLine(line, rules), { line, masked: 0 }, line);
  });

  test('a pattern with a top-level alternation still has to match the whole key', () => {
    const rules = compileExtraKeys(['^pin|otp$']);
    assert.equal(
      redactLine('pin=1 otp=2 pinned=visible my_otp=visible', rules).line,
      'pin=[REDACTED] otp=[REDACTED] pinned=visible my_otp=visible',
    );
  });

  test("the contract's keys are still masked beside the extra ones", () => {
    const rules = compileExtraKeys(['password']);
    assert.deepEqual(redactLine('api_key=a1 password=p2 x_token=t3', rules), {
      line: 'api_key=[REDACTED] password=[REDACTED] x_token=[REDACTED]',
      masked: 3,
    });
  });

  test('without extra keys nothing beyond the contract is masked', () => {
    const line = 'password=visible Password=visible {"passwd":"visible"}';
    assert.deepEqual(redactLine(line), { line, masked: 0 });
  });

  test('an empty list masks exactly what the contract does', () => {
    const rules = compileExtraKeys([]);
    assert.deepEqual(redactLine('password=visible api_key=a1', rules), {
      line: 'password=visible api_key=[REDACTED]',
      masked: 1,
    });
  });

  test('invalid entries are refused with a message naming the entry', () => {
    const cases: [readonly string[], RegExp][] = [
      [[''], /extra_keys\[0\].*empty/],
      [['ok', '   '], /extra_keys\[1\].*empty/],
      [['*_password'], /extra_keys\[0\] "\*_password".*neither a key name.*\^\.\.\.\$/],
      [['pass word'], /"pass word".*neither a key name/],
      [['password$'], /"password\$".*neither a key name/],
      [['^password'], /"\^password".*anchored at both ends/],
      [['^password\\$'], /anchored at both ends/],
      [['^$'], /"\^\$".*empty key/],
      [['^(unclosed$'], /"\^\(unclosed\$".*not a valid regular expression/],
      [['^a)|(b$'], /not a valid regular expression/],
      [['x'.repeat(MAX_EXTRA_KEY_CHARS + 1)], new RegExp(`is ${MAX_EXTRA_KEY_CHARS + 1} characters long`)],
      [Array.from({ length: MAX_EXTRA_KEYS + 1 }, (_, i) => `k${i}`), new RegExp(`at most ${MAX_EXTRA_KEYS}`)],
      [[42 as unknown as string], /extra_keys\[0\]: must be a string/],
    ];
    for (const [list, message] of cases) assert.throws(() => compileExtraKeys(list), message, JSON.stringify(list));
  });

  test('the longest and most numerous entries allowed are accepted', () => {
    const name = 'k'.repeat(MAX_EXTRA_KEY_CHARS);
    const rules = compileExtraKeys([name, ...Array.from({ length: MAX_EXTRA_KEYS - 1 }, (_, i) => `^k${i}$`)]);
    assert.equal(redactLine(`${name}=v k7=w`, rules).line, `${name}=[REDACTED] k7=[REDACTED]`);
  });

  test('a stream masks extra names in any case, whatever the chunk boundaries', async () => {
    const clean = 'time=2026-11-20T10:00:00.000Z level=INFO msg="all quiet" n=1\n'.repeat(50);
    const input = Buffer.from(
      `${clean}user=bob PassWord=pw_stream_1\n${clean}{"db":{"PASSWORD":"pw_stream_2"}}\n${clean}password_hint=kept_3\n`,
    );
    const extraKeys = compileExtraKeys(['password']);
    for (const chunks of [[input], splitEvery(input, 7), splitEvery(input, 1000)]) {
      const r = await redactChunks(chunks, { extraKeys });
      const out = r.out.toString('latin1');
      assert.ok(!out.includes('pw_stream_'), out);
      assert.ok(
        out.includes('PassWord=[REDACTED]') && out.includes('"PASSWORD":"[REDACTED]"') && out.includes('kept_3'),
      );
      assert.equal(r.masked, 2);
      assert.equal(lineCount(r.out), lineCount(input));
    }
    const without = await redactChunks([input]);
    assert.ok(without.out.equals(input));
  });

  test('a stream masks keys matching an extra pattern on lines without any hint', async () => {
    const clean = 'time=2026-11-20T10:00:00.000Z level=INFO msg="all quiet" n=1\n'.repeat(50);
    const input = Buffer.from(
      `${clean}sig=s_pat_1 x-goog-key=k_pat_2\n${clean}{"hdr":{"x-amz-key":"k_pat_3"}}\n${clean}`,
    );
    const extraKeys = compileExtraKeys(['^x-[a-z]+-key$', '^sig$']);
    for (const chunks of [[input], splitEvery(input, 5), splitEvery(input, 4096)]) {
      const r = await redactChunks(chunks, { extraKeys });
      assert.ok(!r.out.toString('latin1').includes('_pat_'), r.out.toString('latin1'));
      assert.equal(r.masked, 3);
      assert.equal(lineCount(r.out), lineCount(input));
    }
    const discard = await redactChunks([input], { extraKeys, discard: true });
    assert.deepEqual([discard.masked, discard.pushes], [3, 0]);
  });
});

// ---------------------------------------------------------------------------------------
// Properties. Generated lines carry secrets under matching keys in the shapes of the
// contract; filler attributes never contain a key hint, so only the secret can be masked.

const chars = (set: string, minLength: number, maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...set.split('')), minLength, maxLength });
const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const word = fc.tuple(chars(LOWER, 1, 1), chars(`${LOWER}0123456789`, 0, 9)).map(([a, b]) => a + b);
const group = fc.array(word, { minLength: 1, maxLength: 3 }).map((parts) => parts.join('.'));
const matchingKey = fc.oneof(
  fc.constantFrom('api_key', 'enroll_token'),
  word.map((w) => `${w}_token`),
  word.map((w) => `${w}_secret`),
  fc.tuple(group, word).map(([g, w]) => `${g}.${w}_secret`),
  fc.tuple(group, word).map(([g, w]) => `${g}.${w}_token`),
  group.map((g) => `${g}.api_key`),
);
/** At least 8 chars, never `REDACTED` itself (which the output legitimately contains). */
const secret = chars(`${LOWER}${LOWER.toUpperCase()}0123456789+/_-`, 8, 40).filter((s) => !REDACTED_VALUE.includes(s));
/** Filler keys and values never contain `_`, so they never carry a key hint. */
const fillerKey = word;
const fillerText = chars('abcxyz019 :=./-"\\{},é日', 0, 24);
const slogFiller = fc.oneof(
  fc.tuple(fillerKey, chars('abcxyz0189.:/-', 1, 12)).map(([k, v]) => `${k}=${v}`),
  fc.tuple(fillerKey, fillerText).map(([k, v]) => `${k}=${slogQuote(v)}`),
);
const jsonFiller = fc.dictionary(
  fillerKey,
  fc.oneof(fillerText, fc.integer(), fc.boolean(), fc.constant(null), fc.array(fillerText, { maxLength: 2 })),
  { maxKeys: 4 },
);
const lineEnd = fc.constantFrom('\n', '\r\n');
const PREFIX = 'time=2026-11-20T10:00:00.000Z level=INFO';

/** `obj` with `key: value` put among its members at position `at` (modulo their count). */
function insertAt(obj: Record<string, unknown>, key: string, value: unknown, at: number): Record<string, unknown> {
  const entries = Object.entries(obj).filter(([k]) => k !== key);
  entries.splice(at % (entries.length + 1), 0, [key, value]);
  return Object.fromEntries(entries);
}

const anyJsonValue: fc.Arbitrary<unknown> = fc.oneof(
  secret,
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  jsonFiller,
  fc.array(fc.oneof(fillerText, jsonFiller), { maxLength: 3 }),
);

/** Oracle for JSON.parse: the contract's key rule, written independently of redact.ts. */
function maskMatching(key: string, value: unknown): unknown {
  const last = key.slice(key.lastIndexOf('.') + 1);
  return REDACTION_PATTERN.test(key) || REDACTION_PATTERN.test(last) ? REDACTED_VALUE : value;
}

/** A JSON document with `key: value` at a random depth and position among filler members. */
const jsonWithSecret = <T>(value: fc.Arbitrary<T>) =>
  fc
    .tuple(
      matchingKey,
      value,
      jsonFiller,
      fc.nat(),
      fc.array(fc.tuple(fillerKey, jsonFiller, fc.nat()), { maxLength: 3 }),
      jsonFiller,
      fc.nat(),
    )
    .map(([key, v, siblings, at, path, top, topAt]) => {
      let inner = insertAt(siblings, key, v, at);
      for (const [k, filler, pos] of path) inner = insertAt(filler, k, inner, pos);
      const doc = insertAt({ msg: 'event', ...top }, 'payload', inner, topAt);
      return { doc, secretValue: v };
    });

interface Case {
  line: string;
  secretValue: string;
}

const slogCase: fc.Arbitrary<Case> = fc
  .tuple(
    fc.array(slogFiller, { maxLength: 4 }),
    matchingKey,
    secret,
    fc.constantFrom('bare', 'quoted', 'in-message', 'escaped-in-message'),
    fc.array(slogFiller, { maxLength: 4 }),
  )
  .map(([before, key, value, shape, after]) => {
    const attr =
      shape === 'bare'
        ? `${key}=${value}`
        : shape === 'quoted'
          ? `${key}=${slogQuote(value)}`
          : shape === 'in-message'
            ? `msg=${slogQuote(`retrying with ${key}=${value} now`)}`
            : `msg=${slogQuote(`retrying with ${key}="${value}" now`)}`;
    return { line: [PREFIX, ...before, attr, ...after].join(' '), secretValue: value };
  });

const jsonCase: fc.Arbitrary<Case> = jsonWithSecret(secret).map(({ doc, secretValue }) => ({
  line: JSON.stringify(doc),
  secretValue,
}));

const escapedJsonCase: fc.Arbitrary<Case> = fc
  .tuple(jsonWithSecret(secret), fc.boolean(), fc.array(slogFiller, { maxLength: 3 }))
  .map(([{ doc, secretValue }, asJsonLine, after]) => ({
    line: asJsonLine
      ? JSON.stringify({ time: '2026-11-20T10:00:00.000Z', msg: 'raw payload', raw: JSON.stringify(doc) })
      : [PREFIX, 'msg="register response"', `body=${slogQuote(JSON.stringify(doc))}`, ...after].join(' '),
    secretValue,
  }));

/** Joins 1-4 cases into one input and checks that no secret value survives streaming it. */
function secretsNeverSurvive(cases: fc.Arbitrary<Case>) {
  return fc.asyncProperty(
    fc.array(fc.tuple(cases, lineEnd), { minLength: 1, maxLength: 4 }),
    fc.boolean(),
    async (lines, finalNewline) => {
      let input = '';
      for (const [i, [c, end]] of lines.entries()) input += c.line + (i < lines.length - 1 || finalNewline ? end : '');
      // A secret that also happens to occur in filler text cannot be told apart; skip it.
      for (const [c] of lines)
        fc.pre(occurrences(input, c.secretValue) === lines.filter(([o]) => o.secretValue === c.secretValue).length);
      const inputBytes = Buffer.from(input, 'utf8');
      const r = await redactChunks([inputBytes]);
      const out = r.out.toString('utf8');
      for (const [c] of lines) assert.ok(!out.includes(c.secretValue), `secret ${c.secretValue} survived:\n${out}`);
      assert.equal(lineCount(r.out), lineCount(inputBytes));
      assert.ok(r.masked >= lines.length);
    },
  );
}

describe('properties', () => {
  test('a value under a matching slog key never survives', async () => {
    await fc.assert(secretsNeverSurvive(slogCase), { numRuns: 1000 });
  });

  test('a value under a matching JSON key at any depth never survives', async () => {
    await fc.assert(secretsNeverSurvive(jsonCase), { numRuns: 1000 });
  });

  test('a value under a matching key of escaped JSON inside a string never survives', async () => {
    await fc.assert(secretsNeverSurvive(escapedJsonCase), { numRuns: 1000 });
  });

  test('a masked JSON line parses to the same document with matching values masked', async () => {
    await fc.assert(
      fc.asyncProperty(jsonWithSecret(anyJsonValue), async ({ doc }) => {
        const line = JSON.stringify(doc);
        const r = await redactChunks([Buffer.from(line)]);
        assert.deepEqual(JSON.parse(r.out.toString('utf8')), JSON.parse(line, maskMatching));
      }),
      { numRuns: 1000 },
    );
  });

  test('a masked escaped JSON document still parses to the same document with matching values masked', async () => {
    await fc.assert(
      fc.asyncProperty(jsonWithSecret(anyJsonValue), async ({ doc }) => {
        const line = JSON.stringify({ msg: 'raw payload', raw: JSON.stringify(doc), n: 1 });
        const r = await redactChunks([Buffer.from(line)]);
        let outer: { msg: string; raw: string; n: number } | undefined;
        assert.doesNotThrow(
          () => {
            outer = JSON.parse(r.out.toString('utf8'));
          },
          `not JSON any more: ${r.out.toString('utf8')}`,
        );
        assert.deepEqual(outer && { ...outer, raw: JSON.parse(outer.raw) }, {
          msg: 'raw payload',
          raw: JSON.parse(JSON.stringify(doc), maskMatching),
          n: 1,
        });
      }),
      { numRuns: 1000 },
    );
  });

  test('lines without a key hint come back byte-identical', async () => {
    const fragments = [
      'api',
      'key',
      '_key',
      'tok',
      'en',
      '_tok',
      'token',
      '_sec',
      'ret',
      'secret',
      'x',
      '1',
      '=',
      '"',
      '\\"',
      ':',
      ' ',
      ',',
      '{',
      '}',
      '[',
      ']',
      '.',
      '\r',
      '\n',
      'é',
      '日本',
      'level=INFO',
      'msg=',
      '"api key"',
    ];
    const text = fc
      .array(fc.constantFrom(...fragments), { maxLength: 60 })
      .map((parts) => Buffer.from(parts.join(''), 'utf8'));
    const bytes = fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a));
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(text, bytes).filter((b) => HINTS.every((h) => !b.includes(h))),
        fc.integer({ min: 1, max: 16 }),
        async (input, chunkSize) => {
          const r = await redactChunks(splitEvery(input, chunkSize));
          assert.ok(r.out.equals(input));
          assert.equal(r.masked, 0);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

// ---------------------------------------------------------------------------------------
// Properties of the forms that got past the redactor once: JSON keys written with escapes,
// single-quoted values, values running over several lines. A case is a piece of log text
// (one or more lines) and the secrets in it.

interface TextCase {
  text: string;
  secrets: string[];
}

/** `key` with each char chosen by `mask` written as a JSON \u escape (hex in either case). */
function escapeKeyChars(key: string, mask: boolean[], upper: boolean): string {
  let out = '';
  for (const [i, ch] of [...key].entries()) {
    const hex = ch.charCodeAt(0).toString(16).padStart(4, '0');
    out += mask[i % mask.length] ? `\\u${upper ? hex.toUpperCase() : hex}` : ch;
  }
  return out;
}

const escapedKeyCase: fc.Arbitrary<TextCase> = fc
  .tuple(
    jsonWithSecret(secret),
    fc.array(fc.boolean(), { minLength: 1, maxLength: 12 }),
    fc.boolean(),
    fc.constantFrom('json-line', 'json-in-json-string', 'json-in-slog-string'),
  )
  .chain(([{ doc, secretValue }, mask, upper, shape]) => {
    // The matching key is the only key with `_` or `.` in it (filler keys are plain words).
    const text = JSON.stringify(doc);
    const found = /"([a-z0-9.]*(?:api_key|_token|_secret))":/.exec(text);
    const key = found?.[1] ?? '';
    // At least one escape, so the key never appears literally.
    const escapedKey = escapeKeyChars(key, mask.some(Boolean) ? mask : [true], upper);
    const inner = text.replace(`"${key}":`, `"${escapedKey}":`);
    const line =
      shape === 'json-line'
        ? inner
        : shape === 'json-in-json-string'
          ? JSON.stringify({ time: '2026-11-20T10:00:00.000Z', msg: 'raw payload', raw: inner })
          : `${PREFIX} msg="register response" body=${slogQuote(inner)}`;
    return fc.constant({ text: line, secrets: [secretValue] });
  });

/** Text for inside single quotes: spaces, double quotes and escaped single quotes included. */
const singleQuotedSecret = fc
  .tuple(secret, fc.array(fc.tuple(fc.constantFrom(' ', "\\'", '"', ' = ', ': '), secret), { maxLength: 3 }))
  .map(([first, rest]) => ({
    value: first + rest.map(([sep, s]) => sep + s).join(''),
    secrets: [first, ...rest.map(([, s]) => s)],
  }));

const singleQuoteCase: fc.Arbitrary<TextCase> = fc
  .tuple(
    fc.array(slogFiller, { maxLength: 3 }),
    matchingKey,
    singleQuotedSecret,
    fc.constantFrom('slog', 'in-message', 'json'),
    fc.array(slogFiller, { maxLength: 3 }),
  )
  .map(([before, key, { value, secrets }, shape, after]) => {
    const attr =
      shape === 'slog'
        ? `${key}='${value}'`
        : shape === 'in-message'
          ? `msg="retrying with ${key}='${value.replace(/"/g, '\\"')}' now"`
          : `{"msg":"event",${JSON.stringify(key)}: '${value}', "n": 1}`;
    return { text: [PREFIX, ...before, attr, ...after].join(' '), secrets };
  });

const multiLineCase: fc.Arbitrary<TextCase> = fc
  .tuple(
    fc.array(slogFiller, { maxLength: 3 }),
    matchingKey,
    fc.array(secret, { minLength: 2, maxLength: 5 }),
    fc.array(fc.constantFrom('\n', '\r\n', '\n\n', '\n   '), { minLength: 4, maxLength: 4 }),
    fc.constantFrom('slog-double', 'slog-single', 'json', 'json-in-string', 'json-value-next-line'),
    fc.array(slogFiller, { maxLength: 3 }),
  )
  .map(([before, key, pieces, ends, shape, after]) => {
    let value = pieces[0];
    for (let i = 1; i < pieces.length; i++) value += ends[i % ends.length] + pieces[i];
    const tail = after.length > 0 ? ` ${after.join(' ')}` : '';
    const head = [PREFIX, ...before].join(' ');
    const text =
      shape === 'slog-double'
        ? `${head} ${key}="${value}"${tail}`
        : shape === 'slog-single'
          ? `${head} ${key}='${value}'${tail}`
          : shape === 'json'
            ? `{"msg":"event",${JSON.stringify(key)}:"${value}","n":1}`
            : shape === 'json-in-string'
              ? `{"msg":"raw","raw":"{\\"${key}\\":\\"${value}\\",\\"n\\":1}"}`
              : `{"msg":"event",${JSON.stringify(key)}:${ends[0]}"${value}",${ends[1]}"n":1}`;
    return { text, secrets: pieces };
  });

/** Joins 1-3 cases, with plain lines around them, and checks that no secret survives. */
function noSecretSurvives(cases: fc.Arbitrary<TextCase>) {
  return fc.asyncProperty(
    fc.array(fc.tuple(cases, lineEnd, fc.array(slogFiller, { maxLength: 3 })), { minLength: 1, maxLength: 3 }),
    fc.boolean(),
    fc.uniqueArray(fc.nat(), { maxLength: 8 }),
    async (parts, finalNewline, cuts) => {
      let input = '';
      for (const [i, [c, end, plain]] of parts.entries()) {
        input += `${c.text}${end}${[PREFIX, ...plain].join(' ')}`;
        if (i < parts.length - 1 || finalNewline) input += end;
      }
      const all = parts.flatMap(([c]) => c.secrets);
      // A secret that also happens to occur in filler text cannot be told apart; skip it.
      for (const s of all) fc.pre(occurrences(input, s) === all.filter((o) => o === s).length);
      const inputBytes = Buffer.from(input, 'utf8');
      const whole = await redactChunks([inputBytes]);
      const out = whole.out.toString('utf8');
      for (const s of all) assert.ok(!out.includes(s), `secret ${s} survived:\n${input}\n---\n${out}`);
      assert.equal(lineCount(whole.out), lineCount(inputBytes));
      const cut = await redactChunks(
        splitAt(
          inputBytes,
          cuts.map((c) => c % (inputBytes.length + 1)),
        ),
      );
      assert.ok(cut.out.equals(whole.out), 'output depends on the chunk boundaries');
      assert.equal(cut.masked, whole.masked);
    },
  );
}

describe('properties of escaped keys, single quotes and values over several lines', () => {
  test('a value under a matching JSON key written with escapes never survives', async () => {
    await fc.assert(noSecretSurvives(escapedKeyCase), { numRuns: 1000 });
  });

  test('a single-quoted value under a matching key never survives', async () => {
    await fc.assert(noSecretSurvives(singleQuoteCase), { numRuns: 1000 });
  });

  test('a quoted value running over several lines never survives', async () => {
    await fc.assert(noSecretSurvives(multiLineCase), { numRuns: 1000 });
  });

  test('a value under an extra name spelled in any case never survives the stream', async () => {
    const nameChars = `${LOWER}0123456789_-.`;
    const extraName = fc
      .tuple(chars(LOWER, 1, 1), chars(nameChars, 0, 11))
      .map(([a, b]) => a + b)
      .filter((n) => !n.endsWith('.'));
    await fc.assert(
      fc.asyncProperty(
        fc.array(extraName, { minLength: 1, maxLength: 4 }),
        fc.nat(),
        fc.array(fc.boolean(), { minLength: 1, maxLength: 16 }),
        fc.option(group, { nil: undefined }),
        secret,
        fc.constantFrom('slog', 'json'),
        fc.array(slogFiller, { maxLength: 3 }),
        fc.uniqueArray(fc.nat(), { maxLength: 6 }),
        async (names, pick, upper, prefix, value, shape, filler, cuts) => {
          const name = names[pick % names.length];
          const spelled = [...name].map((c, i) => (upper[i % upper.length] ? c.toUpperCase() : c)).join('');
          // A dotted name matches the whole key only, so it gets no group prefix.
          const key = prefix === undefined || name.includes('.') ? spelled : `${prefix}.${spelled}`;
          const attr = shape === 'slog' ? `${key}=${value}` : `{${JSON.stringify(key)}:${JSON.stringify(value)}}`;
          const input = Buffer.from(`${[PREFIX, ...filler].join(' ')}\n${PREFIX} ${attr} n=1\n${PREFIX}\n`);
          fc.pre(occurrences(input, value) === 1);
          const extraKeys = compileExtraKeys(names);
          const r = await redactChunks(
            splitAt(
              input,
              cuts.map((c) => c % input.length),
            ),
            { extraKeys },
          );
          assert.ok(!r.out.includes(value), r.out.toString('latin1'));
          assert.equal(lineCount(r.out), lineCount(input));
        },
      ),
      { numRuns: 1000 },
    );
  });

  test('any text keeps its line count, and its output does not depend on chunking', async () => {
    const fragments = [
      'api_key=',
      'x_token=',
      '"a_secret":',
      '\\"api_key\\":',
      '"api\\u005fkey":',
      '"x_token":',
      '"',
      "'",
      '\\"',
      '\\',
      '\\u',
      '{',
      '}',
      '[',
      ']',
      ' ',
      '=',
      ':',
      ',',
      'msg=',
      'abc',
      'é',
      '\r',
      '\n',
      '\r\n',
      '[REDACTED]',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(...fragments), { maxLength: 80 }).map((p) => Buffer.from(p.join(''), 'utf8')),
        fc.uniqueArray(fc.nat(), { maxLength: 10 }),
        async (input, cuts) => {
          const whole = await redactChunks([input]);
          assert.equal(lineCount(whole.out), lineCount(input));
          const cut = await redactChunks(
            splitAt(
              input,
              cuts.map((c) => c % (input.length + 1)),
            ),
          );
          assert.ok(cut.out.equals(whole.out), `chunking changed the output of ${JSON.stringify(input.toString())}`);
          assert.equal(cut.masked, whole.masked);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
