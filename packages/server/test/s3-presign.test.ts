// The presigned URLs the S3 store issues, checked by an independent SigV4 verification
// (sigv4-verify.ts: the canonical request rebuilt with @smithy/signature-v4 from the request
// as it would arrive), since s3rver checks none (DESIGN §9). First the verifier itself is
// held to AWS's published example; then our URLs pass it, and every way of bending one fails
// it: a tampered URL, another Content-Length, another or a missing checksum header, an
// unsigned x-amz header, an Authorization header, and time past the expiry.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { type ObjectStore, openObjectStore } from '../src/objects/index.ts';
import { parseObjectStore } from '../src/objects/settings.ts';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  PRESIGN_TTL_MS,
  presign,
  putObject,
  refusedUrl,
  setupTenant,
  sha256Hex,
  startTestServer,
  type TestServer,
  uploadBundle,
} from './harness.ts';
import { type LocalS3, startLocalS3, TEST_CREDENTIALS, useTestCredentials } from './s3-harness.ts';
import { verifyPresigned, type WireRequest } from './sigv4-verify.ts';

describe('the SigV4 verifier of the tests', () => {
  // AWS's published example of a presigned GET (Amazon S3 API reference, "Authenticating
  // Requests: Using Query Parameters"): the verifier must accept it, to the hex digit.
  const example: WireRequest = {
    method: 'GET',
    url:
      '/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request' +
      '&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host' +
      '&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404',
    headers: { host: 'examplebucket.s3.amazonaws.com' },
  };
  const awsCredentials = {
    accessKeyId: 'AKIAIOSFODNN7EXAMPLE',
    secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  };
  const during = new Date('2013-05-24T12:00:00Z');

  it("accepts AWS's published example of a presigned URL", async () => {
    assert.deepEqual(await verifyPresigned(example, awsCredentials, during), {
      ok: true,
      signedHeaders: ['host'],
      expiresAt: new Date('2013-05-25T00:00:00Z'),
    });
  });

  it('refuses the example with another key, another host, another secret, or after it expired', async () => {
    const cases: [WireRequest, typeof awsCredentials, Date][] = [
      [{ ...example, url: example.url.replace('/test.txt', '/test2.txt') }, awsCredentials, during],
      [{ ...example, headers: { host: 'otherbucket.s3.amazonaws.com' } }, awsCredentials, during],
      [example, { ...awsCredentials, secretAccessKey: 'x'.repeat(40) }, during],
      [example, awsCredentials, new Date('2013-05-25T00:00:01Z')],
    ];
    for (const [req, creds, now] of cases) assert.equal((await verifyPresigned(req, creds, now)).ok, false);
  });
});

