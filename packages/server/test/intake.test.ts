// Bundle intake end to end against the real server on loopback (DESIGN §4, §6, §8; spec 2.3,
// 2.4, 4.2, 5, 8): presign → PUT → register, every refusal of the presigned PUT, register
// rules, enrolment tokens, authentication and tenant isolation, audit, collection of expired
// uploads, and what an operator sees (log, data dir, health, OpenAPI).

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { hashSecret } from '../src/auth/secrets.ts';
import { collectExpiredUploads } from '../src/objects/gc.ts';
import {
  addUser,
  api,
  type EnrolledAgent,
  enrollAgent,
  freePort,
  isErrorShape,
  type Loose,
  MiB,
  makeTempDir,
  objectExists,
  PRESIGN_TTL_MS,
  partialFiles,
  presign,
  putObject,
  register,
  setupCli,
  setupTenant,
  sha256Hex,
  sleep,
  spawnServer,
  startTestServer,
  stopSpawned,
  type TestServer,
  uploadBundle,
  validManifest,
  waitFor,
} from './harness.ts';
import { ON_POSTGRES } from './test-database.ts';

const HOUR_MS = 60 * 60 * 1000;

function assertError(res: { status: number | undefined; json: Loose; text: string }, status: number, code?: string) {
  assert.equal(res.status, status, `expected ${status}, got ${res.status}: ${res.text}`);
  assert.ok(isErrorShape(res.json), `not the error shape: ${res.text}`);
  if (code !== undefined) assert.equal(res.json.error.code, code, res.text);
}

function withParam(url: string, name: string, value: string): string {
  const u = new URL(url);
  u.searchParams.set(name, value);
  return u.toString();
}

async function uploadState(server: TestServer, objectKey: string): Promise<string | undefined> {
  const row = await server.deps.db
    .selectFrom('uploads')
    .select('state')
    .where('object_key', '=', objectKey)
    .executeTakeFirst();
  return row?.state;
}

/** Nothing of a refused PUT may remain: no object, no partial file, the slot still unfilled. */
async function assertNothingStored(server: TestServer, objectKey: string): Promise<void> {
  await waitFor(async () => (await partialFiles(server.dataDir)).length === 0, 'objects/.partial to be empty');
  assert.equal(await objectExists(server.dataDir, objectKey), false, `an object exists at ${objectKey}`);
  assert.notEqual(await uploadState(server, objectKey), 'stored');
}

interface Slot {
  bytes: Buffer;
  sha256: string;
  url: string;
  object_key: string;
  expires_at: string;
}

async function newSlot(server: TestServer, apiKey: string, size = 64 * 1024): Promise<Slot> {
  const bytes = randomBytes(size);
  const sha256 = sha256Hex(bytes);
  const res = await presign(server.url, apiKey, { size, sha256 });
  assert.equal(res.status, 200, res.text);
  return { bytes, sha256, ...res.json };
}

// ---------------------------------------------------------------------------------------

describe('bundle intake: presign, PUT, register', () => {
  let server: TestServer;
  let tenant: Awaited<ReturnType<typeof setupTenant>>;
  let agent: EnrolledAgent;
  before(async () => {
    server = await startTestServer();
    tenant = await setupTenant(server);
    agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: 'web-7.example' });
  });
  after(() => server.cleanup());

  it('an uploaded bundle is listed, shown with its manifest summary and downloaded byte for byte', async () => {
    const bytes = randomBytes(300 * 1024 + 7);
    const sha256 = sha256Hex(bytes);
    const p = await presign(server.url, agent.api_key, { filename: 'host 1.tar.zst', size: bytes.length, sha256 });
    assert.equal(p.status, 200, p.text);
    assert.ok(p.json.url.startsWith(`${server.url}/v1/objects/`), p.json.url);
    assert.equal(new URL(p.json.url).pathname, `/v1/objects/${p.json.object_key}`);
    assert.equal(p.json.expires_at, new Date(server.clock.ms + PRESIGN_TTL_MS).toISOString());
    assert.deepEqual(p.json.headers, { 'content-type': 'application/octet-stream' });

    const put = await putObject(p.json.url, bytes, { headers: p.json.headers });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json, { object_key: p.json.object_key, size: bytes.length });
    assert.equal(await objectExists(server.dataDir, p.json.object_key), true);

    const manifest = validManifest();
    const reg = await register(server.url, agent.api_key, {
      object_key: p.json.object_key,
      sha256,
      size: bytes.length,
      manifest,
    });
    assert.equal(reg.status, 201, reg.text);
    assert.match(reg.json.bundle_id, /^[A-Za-z0-9_-]+$/);
    assert.equal(reg.json.object_key, p.json.object_key);
    assert.equal(reg.json.uploaded_at, server.clock.now().toISOString());

    const summary = {
      bundle_id: reg.json.bundle_id,
      tenant_id: tenant.tenant_id,
      agent_id: agent.agent_id,
      hostname: 'web-7.example',
      filename: 'host 1.tar.zst',
      size: bytes.length,
      sha256,
      uploaded_at: reg.json.uploaded_at,
      agent_version: '0.1.0',
      trigger: 'cli',
      deleted: null,
    };
    const list = await api(server.url, 'GET', '/v1/support/bundles', { token: server.supportToken });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(
      list.json.bundles.find((b: Loose) => b.bundle_id === reg.json.bundle_id),
      summary,
    );

    const show = await api(server.url, 'GET', `/v1/support/bundles/${reg.json.bundle_id}`, {
      token: tenant.admin_token,
    });
    assert.equal(show.status, 200, show.text);
    assert.deepEqual(show.json, { ...summary, object_key: p.json.object_key, manifest });

    const dl = await api(server.url, 'GET', `/v1/support/bundles/${reg.json.bundle_id}/download`, {
      token: server.supportToken,
    });
    assert.equal(dl.status, 200, dl.text);
    assert.ok(dl.bytes.equals(bytes), 'downloaded bytes differ from the uploaded ones');
    assert.equal(dl.headers.get('content-length'), String(bytes.length));
    assert.equal(dl.headers.get('x-content-sha256'), sha256);
    assert.equal(dl.headers.get('content-type'), 'application/zstd');
    assert.equal(dl.headers.get('content-disposition'), 'attachment; filename="host_1.tar.zst"');
  });

  it("shows a manifest's redaction.extra_keys (the operator's extra keys) as the agent sent it", async () => {
    const base = validManifest();
    const manifest = {
      ...base,
      redaction: { ...(base.redaction as object), extra_keys: ['password', '^aws_.*_key$'] },
    };
    const up = await uploadBundle(server.url, agent.api_key, { manifest });
    const show = await api(server.url, 'GET', `/v1/support/bundles/${up.bundle_id}`, { token: tenant.admin_token });
    assert.equal(show.status, 200, show.text);
    assert.deepEqual(show.json.manifest, manifest);
  });

  it('registering twice answers 200 with the first record', async () => {
    const slot = await newSlot(server, agent.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const body = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
    const first = await register(server.url, agent.api_key, body);
    assert.equal(first.status, 201, first.text);
    server.clock.advance(5000);
    const second = await register(server.url, agent.api_key, body);
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.json, first.json);
    const count = await server.deps.db
      .selectFrom('bundles')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('object_key', '=', slot.object_key)
      .executeTakeFirstOrThrow();
    assert.equal(Number(count.n), 1);
  });

  it('a PUT to an already registered object is refused and the object is unchanged', async () => {
    const up = await uploadBundle(server.url, agent.api_key);
    const again = await putObject(up.url, up.bytes);
    assertError(again, 409, 'already_registered');
    assert.deepEqual(await server.deps.store.verify(up.object_key), { size: up.bytes.length, sha256: up.sha256 });
  });

  it('register re-reads an object changed on disk since its PUT: same size, other bytes → checksum_mismatch', async () => {
    const slot = await newSlot(server, agent.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const body = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
    // The digest kept from the PUT answers while the file is the one hashed …
    assert.deepEqual(await server.deps.store.verify(slot.object_key), { size: body.size, sha256: body.sha256 });
    // … and once the bytes change in place (same length), verify hashes the file again.
    const path = join(server.dataDir, 'objects', slot.object_key);
    const changed = Buffer.from(slot.bytes);
    changed[0] ^= 0xff;
    await writeFile(path, changed);
    await utimes(path, new Date(), new Date(Date.now() + 5000));
    assertError(await register(server.url, agent.api_key, body), 409, 'checksum_mismatch');
  });

  it('a PUT just before the URL expires is accepted', async () => {
    const slot = await newSlot(server, agent.api_key);
    server.clock.advance(PRESIGN_TTL_MS - 1000);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const reg = await register(server.url, agent.api_key, {
      object_key: slot.object_key,
      sha256: slot.sha256,
      size: slot.bytes.length,
    });
    assert.equal(reg.status, 201, reg.text);
  });
});

