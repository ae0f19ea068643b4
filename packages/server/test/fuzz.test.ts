// Property tests against the running server (fast-check): whatever a client sends — malformed
// JSON, random JSON values, wrong field types, huge strings, odd numbers, unicode, extra
// properties, odd content types, garbage credentials, random paths and query strings — the
// answer is never a 5xx, and every 4xx carries the API error shape {"error": {"code", "message"}}
// (DESIGN §4). Every property runs a fixed number of cases; a run cut short fails (see fuzz()).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  isErrorShape,
  type Loose,
  MiB,
  presign,
  putObject,
  setupTenant,
  sha256Hex,
  startTestServer,
  type TestServer,
  uploadBundle,
  validManifest,
} from './harness.ts';

/** Cases per property: every property runs exactly this many (or the count it is given). */
const RUNS = 300;
/**
 * A guard against a hung server, not a time budget: a property still running after this long
 * fails. (An interrupted run used to pass with however many cases it had reached.)
 */
const HANG_GUARD_MS = 120_000;

/** Runs `property` for exactly `runs` cases; a failure, or a run cut short, fails the test. */
async function fuzz<Ts extends unknown[]>(
  property: fc.IAsyncProperty<Ts>,
  runs = RUNS,
  limits: { hangGuardMs?: number } = {},
): Promise<void> {
  const result = await fc.check(property, {
    numRuns: runs,
    plugins: [fc.interruptAfterTimeLimit(limits.hangGuardMs ?? HANG_GUARD_MS, { failOnInterrupt: true })],
  } as fc.Parameters<Ts>);
  if (result.failed) throw new Error((await fc.asyncDefaultReportMessage(result)) ?? 'property failed');
  if (result.numRuns !== runs) throw new Error(`ran ${result.numRuns} cases, fewer than the ${runs} asked for`);
}

/** A signal POST /v1/signals accepts (spec 2.6: severity 1..5). */
const VALID_SIGNAL = {
  signal_type: 'sudo_command_executed',
  severity: 3,
  description: 'sudo -i by alice',
  identity_id: 'u-1000',
  identity_name: 'alice',
};

/** The server's JSON body limit: bodies above it are refused (413) and may be cut off. */
const JSON_BODY_LIMIT = MiB;

// ---------------------------------------------------------------------------------------
// Raw JSON text fragments (strings, so numbers like 1e400 or -0 reach the server verbatim)

const printable = (maxLength: number) =>
  fc.array(fc.integer({ min: 0x20, max: 0x7e }), { maxLength }).map((cs) => String.fromCharCode(...cs));

/** Strings whose JSON form is 1 KiB to ~2 MiB: around and over the 1 MiB body limit. */
const hugeText = fc
  .tuple(fc.constantFrom('a', 'é', '😀', '\u0000', '"', '\\', '\ud800'), fc.integer({ min: 1024, max: 2 * MiB }))
  .map(([c, bytes]) => c.repeat(Math.max(1, Math.floor(bytes / Buffer.byteLength(JSON.stringify(c).slice(1, -1))))));

const oddString = fc.oneof(
  { weight: 4, arbitrary: printable(40) },
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.string({ unit: 'grapheme', maxLength: 20 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      '\u0000',
      '\ud800',
      '\udfff',
      '../../etc/passwd',
      'bundles/../../x',
      'a/b',
      'a\\b',
      '%00',
      '\r\nX-Injected: 1',
      "'; DROP TABLE bundles;--",
      'x'.repeat(65),
      'x'.repeat(256),
      '2026-11-21T10:00:00Z',
      '2026-11-21T10:00:00+02:00',
    ),
  },
  { weight: 1, arbitrary: hugeText },
);
const rawString = oddString.map((s) => JSON.stringify(s));

const rawNumber = fc.oneof(
  fc.integer().map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((n) => JSON.stringify(n)),
  fc.bigInt({ min: -(2n ** 80n), max: 2n ** 80n }).map(String),
  fc.constantFrom(
    '-1',
    '0',
    '1',
    '1.5',
    '-0',
    '1.0',
    '1e2',
    '1E-7',
    '9007199254740991',
    '9007199254740993',
    '2147483648',
    '1e308',
    '1e400',
    '-1e400',
    '123456789012345678901234567890',
  ),
);