describe('presigned URLs of the S3 store (independent SigV4 verification)', () => {
  let server: TestServer;
  let agent: EnrolledAgent;
  let tenant: Awaited<ReturnType<typeof setupTenant>>;
  before(async () => {
    server = await startTestServer({ store: 's3' });
    tenant = await setupTenant(server);
    agent = await enrollAgent(server.url, tenant.enroll_token);
  });
  after(() => server.cleanup());

  /** A presigned PUT and the request an agent sends with it (the response's headers verbatim). */
  async function presigned(size = 4096) {
    const bytes = randomBytes(size);
    const sha256 = sha256Hex(bytes);
    const res = await presign(server.url, agent.api_key, { size, sha256 });
    assert.equal(res.status, 200, res.text);
    const url = new URL(res.json.url);
    const request: WireRequest = {
      method: 'PUT',
      url: `${url.pathname}${url.search}`,
      headers: {
        host: url.host,
        'content-length': String(size),
        'user-agent': 'guard-agent/0.1.0',
        ...res.json.headers,
      },
    };
    return { bytes, sha256, json: res.json, url, request };
  }

  const verify = (req: WireRequest, now = server.clock.now()) => verifyPresigned(req, TEST_CREDENTIALS, now);

  it('a presigned PUT is valid 15 minutes and binds host, Content-Length and x-amz-checksum-sha256', async () => {
    const { sha256, json, url, request } = await presigned();
    const verdict = await verify(request);
    assert.equal(verdict.ok, true, JSON.stringify(verdict));
    assert.ok(verdict.ok);
    assert.deepEqual(verdict.signedHeaders, ['content-length', 'host', 'x-amz-checksum-sha256']);
    assert.equal(verdict.expiresAt.toISOString(), json.expires_at);
    assert.equal(url.searchParams.get('X-Amz-Expires'), String(PRESIGN_TTL_MS / 1000));
    assert.equal(json.headers['x-amz-checksum-sha256'], Buffer.from(sha256, 'hex').toString('base64'));
    // DESIGN §9: no checksum the SDK would compute over an empty body, in the query or signed.
    for (const name of url.searchParams.keys()) assert.doesNotMatch(name, /checksum|sdk-checksum/i, url.toString());
    assert.deepEqual(Object.keys(json.headers).sort(), ['content-type', 'x-amz-checksum-sha256']);
  });

  it('the URL is S3-shaped: path-style bucket and the object key, SigV4 query auth for this region', async () => {
    const { json, url } = await presigned();
    assert.equal(url.pathname, `/${server.s3?.bucket}/${json.object_key}`);
    assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
    assert.match(url.searchParams.get('X-Amz-Credential') ?? '', /^S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request$/);
  });

  it('a tampered URL fails: another key, expiry, date, signed-header list, signature or an added parameter', async () => {
    const { request, json } = await presigned();
    const q = (mutate: (u: URL) => void): WireRequest => {
      const u = new URL(request.url, 'http://x');
      mutate(u);
      return { ...request, url: `${u.pathname}${u.search}` };
    };
    const tampered: [string, WireRequest][] = [
      [
        'object key',
        { ...request, url: request.url.replace(json.object_key, json.object_key.replace('.tar.zst', 'x.tar.zst')) },
      ],
      ['expiry', q((u) => u.searchParams.set('X-Amz-Expires', '3600'))],
      ['date', q((u) => u.searchParams.set('X-Amz-Date', '20261121T100100Z'))],
      ['signed headers', q((u) => u.searchParams.set('X-Amz-SignedHeaders', 'host'))],
      ['signature', q((u) => u.searchParams.set('X-Amz-Signature', '0'.repeat(64)))],
      ['added parameter', q((u) => u.searchParams.set('versionId', '1'))],
      ['other host', { ...request, headers: { ...request.headers, host: '127.0.0.2:9' } }],
    ];
    for (const [what, req] of tampered) assert.equal((await verify(req)).ok, false, `${what}: accepted`);
  });

  it('a Content-Length other than the presigned size fails', async () => {
    const { request } = await presigned(4096);
    for (const length of ['4095', '4097', '0']) {
      const v = await verify({ ...request, headers: { ...request.headers, 'content-length': length } });
      assert.deepEqual(v, { ok: false, reason: 'signature does not match' }, length);
    }
  });

  it('another or a missing x-amz-checksum-sha256 fails, and so does an unsigned x-amz header', async () => {
    const { request } = await presigned();
    const other = createHash('sha256').update('other').digest('base64');
    const { 'x-amz-checksum-sha256': _, ...without } = request.headers;
    const cases: [string, WireRequest['headers']][] = [
      ['other checksum', { ...request.headers, 'x-amz-checksum-sha256': other }],
      ['no checksum', without],
      ['unsigned crc32', { ...request.headers, 'x-amz-checksum-crc32': 'AAAAAA==' }],
    ];
    for (const [what, headers] of cases) assert.equal((await verify({ ...request, headers })).ok, false, what);
  });

  it('an Authorization header beside the query signature fails (one auth mechanism)', async () => {
    const { request } = await presigned();
    const v = await verify({ ...request, headers: { ...request.headers, authorization: 'Bearer gak_x' } });
    assert.equal(v.ok, false);
  });

  it('the URL fails one second after its expiry, and passes one second before', async () => {
    const { request, json } = await presigned();
    const expiry = Date.parse(json.expires_at);
    assert.equal((await verify(request, new Date(expiry - 1000))).ok, true);
    assert.deepEqual(await verify(request, new Date(expiry + 1000)), { ok: false, reason: 'expired' });
  });

  it('every presigned request the local S3 received was verified, and the refused ones kept nothing', async () => {
    const up = await uploadBundle(server.url, agent.api_key);
    assert.deepEqual(await server.deps.store.verify(up.object_key), { size: up.bytes.length, sha256: up.sha256 });
    const bad = await presigned();
    const res = await putObject(bad.json.url, randomBytes(bad.bytes.length), { headers: bad.json.headers });
    assert.equal(res.status, 400);
    assert.match(res.text, /BadDigest/);
    assert.equal(await server.deps.store.verify(bad.json.object_key), undefined);
    const log = server.s3?.log ?? [];
    const presignedRequests = log.filter((r) => r.auth === 'presigned');
    assert.ok(presignedRequests.length >= 2);
    // No request reached the bucket without a verified signature or the server's own credentials.
    assert.deepEqual(
      log.filter((r) => r.auth === 'anonymous' && r.refused === undefined),
      [],
    );
  });

  it('a support download redirects to a presigned GET valid 60 s, which the verifier accepts and then refuses', async () => {
    const up = await uploadBundle(server.url, agent.api_key, { filename: 'web 1.tar.zst' });
    const dl = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}/download`, {
      token: server.supportToken,
    });
    assert.equal(dl.status, 302, dl.text);
    assert.equal(dl.headers.get('cache-control'), 'no-store');
    const location = new URL(dl.headers.get('location') ?? '');
    assert.equal(location.searchParams.get('X-Amz-Expires'), '60');
    assert.equal(location.searchParams.get('response-content-disposition'), 'attachment; filename="web_1.tar.zst"');
    const get: WireRequest = {
      method: 'GET',
      url: `${location.pathname}${location.search}`,
      headers: { host: location.host },
    };
    assert.equal((await verify(get)).ok, true);
    assert.equal((await verify(get, new Date(server.clock.ms + 61_000))).ok, false);
    assert.equal((await verify({ ...get, method: 'PUT' })).ok, false, 'the GET URL must not allow a PUT');
    const res = await fetch(location);
    assert.equal(res.status, 200);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(up.bytes));
    // A member of another tenant gets no URL at all.
    const other = await setupTenant(server);
    const denied = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}/download`, {
      token: other.admin_token,
    });
    assert.equal(denied.status, 404);
    assert.equal(denied.headers.get('location'), null);
  });

  it('register verifies with HeadObject (ChecksumMode ENABLED): the checksum S3 kept answers, the object is not read', async () => {
    const up = await uploadBundle(server.url, agent.api_key);
    const mine = (server.s3?.log ?? []).filter((r) => r.auth === 'header' && r.url.includes(up.object_key));
    assert.deepEqual(
      mine.map((r) => [r.method, r.headers['x-amz-checksum-mode']]),
      [['HEAD', 'ENABLED']],
    );
  });
});