// ---------------------------------------------------------------------------------------

describe('presigned PUT refusals', () => {
  let server: TestServer;
  let agent: EnrolledAgent;
  let otherTenantId: string;
  before(async () => {
    server = await startTestServer();
    const tenant = await setupTenant(server);
    agent = await enrollAgent(server.url, tenant.enroll_token);
    otherTenantId = (await setupTenant(server)).tenant_id;
  });
  after(() => server.cleanup());

  it('a PUT after the URL expired is refused with url_expired and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    server.clock.advance(PRESIGN_TTL_MS + 1000);
    assertError(await putObject(slot.url, slot.bytes), 403, 'url_expired');
    await assertNothingStored(server, slot.object_key);
  });

  it('a PUT at the exact expiry instant is refused', async () => {
    const slot = await newSlot(server, agent.api_key);
    server.clock.ms = Date.parse(slot.expires_at);
    assertError(await putObject(slot.url, slot.bytes), 403, 'url_expired');
    await assertNothingStored(server, slot.object_key);
  });

  it('a tampered signature is refused with invalid_signature and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const sig = new URL(slot.url).searchParams.get('X-Guard-Signature') as string;
    const flipped = `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`;
    assertError(
      await putObject(withParam(slot.url, 'X-Guard-Signature', flipped), slot.bytes),
      403,
      'invalid_signature',
    );
    await assertNothingStored(server, slot.object_key);
  });

  it('a tampered size is refused with invalid_signature and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const bigger = Buffer.concat([slot.bytes, Buffer.from('x')]);
    const url = withParam(slot.url, 'X-Guard-Size', String(bigger.length));
    assertError(await putObject(url, bigger), 403, 'invalid_signature');
    await assertNothingStored(server, slot.object_key);
  });

  it('a tampered sha256 is refused with invalid_signature and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const other = randomBytes(slot.bytes.length);
    const url = withParam(slot.url, 'X-Guard-Sha256', sha256Hex(other));
    assertError(await putObject(url, other), 403, 'invalid_signature');
    await assertNothingStored(server, slot.object_key);
  });

  it('a tampered tenant is refused with invalid_signature and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const url = withParam(slot.url, 'X-Guard-Tenant', otherTenantId);
    assertError(await putObject(url, slot.bytes), 403, 'invalid_signature');
    await assertNothingStored(server, slot.object_key);
  });

  it('a tampered expiry is refused with invalid_signature and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const expires = Number(new URL(slot.url).searchParams.get('X-Guard-Expires'));
    server.clock.advance(PRESIGN_TTL_MS + 1000);
    const url = withParam(slot.url, 'X-Guard-Expires', String(expires + 3600));
    assertError(await putObject(url, slot.bytes), 403, 'invalid_signature');
    await assertNothingStored(server, slot.object_key);
  });

  it('another object key with a valid signature of another object is refused with invalid_signature', async () => {
    const a = await newSlot(server, agent.api_key);
    const b = await newSlot(server, agent.api_key);
    const ua = new URL(a.url);
    const ub = new URL(b.url);
    const url = `${ub.origin}${ub.pathname}${ua.search}`;
    assertError(await putObject(url, a.bytes), 403, 'invalid_signature');
    await assertNothingStored(server, a.object_key);
    await assertNothingStored(server, b.object_key);
  });

  it('a URL missing its signature parameters is refused with 400 and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const u = new URL(slot.url);
    u.searchParams.delete('X-Guard-Signature');
    assertError(await putObject(u.toString(), slot.bytes), 400, 'malformed_url');
    await assertNothingStored(server, slot.object_key);
  });

  it('a Content-Length other than the presigned size is refused with 400 and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const longer = Buffer.concat([slot.bytes, randomBytes(10)]);
    assertError(await putObject(slot.url, longer), 400, 'size_mismatch');
    const shorter = slot.bytes.subarray(0, slot.bytes.length - 10);
    assertError(await putObject(slot.url, shorter), 400, 'size_mismatch');
    await assertNothingStored(server, slot.object_key);
  });

  it('a chunked body without Content-Length is refused with 411 and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const res = await putObject(slot.url, slot.bytes, { contentLength: null, chunkBytes: 8 * 1024 });
    assertError(res, 411, 'length_required');
    await assertNothingStored(server, slot.object_key);
  });

  it('a body whose SHA-256 differs from the presign is refused with sha256_mismatch and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const wrong = Buffer.from(slot.bytes);
    wrong[wrong.length - 1] ^= 0xff;
    assertError(await putObject(slot.url, wrong), 400, 'sha256_mismatch');
    await assertNothingStored(server, slot.object_key);
    // The same URL still takes the right bytes afterwards.
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
  });

  it('a PUT carrying an Authorization header is refused with 400 and nothing is kept', async () => {
    const slot = await newSlot(server, agent.api_key);
    const res = await putObject(slot.url, slot.bytes, { headers: { authorization: `Bearer ${agent.api_key}` } });
    assertError(res, 400, 'authorization_not_allowed');
    await assertNothingStored(server, slot.object_key);
  });

  it('a PUT carrying any other Authorization scheme (Basic, a malformed Bearer, empty) is refused with 400 authorization_not_allowed', async () => {
    const slot = await newSlot(server, agent.api_key);
    for (const authorization of ['Basic dXNlcjpwYXNz', 'Bearer x', 'AWS4-HMAC-SHA256 Credential=a/b', '']) {
      const res = await putObject(slot.url, slot.bytes, { headers: { authorization } });
      assertError(res, 400, 'authorization_not_allowed');
      await assertNothingStored(server, slot.object_key);
    }
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
  });

  it('a client that aborts mid-body leaves no object and no partial file', async () => {
    const slot = await newSlot(server, agent.api_key, 4 * MiB);
    const res = await putObject(slot.url, slot.bytes, {
      abortAfter: 2 * MiB,
      chunkBytes: 64 * 1024,
      beforeAbort: () =>
        waitFor(async () => (await partialFiles(server.dataDir)).length > 0, 'the PUT to open its partial file'),
    });
    assert.equal(res.status, undefined, `the aborted PUT got a response: ${res.status} ${res.text}`);
    await assertNothingStored(server, slot.object_key);
    assert.equal(await uploadState(server, slot.object_key), 'presigned');
  });

  it('a body shorter than its Content-Length, then a hang-up, leaves nothing', async () => {
    const slot = await newSlot(server, agent.api_key);
    const res = await putObject(slot.url, slot.bytes, {
      abortAfter: slot.bytes.length - 1,
      beforeAbort: () =>
        waitFor(async () => (await partialFiles(server.dataDir)).length > 0, 'the PUT to open its partial file'),
    });
    assert.notEqual(res.status, 200);
    await assertNothingStored(server, slot.object_key);
  });

  it('bytes sent beyond Content-Length never become part of the object', async () => {
    const slot = await newSlot(server, agent.api_key);
    const trailing = Buffer.concat([slot.bytes, Buffer.from('GARBAGE-AFTER-THE-BODY')]);
    // The trailing bytes are a malformed next request on the connection: the server may refuse
    // the connection (400) or store the first Content-Length bytes; it never stores more.
    const res = await putObject(slot.url, trailing, { contentLength: slot.bytes.length });
    assert.ok(res.status === undefined || res.status < 500, `${res.status} ${res.text}`);
    await waitFor(async () => (await partialFiles(server.dataDir)).length === 0, 'objects/.partial to be empty');
    const stored = await server.deps.store.verify(slot.object_key);
    if (stored !== undefined) assert.deepEqual(stored, { size: slot.bytes.length, sha256: slot.sha256 });
    if (res.status === 200) assert.notEqual(stored, undefined);
  });
});