const deepNesting = fc
  .tuple(fc.integer({ min: 1, max: 60_000 }), fc.boolean())
  .map(([n, arrays]) => (arrays ? `${'['.repeat(n)}1${']'.repeat(n)}` : `${'{"a":'.repeat(n)}1${'}'.repeat(n)}`));

const rawValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: rawString },
  { weight: 3, arbitrary: rawNumber },
  { weight: 2, arbitrary: fc.constantFrom('true', 'false', 'null', '[]', '{}', '[null]', '{"":null}') },
  { weight: 2, arbitrary: fc.json({ maxDepth: 3 }) },
  { weight: 1, arbitrary: deepNesting },
);

/** An object with the endpoint's own keys (each absent, valid or random) plus extra keys. */
function shaped(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const entries = Object.entries(fields).map(([key, valid]) =>
    fc
      .option(fc.oneof({ weight: 3, arbitrary: valid }, { weight: 2, arbitrary: rawValue }), {
        nil: undefined,
        freq: 5,
      })
      .map((v) => (v === undefined ? undefined : `${JSON.stringify(key)}:${v}`)),
  );
  const extra = fc.array(
    fc
      .tuple(fc.oneof(printable(12), fc.constantFrom('__proto__', 'constructor', 'prototype', '')), rawValue)
      .map(([k, v]) => `${JSON.stringify(k)}:${v}`),
    { maxLength: 2 },
  );
  return fc
    .tuple(fc.tuple(...entries), fc.oneof({ weight: 4, arbitrary: fc.constant([]) }, { weight: 1, arbitrary: extra }))
    .map(([own, more]) => `{${[...own.filter((x) => x !== undefined), ...more].join(',')}}`);
}

function malformed(of: fc.Arbitrary<string>): fc.Arbitrary<string> {
  return fc.oneof(
    printable(200),
    of.chain((text) => fc.nat(Math.max(0, text.length - 1)).map((n) => text.slice(0, n))),
    fc
      .tuple(of, printable(4), fc.nat())
      .map(([text, junk, at]) => text.slice(0, at % (text.length + 1)) + junk + text.slice(at % (text.length + 1))),
    fc.constantFrom('', ' ', '{', '}', '{"a":}', '[', "{'a':1}", '{"a":1,}', 'NaN', 'undefined', '\u0000', '\ufeff{}'),
  );
}

function bodyArb(fields: Record<string, fc.Arbitrary<string>>): fc.Arbitrary<string> {
  const own = shaped(fields);
  return fc.oneof(
    { weight: 7, arbitrary: own },
    { weight: 2, arbitrary: rawValue },
    { weight: 2, arbitrary: malformed(own) },
    { weight: 1, arbitrary: hugeText.map((s) => JSON.stringify({ x: s })) },
  );
}

const contentType = fc.oneof(
  { weight: 8, arbitrary: fc.constant('application/json') },
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      undefined,
      'application/json; charset=utf-8',
      'application/json;charset=UTF-8',
      'APPLICATION/JSON',
      'application/json; charset=latin1',
      'application/json; charset=utf-16',
      'application/json; boundary=',
      'application/vnd.api+json',
      'application/merge-patch+json',
      'text/plain',
      'text/plain; charset=utf-8',
      'text/json',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=xyz',
      'application/octet-stream',
      '*/*',
      'json',
      '',
      ';',
      'application/',
    ),
  },
  { weight: 1, arbitrary: printable(40) },
);

const base64url = (n: number) =>
  fc.uint8Array({ minLength: n, maxLength: n }).map((b) => Buffer.from(b).toString('base64url'));

function authArb(valid: string[]): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...valid).map((t) => `Bearer ${t}`) },
    {
      weight: 4,
      arbitrary: fc.oneof(
        fc.constant(undefined),
        printable(60),
        printable(60).map((s) => `Bearer ${s}`),
        fc.constantFrom('gak', 'gut', 'get', 'xyz').chain((p) => base64url(32).map((s) => `Bearer ${p}_${s}`)),
        fc.constantFrom(...valid).map((t) => `Bearer ${t.slice(0, -1)}`),
        fc.constantFrom(...valid).map((t) => `bearer ${t}`),
        fc.constantFrom(...valid).map((t) => `Bearer  ${t}`),
        fc.constantFrom(...valid).map((t) => `Bearer ${t}, Bearer ${t}`),
        fc.constantFrom('Basic dXNlcjpwYXNz', 'Bearer', 'Bearer ', 'Token abc', `Bearer ${'a'.repeat(4000)}`),
      ),
    },
  );
}