async function* chunks(bytes: Buffer): AsyncGenerator<Buffer> {
  yield bytes;
}

describe('an S3-compatible server that keeps no checksum', () => {
  let s3: LocalS3;
  let store: ObjectStore;
  before(async () => {
    useTestCredentials();
    s3 = await startLocalS3({ checksums: false });
    store = await openObjectStore(parseObjectStore(s3.objectStoreUrl), '/nonexistent', {
      key: Buffer.alloc(32),
      publicUrl: () => 'http://unused',
    });
  });
  after(async () => {
    store.close();
    await s3.close();
  });

  it('verify reads and hashes the object instead, and answers undefined for a missing one', async () => {
    const bytes = randomBytes(100_000);
    const sha256 = sha256Hex(bytes);
    const now = new Date();
    const grant = {
      objectKey: 'bundles/t/x.tar.zst',
      tenantId: 't',
      size: bytes.length,
      sha256,
      expires: Math.floor(now.getTime() / 1000) + 900,
    };
    const { url, headers } = await store.presignPut(grant, now);
    assert.equal((await putObject(url, bytes, { headers })).status, 200);
    assert.deepEqual(await store.verify(grant.objectKey), { size: bytes.length, sha256 });
    assert.ok(
      s3.log.some((r) => r.method === 'GET' && r.auth === 'header'),
      'the object was not read',
    );
    assert.equal(await store.verify('bundles/t/missing.tar.zst'), undefined);
  });

  it('put refuses a body other than expected and leaves no object', async () => {
    const bytes = randomBytes(1000);
    await assert.rejects(
      store.put('bundles/t/bad.tar.zst', chunks(bytes), { size: bytes.length, sha256: sha256Hex('other') }),
      /SHA-256/,
    );
    assert.equal(await store.verify('bundles/t/bad.tar.zst'), undefined);
    await store.put('bundles/t/good.tar.zst', chunks(bytes), { size: bytes.length, sha256: sha256Hex(bytes) });
    assert.deepEqual(await store.verify('bundles/t/good.tar.zst'), { size: bytes.length, sha256: sha256Hex(bytes) });
  });
});

describe('readiness with an S3 store', () => {
  it('/readyz is 503 naming the object store when the bucket cannot be reached, and the database as ok', async () => {
    useTestCredentials();
    const endpoint = await refusedUrl(); // nothing listens there
    const server = await startTestServer({
      flags: { 'object-store': `s3://guard-bundles?endpoint=${endpoint}&path_style=1` },
    });
    try {
      const r = await api(server.url, 'GET', '/readyz');
      assert.equal(r.status, 503, r.text);
      assert.equal(r.json.status, 'not ready');
      assert.deepEqual(r.json.checks.database, { status: 'ok' });
      assert.equal(r.json.checks.object_store.status, 'failed');
      assert.match(r.json.checks.object_store.error, /^bucket guard-bundles: /);
      assert.equal((await api(server.url, 'GET', '/healthz')).status, 200, 'liveness does not depend on the store');
    } finally {
      await server.cleanup();
    }
  });
});