// ---------------------------------------------------------------------------------------

describe('register and presign rules', () => {
  let server: TestServer;
  let agentA: EnrolledAgent;
  let agentA2: EnrolledAgent;
  let agentB: EnrolledAgent;
  before(async () => {
    server = await startTestServer();
    const tenantA = await setupTenant(server);
    agentA = await enrollAgent(server.url, tenantA.enroll_token);
    agentA2 = await enrollAgent(server.url, tenantA.enroll_token, { hostname: 'host-2.example' });
    agentB = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
  });
  after(() => server.cleanup());

  it("another agent of the same tenant cannot register an agent's object: 403 agent_mismatch", async () => {
    const slot = await newSlot(server, agentA.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const body = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
    assertError(await register(server.url, agentA2.api_key, body), 403, 'agent_mismatch');
    assert.equal(await uploadState(server, slot.object_key), 'stored');
    const own = await register(server.url, agentA.api_key, body);
    assert.equal(own.status, 201, own.text);
    assert.equal(own.json.object_key, slot.object_key);
    // Once registered, the other agent still gets the same refusal, never the record.
    assertError(await register(server.url, agentA2.api_key, body), 403, 'agent_mismatch');
    const row = await server.deps.db
      .selectFrom('bundles')
      .select('agent_id')
      .where('object_key', '=', slot.object_key)
      .executeTakeFirstOrThrow();
    assert.equal(row.agent_id, agentA.agent_id);
  });

  it("registering another tenant's object is not found", async () => {
    const slot = await newSlot(server, agentA.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const res = await register(server.url, agentB.api_key, {
      object_key: slot.object_key,
      sha256: slot.sha256,
      size: slot.bytes.length,
    });
    assertError(res, 404, 'not_found');
    assert.equal(await uploadState(server, slot.object_key), 'stored');
  });

  it('registering an unknown object key is not found', async () => {
    const res = await register(server.url, agentA.api_key, {
      object_key: `bundles/${agentA.tenant_id}/2026-11-21/${randomBytes(16).toString('hex')}.tar.zst`,
      sha256: sha256Hex('x'),
      size: 1,
    });
    assertError(res, 404, 'not_found');
  });

  it('registering before the PUT is refused with object_missing', async () => {
    const slot = await newSlot(server, agentA.api_key);
    const res = await register(server.url, agentA.api_key, {
      object_key: slot.object_key,
      sha256: slot.sha256,
      size: slot.bytes.length,
    });
    assertError(res, 409, 'object_missing');
    const bundles = await server.deps.db
      .selectFrom('bundles')
      .select('id')
      .where('object_key', '=', slot.object_key)
      .execute();
    assert.equal(bundles.length, 0);
  });

  it('registering with a size or sha256 other than the presign is refused with 409', async () => {
    const slot = await newSlot(server, agentA.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const base = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
    assertError(await register(server.url, agentA.api_key, { ...base, size: base.size + 1 }), 409);
    assertError(await register(server.url, agentA.api_key, { ...base, sha256: sha256Hex('other') }), 409);
    assert.equal(await uploadState(server, slot.object_key), 'stored');
    assert.equal((await register(server.url, agentA.api_key, base)).status, 201);
  });

  it('a manifest that breaks the contract is refused with invalid_manifest', async () => {
    const slot = await newSlot(server, agentA.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    const base = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
    const bad: unknown[] = [
      validManifest({ trigger: 'manual' }),
      validManifest({ bundle_version: 2 }),
      validManifest({ agent_version: '' }),
      validManifest({ generated_at: 'yesterday' }),
      validManifest({ contents: 'agent.log' }),
      validManifest({ contents: [{ name: 'agent.log', size: 1, sha256: 'ABC' }] }),
      validManifest({ contents: [{ name: '../etc/passwd', size: 1, sha256: sha256Hex('x') }] }),
      validManifest({ trimmed_segments: [1] }),
      validManifest({ redaction: { pattern: 'x', values_masked: -1, members: {} } }),
      validManifest({ collection_errors: [{ source: 'dmesg' }] }),
      {},
    ];
    for (const manifest of bad) {
      const res = await register(server.url, agentA.api_key, { ...base, manifest });
      assertError(res, 400, 'invalid_manifest');
    }
    assert.equal(await uploadState(server, slot.object_key), 'stored');
  });

  it('a deeply nested unknown value inside an otherwise valid manifest is dropped, never a server error', async () => {
    const slot = await newSlot(server, agentA.api_key);
    assert.equal((await putObject(slot.url, slot.bytes)).status, 200);
    // ~20 000 levels: a 40 KB body, far below the 1 MiB JSON limit.
    const deep = `${'['.repeat(20_000)}1${']'.repeat(20_000)}`;
    const manifest = JSON.stringify(validManifest()).slice(0, -1);
    const rawBody = `{"object_key":${JSON.stringify(slot.object_key)},"sha256":"${slot.sha256}","size":${slot.bytes.length},"manifest":${manifest},"extra":${deep}}}`;
    const res = await api(server.url, 'POST', '/v1/support/bundle/register', {
      token: agentA.api_key,
      rawBody,
      headers: { 'content-type': 'application/json' },
    });
    // Unknown manifest fields are dropped (newer agents may add some), so only the
    // contract's fields are stored and the nesting never reaches the server's serialiser.
    assert.equal(res.status, 201, res.text);
    const row = await server.deps.db
      .selectFrom('bundles')
      .select('manifest')
      .where('object_key', '=', slot.object_key)
      .executeTakeFirstOrThrow();
    assert.deepEqual(
      Object.keys(JSON.parse(row.manifest)).sort(),
      Object.keys(validManifest())
        .concat(['collection_errors'])
        .filter((k, i, a) => a.indexOf(k) === i)
        .sort(),
    );
  });

  it('presigning a bundle over the size limit is refused with 413', async () => {
    const res = await presign(server.url, agentA.api_key, { size: 2 * 1024 * MiB + 1, sha256: sha256Hex('x') });
    assertError(res, 413, 'bundle_too_large');
    const atLimit = await presign(server.url, agentA.api_key, { size: 2 * 1024 * MiB, sha256: sha256Hex('x') });
    assert.equal(atLimit.status, 200, atLimit.text);
  });
});

// ---------------------------------------------------------------------------------------

describe('enrolment tokens', () => {
  let server: TestServer;
  let tenant: Awaited<ReturnType<typeof setupTenant>>;
  before(async () => {
    server = await startTestServer();
    tenant = await setupTenant(server);
  });
  after(() => server.cleanup());

  const enroll = (token: string) =>
    api(server.url, 'POST', '/v1/agents/enroll', { body: { token, hostname: 'h', agent_version: '0.1.0' } });
  const createToken = async (body: Record<string, unknown>) => {
    const res = await api(server.url, 'POST', '/v1/enrollment-tokens', { token: tenant.admin_token, body });
    assert.equal(res.status, 201, res.text);
    return res.json as { id: string; token: string; max_uses: number; expires_at: string };
  };

  it('a fresh token enrolls an agent whose key works for its tenant', async () => {
    const res = await enroll(tenant.enroll_token);
    assert.equal(res.status, 201, res.text);
    assert.equal(res.json.tenant_id, tenant.tenant_id);
    assert.match(res.json.api_key, /^gak_/);
    const p = await presign(server.url, res.json.api_key, { size: 1, sha256: sha256Hex('x') });
    assert.equal(p.status, 200, p.text);
    assert.ok(p.json.object_key.startsWith(`bundles/${tenant.tenant_id}/`));
  });

  it('an unknown enrolment token is refused with invalid_enrollment_token', async () => {
    assertError(await enroll(`get_${randomBytes(32).toString('base64url')}`), 401, 'invalid_enrollment_token');
  });

  it('an expired enrolment token is refused with invalid_enrollment_token', async () => {
    const short = await createToken({ expires_in_seconds: 60 });
    server.clock.advance(59_000);
    assert.equal((await enroll(short.token)).status, 201);
    server.clock.advance(2000);
    assertError(await enroll(short.token), 401, 'invalid_enrollment_token');
  });

  it('the setup enrolment token expires after its lifetime', async () => {
    const other = await setupTenant(server);
    server.clock.ms = Date.parse(other.enroll_token_expires_at);
    assertError(await enroll(other.enroll_token), 401, 'invalid_enrollment_token');
  });

  it('a revoked enrolment token is refused with invalid_enrollment_token', async () => {
    const t = await createToken({});
    const del = await api(server.url, 'DELETE', `/v1/enrollment-tokens/${t.id}`, { token: tenant.admin_token });
    assert.equal(del.status, 204, del.text);
    assertError(await enroll(t.token), 401, 'invalid_enrollment_token');
    const list = await api(server.url, 'GET', '/v1/enrollment-tokens', { token: tenant.admin_token });
    assert.equal(list.json.tokens.find((x: Loose) => x.id === t.id).revoked, true);
  });

  it('an enrolment token is refused once its use limit is reached', async () => {
    const t = await createToken({ max_uses: 1 });
    assert.equal((await enroll(t.token)).status, 201);
    assertError(await enroll(t.token), 401, 'invalid_enrollment_token');
    const list = await api(server.url, 'GET', '/v1/enrollment-tokens', { token: tenant.admin_token });
    assert.equal(list.json.tokens.find((x: Loose) => x.id === t.id).uses, 1);
  });

  it('concurrent enrolments never exceed the use limit', async () => {
    const t = await createToken({ max_uses: 3 });
    const results = await Promise.all(Array.from({ length: 10 }, () => enroll(t.token)));
    assert.equal(results.filter((r) => r.status === 201).length, 3);
    for (const r of results.filter((x) => x.status !== 201)) assertError(r, 401, 'invalid_enrollment_token');
  });

  it("an admin cannot revoke another tenant's enrolment token", async () => {
    const other = await setupTenant(server);
    const res = await api(server.url, 'POST', '/v1/enrollment-tokens', { token: other.admin_token, body: {} });
    assert.equal(res.status, 201);
    const del = await api(server.url, 'DELETE', `/v1/enrollment-tokens/${res.json.id}`, { token: tenant.admin_token });
    assertError(del, 404, 'not_found');
    assert.equal((await enroll(res.json.token)).status, 201);
  });
});

// ---------------------------------------------------------------------------------------

describe('authentication and tenant isolation', () => {
  let server: TestServer;
  let a: Awaited<ReturnType<typeof setupTenant>>;
  let b: Awaited<ReturnType<typeof setupTenant>>;
  let agentA: EnrolledAgent;
  let agentB: EnrolledAgent;
  let memberA: string;
  let bundleA: string;
  let bundleB: string;
  before(async () => {
    server = await startTestServer();
    a = await setupTenant(server);
    b = await setupTenant(server);
    agentA = await enrollAgent(server.url, a.enroll_token);
    agentB = await enrollAgent(server.url, b.enroll_token);
    memberA = await addUser(server, a.tenant_id, 'member');
    bundleA = (await uploadBundle(server.url, agentA.api_key)).bundle_id;
    bundleB = (await uploadBundle(server.url, agentB.api_key)).bundle_id;
  });
  after(() => server.cleanup());

  it('text with a NUL character is refused with 400 in a query string, a path parameter and a JSON body, for support, admins and members', async () => {
    // PostgreSQL cannot hold U+0000 in text: unrefused, it reached the database as a 500 there
    // (the query string's and path's parameter objects were not recognised as plain objects).
    const refused = [
      ['GET', '/v1/support/bundles?tenant_id=%00', server.supportToken],
      ['GET', `/v1/support/bundles?tenant_id=${a.tenant_id}%00`, server.supportToken],
      ['GET', '/v1/audit?tenant_id=%00', server.supportToken],
      ['GET', '/v1/support/bundles?before=%00', a.admin_token],
      ['GET', '/v1/signals?before=x%00', a.admin_token],
      ['GET', '/v1/signals?before=x%00', memberA],
      ['GET', '/v1/webhooks/endpoints/%00', memberA],
      ['GET', '/v1/support/bundles/%00', a.admin_token],
      ['GET', `/v1/support/bundles/${bundleA}%00`, server.supportToken],
      ['GET', '/v1/webhooks/endpoints/%00', a.admin_token],
    ] as const;
    for (const [method, path, token] of refused) {
      const res = await api(server.url, method, path, { token });
      assertError(res, 400, 'invalid_request');
      assert.match(res.json.error.message, /NUL character/, path);
    }
    const body = { name: 'a\u0000b', url: 'https://example.com/hook' };
    const res = await api(server.url, 'POST', '/v1/webhooks/endpoints', { token: a.admin_token, body });
    assertError(res, 400, 'invalid_request');
    assert.match(res.json.error.message, /NUL character/);
    // Without it, the same requests are answered as usual.
    const ok = await api(server.url, 'GET', `/v1/support/bundles?tenant_id=${a.tenant_id}`, {
      token: server.supportToken,
    });
    assert.equal(ok.status, 200, ok.text);
  });

  it('a request without, with a malformed or with an unknown bearer is 401', async () => {
    const body = { filename: 'b.tar.zst', size: 1, sha256: sha256Hex('x') };
    const headers: (Record<string, string> | undefined)[] = [
      undefined,
      { authorization: '' },
      { authorization: 'Basic dXNlcjpwYXNz' },
      { authorization: 'Bearer' },
      { authorization: 'Bearer !!!not-a-token!!!' },
      { authorization: `bearer ${agentA.api_key}` },
      { authorization: `Bearer ${agentA.api_key} extra` },
      { authorization: `Bearer gak_${randomBytes(32).toString('base64url')}` },
      { authorization: `Bearer gut_${randomBytes(32).toString('base64url')}` },
      { authorization: `Bearer xyz_${randomBytes(32).toString('base64url')}` },
    ];
    for (const h of headers) {
      assertError(
        await api(server.url, 'POST', '/v1/support/bundle/upload-url', { body, headers: h }),
        401,
        'unauthorized',
      );
      assertError(await api(server.url, 'GET', '/v1/support/bundles', { headers: h }), 401, 'unauthorized');
      assertError(await api(server.url, 'GET', '/v1/enrollment-tokens', { headers: h }), 401, 'unauthorized');
    }
  });

  it('an agent key cannot read support bundles or manage enrolment tokens', async () => {
    const t = agentA.api_key;
    assertError(await api(server.url, 'GET', '/v1/support/bundles', { token: t }), 403, 'forbidden');
    assertError(await api(server.url, 'GET', `/v1/support/bundles/${bundleA}`, { token: t }), 403, 'forbidden');
    assertError(
      await api(server.url, 'GET', `/v1/support/bundles/${bundleA}/download`, { token: t }),
      403,
      'forbidden',
    );
    assertError(await api(server.url, 'POST', '/v1/enrollment-tokens', { token: t, body: {} }), 403, 'forbidden');
  });

  it('a user token cannot presign or register an upload', async () => {
    for (const token of [a.admin_token, memberA, server.supportToken as string]) {
      const body = { filename: 'b.tar.zst', size: 1, sha256: sha256Hex('x') };
      assertError(await api(server.url, 'POST', '/v1/support/bundle/upload-url', { token, body }), 403, 'forbidden');
      const reg = await register(server.url, token, { object_key: 'bundles/x', sha256: sha256Hex('x'), size: 1 });
      assertError(reg, 403, 'forbidden');
    }
  });

  it('a member cannot create enrolment tokens', async () => {
    assertError(await api(server.url, 'POST', '/v1/enrollment-tokens', { token: memberA, body: {} }), 403, 'forbidden');
  });

  it("a member of tenant A cannot see tenant B's bundles", async () => {
    for (const token of [memberA, a.admin_token]) {
      for (const q of ['', `?tenant_id=${b.tenant_id}`]) {
        const list = await api(server.url, 'GET', `/v1/support/bundles${q}`, { token });
        assert.equal(list.status, 200, list.text);
        const ids = list.json.bundles.map((x: Loose) => x.bundle_id);
        assert.ok(ids.includes(bundleA), 'own bundle missing');
        assert.ok(!ids.includes(bundleB), "another tenant's bundle is listed");
        assert.ok(list.json.bundles.every((x: Loose) => x.tenant_id === a.tenant_id));
      }
      assertError(await api(server.url, 'GET', `/v1/support/bundles/${bundleB}`, { token }), 404, 'not_found');
      assertError(await api(server.url, 'GET', `/v1/support/bundles/${bundleB}/download`, { token }), 404, 'not_found');
      assert.equal((await api(server.url, 'GET', `/v1/support/bundles/${bundleA}`, { token })).status, 200);
    }
  });

  it('support staff see every tenant and can filter by tenant_id', async () => {
    const token = server.supportToken as string;
    const all = await api(server.url, 'GET', '/v1/support/bundles', { token });
    assert.equal(all.status, 200, all.text);
    const ids = all.json.bundles.map((x: Loose) => x.bundle_id);
    assert.ok(ids.includes(bundleA) && ids.includes(bundleB), all.text);
    const onlyB = await api(server.url, 'GET', `/v1/support/bundles?tenant_id=${b.tenant_id}`, { token });
    assert.deepEqual(
      onlyB.json.bundles.map((x: Loose) => x.bundle_id),
      [bundleB],
    );
    for (const id of [bundleA, bundleB]) {
      assert.equal((await api(server.url, 'GET', `/v1/support/bundles/${id}`, { token })).status, 200);
      assert.equal((await api(server.url, 'GET', `/v1/support/bundles/${id}/download`, { token })).status, 200);
    }
  });

  it('paging with next_before reaches every bundle, even when several share an upload time', async () => {
    const token = server.supportToken as string;
    const tenant = await setupTenant(server);
    const agent = await enrollAgent(server.url, tenant.enroll_token);
    const want: string[] = [];
    for (let i = 0; i < 3; i++) want.push((await uploadBundle(server.url, agent.api_key)).bundle_id);
    const seen: string[] = [];
    let before: string | null = null;
    for (let page = 0; page < 10; page++) {
      const q: string = `?tenant_id=${tenant.tenant_id}&limit=1${before ? `&before=${encodeURIComponent(before)}` : ''}`;
      const res = await api(server.url, 'GET', `/v1/support/bundles${q}`, { token });
      assert.equal(res.status, 200, res.text);
      seen.push(...res.json.bundles.map((x: Loose) => x.bundle_id));
      before = res.json.next_before;
      if (before === null) break;
    }
    assert.deepEqual([...seen].sort(), [...want].sort());
  });

  it('the before filter compares instants, not strings', async () => {
    const token = server.supportToken as string;
    const tenant = await setupTenant(server);
    const agent = await enrollAgent(server.url, tenant.enroll_token);
    const up = await uploadBundle(server.url, agent.api_key);
    const at = Date.parse(up.uploaded_at);
    const list = async (before: string) => {
      const q = `?tenant_id=${tenant.tenant_id}&before=${encodeURIComponent(before)}`;
      const res = await api(server.url, 'GET', `/v1/support/bundles${q}`, { token });
      assert.equal(res.status, 200, res.text);
      return res.json.bundles.map((x: Loose) => x.bundle_id);
    };
    assert.deepEqual(await list(new Date(at + 1000).toISOString()), [up.bundle_id]);
    // One hour before the upload, written with a +02:00 offset.
    const hourBefore = new Date(at - HOUR_MS + 2 * HOUR_MS).toISOString().replace(/\.\d{3}Z$/, '+02:00');
    assert.deepEqual(await list(hourBefore), [], `before=${hourBefore} lists a bundle uploaded at ${up.uploaded_at}`);
    // The upload instant itself, without milliseconds: the bundle is not uploaded *before* it.
    const same = up.uploaded_at.replace(/\.\d{3}Z$/, 'Z');
    assert.deepEqual(await list(same), [], `before=${same} lists a bundle uploaded at ${up.uploaded_at}`);
  });
});

// ---------------------------------------------------------------------------------------

describe('audit of support reads', () => {
  let server: TestServer;
  let tenant: Awaited<ReturnType<typeof setupTenant>>;
  let bundleId: string;
  before(async () => {
    server = await startTestServer();
    tenant = await setupTenant(server);
    const agent = await enrollAgent(server.url, tenant.enroll_token);
    bundleId = (await uploadBundle(server.url, agent.api_key)).bundle_id;
  });
  after(() => server.cleanup());

  const auditRows = () => server.deps.db.selectFrom('audit_log').selectAll().orderBy('at').orderBy('id').execute();
  const userId = async (token: string) => {
    const res = await server.deps.db
      .selectFrom('api_tokens')
      .select('user_id')
      .where('token_hash', '=', hashSecret(token))
      .executeTakeFirstOrThrow();
    return res.user_id;
  };

  it('every list, show and download writes an audit row naming who read what', async () => {
    const support = server.supportToken as string;
    const cases: {
      token: string;
      path: string;
      action: string;
      target: string;
      tenant: string | null;
      role: string;
    }[] = [
      {
        token: support,
        path: '/v1/support/bundles',
        action: 'bundle.list',
        target: '*',
        tenant: null,
        role: 'support',
      },
      {
        token: support,
        path: `/v1/support/bundles?tenant_id=${tenant.tenant_id}`,
        action: 'bundle.list',
        target: tenant.tenant_id,
        tenant: tenant.tenant_id,
        role: 'support',
      },
      {
        token: tenant.admin_token,
        path: '/v1/support/bundles',
        action: 'bundle.list',
        target: tenant.tenant_id,
        tenant: tenant.tenant_id,
        role: 'admin',
      },
      {
        token: support,
        path: `/v1/support/bundles/${bundleId}`,
        action: 'bundle.show',
        target: bundleId,
        tenant: tenant.tenant_id,
        role: 'support',
      },
      {
        token: tenant.admin_token,
        path: `/v1/support/bundles/${bundleId}/download`,
        action: 'bundle.download',
        target: bundleId,
        tenant: tenant.tenant_id,
        role: 'admin',
      },
      {
        token: support,
        path: `/v1/support/bundles/${bundleId}/download`,
        action: 'bundle.download',
        target: bundleId,
        tenant: tenant.tenant_id,
        role: 'support',
      },
    ];
    for (const c of cases) {
      const beforeRows = await auditRows();
      server.clock.advance(1000);
      const res = await api(server.url, 'GET', c.path, { token: c.token });
      assert.equal(res.status, 200, res.text);
      const afterRows = await auditRows();
      assert.equal(
        afterRows.length,
        beforeRows.length + 1,
        `${c.path} wrote ${afterRows.length - beforeRows.length} rows`,
      );
      const row = afterRows.find((r) => !beforeRows.some((x) => x.id === r.id));
      assert.ok(row);
      assert.deepEqual(
        { ...row, id: undefined },
        {
          id: undefined,
          at: server.clock.now().toISOString(),
          actor_id: await userId(c.token),
          actor_role: c.role,
          tenant_id: c.tenant,
          action: c.action,
          target: c.target,
        },
      );
    }
  });
});

// ---------------------------------------------------------------------------------------

describe('collection of expired uploads', () => {
  let server: TestServer;
  let agent: EnrolledAgent;
  before(async () => {
    server = await startTestServer();
    agent = await enrollAgent(server.url, (await setupTenant(server)).enroll_token);
  });
  after(() => server.cleanup());

  it('an expired presigned slot and an unregistered object past the grace period are collected; a registered bundle stays', async () => {
    const presigned = await newSlot(server, agent.api_key);
    const stored = await newSlot(server, agent.api_key);
    assert.equal((await putObject(stored.url, stored.bytes)).status, 200);
    const registered = await uploadBundle(server.url, agent.api_key);

    assert.equal(await collectExpiredUploads(server.deps), 0, 'nothing is collected before expiry');

    server.clock.advance(PRESIGN_TTL_MS + 1000);
    assert.equal(await collectExpiredUploads(server.deps), 1, 'only the empty slot is collected at expiry');
    assert.equal(await uploadState(server, presigned.object_key), undefined);
    assert.equal(await uploadState(server, stored.object_key), 'stored', 'a stored object is kept during the grace');
    assert.equal(await objectExists(server.dataDir, stored.object_key), true);

    server.clock.advance(HOUR_MS);
    assert.equal(await collectExpiredUploads(server.deps), 1);
    assert.equal(await uploadState(server, stored.object_key), undefined);
    assert.equal(await objectExists(server.dataDir, stored.object_key), false);
    const late = await register(server.url, agent.api_key, {
      object_key: stored.object_key,
      sha256: stored.sha256,
      size: stored.bytes.length,
    });
    assertError(late, 404);

    assert.equal(await uploadState(server, registered.object_key), 'registered');
    assert.equal(await objectExists(server.dataDir, registered.object_key), true);
    const dl = await api(server.url, 'GET', `/v1/support/bundles/${registered.bundle_id}/download`, {
      token: server.supportToken,
    });
    assert.equal(dl.status, 200);
    assert.ok(dl.bytes.equals(registered.bytes));
    server.clock.advance(30 * 24 * HOUR_MS);
    assert.equal(await collectExpiredUploads(server.deps), 0);
    assert.equal(await objectExists(server.dataDir, registered.object_key), true);
  });

  it('a PUT still streaming when its expired slot is collected leaves no orphan object', async () => {
    const slot = await newSlot(server, agent.api_key, 2 * MiB);
    const res = await putObject(slot.url, slot.bytes, {
      chunkBytes: 64 * 1024,
      pauseAfter: MiB,
      onPause: async () => {
        await waitFor(async () => (await partialFiles(server.dataDir)).length > 0, 'the PUT to open its partial file');
        server.clock.advance(PRESIGN_TTL_MS + 1000);
        assert.equal(await collectExpiredUploads(server.deps), 1);
      },
    });
    await waitFor(async () => (await partialFiles(server.dataDir)).length === 0, 'objects/.partial to be empty');
    const orphan =
      (await objectExists(server.dataDir, slot.object_key)) &&
      (await uploadState(server, slot.object_key)) === undefined;
    assert.equal(
      orphan,
      false,
      `the PUT answered ${res.status} ${res.text} and left an object with no upload record (never collected, never registrable)`,
    );
  });
});

// ---------------------------------------------------------------------------------------

describe('operations', () => {
  let server: TestServer;
  before(async () => {
    server = await startTestServer();
  });
  after(() => server.cleanup());

  it('master.key and guard.db are readable by the owner only (on PostgreSQL the data dir holds no database)', async () => {
    const names = ON_POSTGRES ? ['master.key'] : ['master.key', 'guard.db'];
    if (ON_POSTGRES) assert.deepEqual((await readdir(server.dataDir)).includes('guard.db'), false);
    for (const name of names) {
      const st = await stat(join(server.dataDir, name));
      assert.equal((st.mode & 0o777).toString(8), '600', `${name} has mode ${(st.mode & 0o777).toString(8)}`);
    }
  });

  it('/healthz and /readyz answer 200', async () => {
    const h = await api(server.url, 'GET', '/healthz');
    assert.equal(h.status, 200);
    assert.deepEqual(h.json, { status: 'ok' });
    const r = await api(server.url, 'GET', '/readyz');
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, {
      status: 'ready',
      checks: { database: { status: 'ok' }, object_store: { status: 'ok' } },
    });
  });

  it('/openapi.json lists every /v1 path with its methods', async () => {
    const res = await api(server.url, 'GET', '/openapi.json');
    assert.equal(res.status, 200, res.text);
    const paths = res.json.paths as Record<string, Record<string, unknown>>;
    const want: [string, string][] = [
      ['/v1/agents/enroll', 'post'],
      ['/v1/enrollment-tokens', 'post'],
      ['/v1/enrollment-tokens', 'get'],
      ['/v1/enrollment-tokens/{id}', 'delete'],
      ['/v1/support/bundle/upload-url', 'post'],
      ['/v1/support/bundle/register', 'post'],
      ['/v1/support/bundles', 'get'],
      ['/v1/support/bundles/{id}', 'get'],
      ['/v1/support/bundles/{id}/download', 'get'],
    ];
    for (const [path, method] of want) assert.ok(paths[path]?.[method], `${method.toUpperCase()} ${path} missing`);
    const objects = Object.keys(paths).find((p) => p.startsWith('/v1/objects/'));
    assert.ok(objects && paths[objects].put, 'the presigned PUT path is missing');
  });

  it('an unknown route is 404 with the error shape', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/unknown?x=1'],
      ['POST', '/v1/support/bundles'],
      ['PATCH', '/v1/enrollment-tokens'],
      ['GET', '/v1/objects/bundles/x'],
    ]) {
      const res = await api(server.url, method, path);
      assertError(res, 404, 'not_found');
      assert.ok(!res.json.error.message.includes('?'), 'the 404 message echoes the query string');
    }
  });

  it('secrets never appear in the log', async () => {
    const dataDir = await makeTempDir('log');
    const setup = await setupCli(dataDir);
    const spawned = await spawnServer(dataDir, await freePort(), ['--log-level', 'info']);
    try {
      const url = spawned.url;
      const created = await api(url, 'POST', '/v1/enrollment-tokens', {
        token: setup.admin_token,
        body: { max_uses: 5 },
      });
      assert.equal(created.status, 201);
      await api(url, 'GET', '/v1/enrollment-tokens', { token: setup.admin_token });
      const agent = await enrollAgent(url, setup.enroll_token);
      const agent2 = await enrollAgent(url, created.json.token);
      await api(url, 'POST', '/v1/agents/enroll', { body: { token: `get_${randomBytes(32).toString('base64url')}` } });
      const up = await uploadBundle(url, agent.api_key);
      const signature = new URL(up.url).searchParams.get('X-Guard-Signature') as string;
      // Refusals on the way: an Authorization header on the PUT, a bad signature, a malformed bearer.
      await putObject(up.url, up.bytes, { headers: { authorization: `Bearer ${agent2.api_key}` } });
      const slot = await presign(url, agent2.api_key, { size: 10, sha256: sha256Hex('0123456789') });
      const sig2 = new URL(slot.json.url).searchParams.get('X-Guard-Signature') as string;
      await putObject(withParam(slot.json.url, 'X-Guard-Size', '11'), Buffer.alloc(11));
      await putObject(slot.json.url, Buffer.from('0123456789'));
      await api(url, 'GET', '/v1/support/bundles', { headers: { authorization: `Bearer ${agent.api_key}!` } });
      await api(url, 'GET', `/nope?token=${setup.admin_token}`);
      for (const token of [setup.support_token as string, setup.admin_token]) {
        await api(url, 'GET', '/v1/support/bundles', { token });
        await api(url, 'GET', `/v1/support/bundles/${up.bundle_id}`, { token });
        await api(url, 'GET', `/v1/support/bundles/${up.bundle_id}/download`, { token });
      }
      // The last responses finish on the server (each request's completion is logged after it)
      // before it stops: shutdown with a keep-alive request in flight is covered in crash.test.ts.
      const lines = (msg: string) => spawned.output().split(`"msg":"${msg}"`).length - 1;
      await waitFor(
        () => lines('incoming request') > 0 && lines('request completed') === lines('incoming request'),
        'every request to be logged as completed',
      );
      spawned.child.kill('SIGTERM');
      if ((await Promise.race([spawned.exited, sleep(10_000).then(() => 'slow')])) === 'slow')
        await stopSpawned(spawned, 'SIGKILL');
      const log = spawned.output();
      assert.match(log, /"msg":"bundle registered"/, 'the log has no request lines: is logging on?');
      const secrets: Record<string, string> = {
        'agent key': agent.api_key,
        'second agent key': agent2.api_key,
        'admin token': setup.admin_token,
        'support token': setup.support_token as string,
        'setup enrolment token': setup.enroll_token,
        'created enrolment token': created.json.token,
        'admin password': setup.admin_password,
        'presigned URL signature': signature,
        'second presigned URL signature': sig2,
      };
      for (const [what, secret] of Object.entries(secrets))
        assert.ok(!log.includes(secret), `the log contains the ${what}`);
      assert.ok(!/X-Guard-Signature/i.test(log), 'the log contains a presigned query string');
    } finally {
      await stopSpawned(spawned, 'SIGKILL');
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