const extraHeaders = fc.dictionary(
  fc.constantFrom(
    'accept',
    'accept-encoding',
    'x-forwarded-for',
    'origin',
    'cookie',
    'range',
    'x-guard-tenant',
    'if-none-match',
  ),
  printable(60),
  { maxKeys: 3 },
);

function queryArb(keys: string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    oddString.filter((s) => s.length < 4096),
    rawNumber,
    fc.constantFrom('', '0', '-1', '1', '200', '201', '50.5', 'true', 'null', '2026-11-21T10:00:00.000Z', 'not-a-date'),
  );
  const pairs = fc.array(
    fc
      .tuple(fc.oneof(fc.constantFrom(...keys), printable(8)), value)
      .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v.replace(/[\ud800-\udfff]/g, '?'))}`),
    { maxLength: 4 },
  );
  const raw = printable(60).map((s) => s.replace(/#/g, ''));
  return fc
    .oneof({ weight: 4, arbitrary: pairs.map((p) => p.join('&')) }, { weight: 1, arbitrary: raw })
    .map((q) => (q ? `?${q}` : ''));
}

/** A path segment that the router can decode and whose encoded length stays within its parameter limit. */
function segmentArb(valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...valid) },
    {
      weight: 4,
      arbitrary: fc
        .oneof(printable(40), fc.string({ unit: 'grapheme', maxLength: 10 }), fc.constantFrom('.', '..', '%', ' '))
        .map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?')))
        .filter((s) => s.length > 0 && s.length <= 100),
    },
  );
}

// ---------------------------------------------------------------------------------------
// Sending and the contract every answer keeps

interface Sent {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

function describeSent(s: Sent): string {
  const body = s.body === undefined ? '' : ` body(${s.body.length})=${JSON.stringify(s.body.slice(0, 300))}`;
  return `${s.method} ${s.path.slice(0, 300)} headers=${JSON.stringify(s.headers).slice(0, 300)}${body}`;
}

async function send(server: TestServer, s: Sent): Promise<void> {
  let res: Awaited<ReturnType<typeof api>>;
  try {
    res = await api(server.url, s.method, s.path, { headers: s.headers, rawBody: s.body });
  } catch (error) {
    // A body over the limit may be cut off after the 413 went out; anything else is a failure.
    if (s.body !== undefined && Buffer.byteLength(s.body) > JSON_BODY_LIMIT) return;
    throw new Error(
      `no HTTP answer (${(error as Error).message}; cause ${(error as Error).cause}) to ${describeSent(s)}`,
    );
  }
  checkAnswer(res.status, res.json, res.text, s);
}

function checkAnswer(status: number | undefined, json: Loose, text: string, s: Sent): void {
  if (status === undefined) throw new Error(`no HTTP answer to ${describeSent(s)}`);
  if (status >= 500) throw new Error(`${status} ${text.slice(0, 300)} for ${describeSent(s)}`);
  if (status >= 400 && s.method !== 'HEAD' && !isErrorShape(json))
    throw new Error(`${status} without the error shape: ${text.slice(0, 300)} for ${describeSent(s)}`);
}

function headersOf(auth: string | undefined, ct: string | undefined, extra: Record<string, string>) {
  const headers: Record<string, string> = { ...extra };
  if (auth !== undefined) headers.authorization = auth;
  if (ct !== undefined) headers['content-type'] = ct;
  return headers;
}

// ---------------------------------------------------------------------------------------

describe('the fuzz runner', () => {
  it('fails a property whose run is cut short instead of passing it with fewer cases', async () => {
    let cases = 0;
    const slow = fc.asyncProperty(fc.nat(), async () => {
      cases += 1;
      await new Promise((r) => setTimeout(r, 20));
    });
    await assert.rejects(fuzz(slow, 1000, { hangGuardMs: 100 }), /interrupted|fewer/i);
    assert.ok(cases < 1000);
  });
});

describe('fuzzing the running server: never a 5xx, every 4xx in the error shape', () => {
  let server: TestServer;
  let adminToken: string;
  let otherAdminToken: string;
  let supportToken: string;
  let enrollToken: string;
  let agent: EnrolledAgent;
  let bundleId: string;
  let otherBundleId: string;
  let tokenIds: string[];
  let memberToken: string;
  /** Agents of the first tenant that the revoke property may revoke (never `agent`). */
  let victimIds: string[];
  let otherAgentId: string;
  let signalIds: string[];
  /** Uploaded but unregistered objects: register can succeed on them. */
  const stored: { object_key: string; sha256: string; size: number }[] = [];
  /** Presigned, never PUT. */
  const slots: { url: string; object_key: string; bytes: Buffer; sha256: string }[] = [];
  let registeredKey: { object_key: string; sha256: string; size: number };

  before(async () => {
    server = await startTestServer();
    const a = await setupTenant(server);
    const b = await setupTenant(server);
    adminToken = a.admin_token;
    otherAdminToken = b.admin_token;
    supportToken = server.supportToken as string;
    const many = await api(server.url, 'POST', '/v1/enrollment-tokens', {
      token: adminToken,
      body: { max_uses: 100000 },
    });
    enrollToken = many.json.token;
    agent = await enrollAgent(server.url, enrollToken);
    const up = await uploadBundle(server.url, agent.api_key);
    bundleId = up.bundle_id;
    registeredKey = { object_key: up.object_key, sha256: up.sha256, size: up.bytes.length };
    const otherAgent = await enrollAgent(server.url, b.enroll_token);
    otherAgentId = otherAgent.agent_id;
    otherBundleId = (await uploadBundle(server.url, otherAgent.api_key)).bundle_id;
    memberToken = await addUser(server, a.tenant_id, 'member');
    victimIds = [];
    for (let i = 0; i < 3; i++) victimIds.push((await enrollAgent(server.url, enrollToken)).agent_id);
    signalIds = [];
    for (const token of [agent.api_key, agent.api_key, otherAgent.api_key]) {
      const created = await api(server.url, 'POST', '/v1/signals', { token, body: VALID_SIGNAL });
      assert.equal(created.status, 201, created.text);
      signalIds.push(created.json.signal_id);
    }
    tokenIds = [];
    for (let i = 0; i < 5; i++) {
      const t = await api(server.url, 'POST', '/v1/enrollment-tokens', { token: adminToken, body: {} });
      tokenIds.push(t.json.id);
    }
    for (let i = 0; i < 24; i++) {
      const bytes = randomBytes(1024 + i);
      const sha256 = sha256Hex(bytes);
      const p = await presign(server.url, agent.api_key, { size: bytes.length, sha256 });
      if (i < 20) {
        assert.equal((await putObject(p.json.url, bytes)).status, 200);
        stored.push({ object_key: p.json.object_key, sha256, size: bytes.length });
      } else slots.push({ url: p.json.url, object_key: p.json.object_key, bytes, sha256 });
    }
  });
  after(() => server.cleanup());

  const sha = () =>
    fc.oneof(
      fc.constant(sha256Hex('x')),
      fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 63, maxLength: 65 }),
    );
  const jsonStr = (a: fc.Arbitrary<string>) => a.map((s) => JSON.stringify(s));

  it('POST /v1/agents/enroll', async () => {
    await fuzz(
      fc.asyncProperty(
        bodyArb({
          token: fc
            .oneof(
              fc.constant(enrollToken),
              base64url(32).map((s) => `get_${s}`),
            )
            .map((s) => JSON.stringify(s)),
          hostname: jsonStr(printable(60)),
          environment: jsonStr(printable(20)),
          agent_version: jsonStr(fc.constantFrom('0.1.0', '1.2.3-rc.1')),
        }),
        authArb([agent.api_key, adminToken]),
        contentType,
        extraHeaders,
        async (body, auth, ct, extra) => {
          await send(server, { method: 'POST', path: '/v1/agents/enroll', headers: headersOf(auth, ct, extra), body });
        },
      ),
    );
  });

  it('POST /v1/enrollment-tokens', async () => {
    const int = (min: number, max: number) => fc.integer({ min, max }).map(String);
    await fuzz(
      fc.asyncProperty(
        bodyArb({ expires_in_seconds: int(60, 365 * 24 * 3600), max_uses: int(1, 100000) }),
        authArb([adminToken, otherAdminToken, supportToken, agent.api_key]),
        contentType,
        extraHeaders,
        async (body, auth, ct, extra) => {
          await send(server, {
            method: 'POST',
            path: '/v1/enrollment-tokens',
            headers: headersOf(auth, ct, extra),
            body,
          });
        },
      ),
    );
  });

  it('GET /v1/enrollment-tokens', async () => {
    await fuzz(
      fc.asyncProperty(
        queryArb(['limit', 'before', 'tenant_id']),
        authArb([adminToken, supportToken, agent.api_key]),
        extraHeaders,
        async (q, auth, extra) => {
          await send(server, {
            method: 'GET',
            path: `/v1/enrollment-tokens${q}`,
            headers: headersOf(auth, undefined, extra),
          });
        },
      ),
    );
  });

  it('DELETE /v1/enrollment-tokens/:id', async () => {
    await fuzz(
      fc.asyncProperty(
        segmentArb(tokenIds),
        queryArb(['x']),
        authArb([adminToken, otherAdminToken, supportToken, agent.api_key]),
        fc.option(contentType, { nil: undefined }),
        fc.option(bodyArb({}), { nil: undefined, freq: 3 }),
        async (id, q, auth, ct, body) => {
          await send(server, {
            method: 'DELETE',
            path: `/v1/enrollment-tokens/${id}${q}`,
            headers: headersOf(auth, body === undefined ? undefined : ct, {}),
            body,
          });
        },
      ),
    );
  });

  it('GET /v1/agents', async () => {
    await fuzz(
      fc.asyncProperty(
        queryArb(['limit', 'before']),
        authArb([adminToken, otherAdminToken, memberToken, supportToken, agent.api_key]),
        extraHeaders,
        async (q, auth, extra) => {
          await send(server, { method: 'GET', path: `/v1/agents${q}`, headers: headersOf(auth, undefined, extra) });
        },
      ),
    );
  });

  it('POST /v1/agents/:id/revoke', async () => {
    await fuzz(
      fc.asyncProperty(
        segmentArb([...victimIds, otherAgentId]),
        queryArb(['x']),
        authArb([adminToken, otherAdminToken, memberToken, supportToken, agent.api_key]),
        fc.option(contentType, { nil: undefined }),
        fc.option(bodyArb({}), { nil: undefined, freq: 3 }),
        async (id, q, auth, ct, body) => {
          await send(server, {
            method: 'POST',
            path: `/v1/agents/${id}/revoke${q}`,
            headers: headersOf(auth, body === undefined ? undefined : ct, {}),
            body,
          });
        },
      ),
    );
  });

  it('POST /v1/signals', async () => {
    const isoTime = fc
      .date({ noInvalidDate: true })
      .map((d) => d.toISOString())
      .chain((iso) =>
        fc.constantFrom(iso, iso.replace('Z', '+02:00'), iso.slice(0, 10), '2026-13-01T00:00:00Z', 'not-a-date', ''),
      );
    await fuzz(
      fc.asyncProperty(
        bodyArb({
          signal_type: jsonStr(
            fc.oneof(fc.constantFrom(VALID_SIGNAL.signal_type, 'a.b-c_1', 'A', '_x'), printable(120)),
          ),
          severity: fc.oneof(fc.integer({ min: 0, max: 6 }).map(String), rawNumber),
          description: jsonStr(fc.oneof(printable(100), fc.string({ unit: 'grapheme', maxLength: 50 }))),
          identity_id: jsonStr(printable(40)),
          identity_name: jsonStr(printable(40)),
          environment: jsonStr(printable(120)),
          created_at: jsonStr(isoTime),
        }),
        authArb([agent.api_key, adminToken]),
        contentType,
        extraHeaders,
        async (body, auth, ct, extra) => {
          await send(server, { method: 'POST', path: '/v1/signals', headers: headersOf(auth, ct, extra), body });
        },
      ),
    );
  });

  it('GET /v1/signals', async () => {
    await fuzz(
      fc.asyncProperty(
        queryArb(['limit', 'before']),
        authArb([adminToken, memberToken, supportToken, agent.api_key]),
        extraHeaders,
        async (q, auth, extra) => {
          await send(server, { method: 'GET', path: `/v1/signals${q}`, headers: headersOf(auth, undefined, extra) });
        },
      ),
    );
  });

  it('GET /v1/signals/:id', async () => {
    await fuzz(
      fc.asyncProperty(
        segmentArb(signalIds),
        queryArb(['tenant_id']),
        authArb([adminToken, otherAdminToken, memberToken, supportToken, agent.api_key]),
        extraHeaders,
        async (id, q, auth, extra) => {
          await send(server, {
            method: 'GET',
            path: `/v1/signals/${id}${q}`,
            headers: headersOf(auth, undefined, extra),
          });
        },
      ),
    );
  });

  it('POST /v1/support/bundle/upload-url', async () => {
    await fuzz(
      fc.asyncProperty(
        bodyArb({
          filename: jsonStr(fc.oneof(fc.constant('bundle.tar.zst'), printable(300), fc.string({ unit: 'binary' }))),
          size: fc.oneof(fc.integer({ min: 1, max: 3 * 1024 * MiB }).map(String), rawNumber),
          sha256: jsonStr(sha()),
        }),
        authArb([agent.api_key, adminToken]),
        contentType,
        extraHeaders,
        async (body, auth, ct, extra) => {
          await send(server, {
            method: 'POST',
            path: '/v1/support/bundle/upload-url',
            headers: headersOf(auth, ct, extra),
            body,
          });
        },
      ),
    );
  });

  it('POST /v1/support/bundle/register', async () => {
    const target = fc.oneof(
      { weight: 5, arbitrary: fc.constantFrom(...stored) },
      { weight: 1, arbitrary: fc.constant(registeredKey) },
      { weight: 1, arbitrary: fc.constantFrom(...slots).map((s) => ({ ...s, size: s.bytes.length })) },
      {
        weight: 1,
        arbitrary: fc.record({ object_key: printable(80), sha256: sha(), size: fc.integer({ min: 1, max: 1e6 }) }),
      },
    );
    const mostly = fc.oneof({ weight: 4, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) });
    const manifest = fc.oneof(
      { weight: 3, arbitrary: fc.constant(JSON.stringify(validManifest())) },
      {
        weight: 5,
        arbitrary: fc
          .tuple(printable(10), fc.oneof(rawValue, deepNesting))
          .map(([k, v]) => `${JSON.stringify(validManifest()).slice(0, -1)},${JSON.stringify(`x${k}`)}:${v}}`),
      },
      {
        weight: 3,
        arbitrary: fc
          .tuple(fc.constantFrom(...Object.keys(validManifest())), rawValue)
          .map(([k, v]) => JSON.stringify(validManifest({ [k]: '@@' })).replace('"@@"', () => v)),
      },
      { weight: 1, arbitrary: rawValue },
    );
    const body = fc.oneof(
      {
        weight: 7,
        arbitrary: fc
          .tuple(
            target,
            mostly,
            mostly,
            manifest,
            fc.oneof({ weight: 4, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: rawValue }),
          )
          .map(([t, rightSha, rightSize, m, extra]) =>
            JSON.stringify({
              object_key: t.object_key,
              sha256: rightSha ? t.sha256 : sha256Hex('other'),
              size: rightSize ? t.size : t.size + 1,
              manifest: '@@manifest',
            })
              .replace('"@@manifest"', () => m)
              .replace(/}$/, () => (extra === undefined ? '}' : `,"extra":${extra}}`)),
          ),
      },
      {
        weight: 3,
        arbitrary: bodyArb({
          object_key: jsonStr(fc.constantFrom(...stored.map((s) => s.object_key))),
          sha256: jsonStr(sha()),
          size: fc.integer({ min: 1, max: 2000 }).map(String),
          manifest: manifest,
        }),
      },
    );
    await fuzz(
      fc.asyncProperty(
        body,
        authArb([agent.api_key, agent.api_key, agent.api_key, adminToken]),
        fc.oneof({ weight: 4, arbitrary: fc.constant('application/json') }, { weight: 1, arbitrary: contentType }),
        async (b, auth, ct) => {
          await send(server, {
            method: 'POST',
            path: '/v1/support/bundle/register',
            headers: headersOf(auth, ct, {}),
            body: b,
          });
        },
      ),
    );
  });

  it('GET /v1/support/bundles', async () => {
    await fuzz(
      fc.asyncProperty(
        queryArb(['tenant_id', 'limit', 'before']),
        authArb([supportToken, adminToken, agent.api_key]),
        extraHeaders,
        async (q, auth, extra) => {
          await send(server, {
            method: 'GET',
            path: `/v1/support/bundles${q}`,
            headers: headersOf(auth, undefined, extra),
          });
        },
      ),
    );
  });

  it('GET /v1/support/bundles/:id', async () => {
    await fuzz(
      fc.asyncProperty(
        segmentArb([bundleId, otherBundleId]),
        queryArb(['tenant_id']),
        authArb([supportToken, adminToken, otherAdminToken, agent.api_key]),
        extraHeaders,
        async (id, q, auth, extra) => {
          await send(server, {
            method: 'GET',
            path: `/v1/support/bundles/${id}${q}`,
            headers: headersOf(auth, undefined, extra),
          });
        },
      ),
    );
  });

  it('GET /v1/support/bundles/:id/download', async () => {
    await fuzz(
      fc.asyncProperty(
        segmentArb([bundleId, otherBundleId]),
        queryArb(['tenant_id']),
        authArb([supportToken, adminToken, otherAdminToken, agent.api_key]),
        extraHeaders,
        async (id, q, auth, extra) => {
          await send(server, {
            method: 'GET',
            path: `/v1/support/bundles/${id}/download${q}`,
            headers: headersOf(auth, undefined, extra),
          });
        },
      ),
    );
  });

  it('PUT /v1/objects/* (presigned)', async () => {
    const params = ['X-Guard-Tenant', 'X-Guard-Size', 'X-Guard-Sha256', 'X-Guard-Expires', 'X-Guard-Signature'];
    const slotArb = fc.constantFrom(...slots);
    const mutatedUrl = fc
      .tuple(
        slotArb,
        fc.constantFrom(...params),
        fc.constantFrom('set', 'delete', 'append', 'keep'),
        fc.oneof(printable(30), rawNumber),
      )
      .map(([s, name, how, value]) => {
        const u = new URL(s.url);
        if (how === 'set') u.searchParams.set(name, value);
        else if (how === 'delete') u.searchParams.delete(name);
        else if (how === 'append') u.searchParams.append(name, value);
        return { slot: s, path: `${u.pathname}${u.search}` };
      });
    const randomUrl = fc
      .tuple(fc.array(segmentArb(['bundles', 'x.tar.zst']), { minLength: 0, maxLength: 4 }), queryArb(params))
      .map(([segs, q]) => ({ slot: undefined, path: `/v1/objects/${segs.join('/')}${q}` }));
    const bodyChoice = fc.oneof(
      fc.constant('right' as const),
      fc.constant('flipped' as const),
      fc.uint8Array({ maxLength: 4096 }).map((b) => Buffer.from(b)),
    );
    await fuzz(
      fc.asyncProperty(
        fc.oneof(mutatedUrl, randomUrl),
        bodyChoice,
        fc.boolean(),
        fc.option(contentType, { nil: undefined }),
        fc.option(authArb([agent.api_key]), { nil: undefined, freq: 4 }),
        extraHeaders,
        async (target, choice, chunked, ct, auth, extra) => {
          let body: Buffer;
          if (choice === 'right') body = target.slot?.bytes ?? Buffer.from('x');
          else if (choice === 'flipped') {
            body = Buffer.from(target.slot?.bytes ?? Buffer.from('x'));
            body[0] ^= 1;
          } else body = choice;
          const headers = headersOf(auth, undefined, extra);
          if (ct !== undefined) headers['content-type'] = ct;
          const url = `${server.url}${target.path}`;
          const res = await putObject(url, body, { headers, contentLength: chunked ? null : body.length });
          checkAnswer(res.status, res.json, `${res.text} ${res.error ?? ''}`, {
            method: 'PUT',
            path: target.path,
            headers: { ...headers, chunked: String(chunked) },
            body: body.toString('latin1').slice(0, 64),
          });
        },
      ),
    );
  });

  it('any method on any path', async () => {
    const prefixes = [
      '/',
      '/v1',
      '/v1/',
      '/v1/agents/enroll',
      '/v1/enrollment-tokens',
      '/v1/agents',
      '/v1/signals',
      '/v1/support/bundle/upload-url',
      '/v1/support/bundle/register',
      '/v1/support/bundles',
      '/v1/objects',
      '/healthz',
      '/readyz',
      '/openapi.json',
      '/docs',
    ];
    await fuzz(
      fc.asyncProperty(
        fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
        fc.constantFrom(...prefixes),
        fc.array(segmentArb(['', '..', bundleId, 'download']), { maxLength: 3 }),
        queryArb(['tenant_id', 'limit', 'before']),
        authArb([supportToken, adminToken, agent.api_key]),
        contentType,
        fc.option(bodyArb({ token: rawString }), { nil: undefined }),
        async (method, prefix, segs, q, auth, ct, body) => {
          const path = `${prefix}${segs.length ? `/${segs.join('/')}` : ''}${q}`.replace(/^\/\//, '/');
          const withBody = body !== undefined && method !== 'GET' && method !== 'HEAD';
          await send(server, {
            method,
            path,
            headers: headersOf(auth, withBody ? ct : undefined, {}),
            body: withBody ? body : undefined,
          });
        },
      ),
    );
  });

  it('a malformed percent-escape in the path still gets the error shape', async () => {
    await fuzz(
      fc.asyncProperty(
        fc.constantFrom(
          '/v1/support/bundles/',
          '/v1/enrollment-tokens/',
          '/v1/agents/',
          '/v1/signals/',
          '/v1/objects/bundles/',
          '/v1/support/bundles/x/',
          '/nope/',
        ),
        fc.constantFrom('%', '%Z', '%ZZ', '%E0%A4%A', '%C3', '%ED%A0%80', '%FF'),
        printable(10).map((s) => encodeURIComponent(s)),
        fc.constantFrom('GET', 'DELETE', 'PUT'),
        async (prefix, bad, tail, method) => {
          await send(server, {
            method,
            path: `${prefix}${bad}${tail}`,
            headers: { authorization: `Bearer ${supportToken}` },
          });
        },
      ),
      100,
    );
  });

  it('an over-long path parameter still gets the error shape', async () => {
    await fuzz(
      fc.asyncProperty(
        fc.constantFrom('/v1/support/bundles/', '/v1/enrollment-tokens/', '/v1/agents/', '/v1/signals/'),
        fc.integer({ min: 101, max: 4000 }),
        fc.constantFrom('', '/download', '/revoke'),
        fc.constantFrom('GET', 'DELETE', 'POST'),
        async (prefix, n, suffix, method) => {
          await send(server, {
            method,
            path: `${prefix}${'a'.repeat(n)}${suffix}`,
            headers: { authorization: `Bearer ${adminToken}` },
          });
        },
      ),
      60,
    );
  });

  it('the server is still healthy and consistent after the fuzzing', async () => {
    assert.equal((await api(server.url, 'GET', '/readyz')).status, 200);
    const list = await api(server.url, 'GET', '/v1/support/bundles?limit=200', { token: supportToken });
    assert.equal(list.status, 200, list.text);
    const show = await api(server.url, 'GET', `/v1/support/bundles/${bundleId}`, { token: supportToken });
    assert.equal(show.status, 200, show.text);
    // The agent the fuzzing used throughout was never revoked: its key still works.
    const signal = await api(server.url, 'POST', '/v1/signals', { token: agent.api_key, body: VALID_SIGNAL });
    assert.equal(signal.status, 201, signal.text);
    const agents = await api(server.url, 'GET', '/v1/agents?limit=200', { token: adminToken });
    assert.equal(agents.status, 200, agents.text);
  });
});
