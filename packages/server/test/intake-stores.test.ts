// The bundle intake flows end to end, once per object store: the embedded store (guard-server
// receives the PUT) and an S3 store (the PUT goes to a local S3 whose gate verifies every
// presigned URL, s3-harness.ts). What a client sees is the same on both — the wire contract
// of DESIGN §4 — except the status of a refused PUT (ours: JSON 4xx; S3: XML 4xx) and the
// download (ours: the bytes; S3: a redirect to a presigned GET, followed here).
// Store-specific behaviour (partial files, the data dir, the gate's logs) stays in
// intake.test.ts and s3-presign.test.ts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { collectExpiredUploads } from '../src/objects/index.ts';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  type Loose,
  PRESIGN_TTL_MS,
  presign,
  putObject,
  register,
  type StoreKind,
  setupTenant,
  sha256Hex,
  startTestServer,
  type TestServer,
  uploadBundle,
  validManifest,
} from './harness.ts';

const HOUR_MS = 60 * 60 * 1000;

interface Slot {
  bytes: Buffer;
  sha256: string;
  url: string;
  object_key: string;
  headers: Record<string, string>;
}

async function newSlot(server: TestServer, apiKey: string, size = 64 * 1024): Promise<Slot> {
  const bytes = randomBytes(size);
  const sha256 = sha256Hex(bytes);
  const res = await presign(server.url, apiKey, { size, sha256 });
  assert.equal(res.status, 200, res.text);
  return { bytes, sha256, ...res.json };
}

/** A refused PUT: a 4xx, whichever store answered it. */
function assertRefused(res: { status: number | undefined; text: string }, what: string): void {
  assert.ok(res.status !== undefined && res.status >= 400 && res.status < 500, `${what}: ${res.status} ${res.text}`);
}

/** Nothing of a refused PUT remains: the store has no object, register says object_missing. */
async function assertNothingKept(server: TestServer, apiKey: string, slot: Slot): Promise<void> {
  assert.equal(await server.deps.store.verify(slot.object_key), undefined, 'an object was kept');
  const reg = await register(server.url, apiKey, {
    object_key: slot.object_key,
    sha256: slot.sha256,
    size: slot.bytes.length,
  });
  assert.equal(reg.status, 409, reg.text);
  assert.equal(reg.json.error.code, 'object_missing');
}

/** GET the download; an S3 store's redirect is followed (without the API token, as a browser would). */
async function download(server: TestServer, bundleId: string, token: string | undefined) {
  const first = await api(server.url, 'GET', `/v1/support/bundles/${bundleId}/download`, { token });
  if (first.status !== 302) return { first, final: first };
  const location = first.headers.get('location') ?? '';
  const res = await fetch(location);
  const bytes = Buffer.from(await res.arrayBuffer());
  return { first, final: { status: res.status, headers: res.headers, bytes } };
}

for (const kind of ['fs', 's3'] as StoreKind[]) {
  describe(`intake flows on the ${kind === 'fs' ? 'embedded' : 'S3'} object store`, () => {
    let server: TestServer;
    let tenant: Awaited<ReturnType<typeof setupTenant>>;
    let agent: EnrolledAgent;
    before(async () => {
      server = await startTestServer({ store: kind });
      tenant = await setupTenant(server);
      agent = await enrollAgent(server.url, tenant.enroll_token, { hostname: 'web-7.example' });
    });
    after(() => server.cleanup());

    it('presign → PUT with the given headers → register; listed, shown and downloaded byte for byte', async () => {
      const bytes = randomBytes(300 * 1024 + 7);
      const sha256 = sha256Hex(bytes);
      const p = await presign(server.url, agent.api_key, { filename: 'host 1.tar.zst', size: bytes.length, sha256 });
      assert.equal(p.status, 200, p.text);
      assert.equal(p.json.expires_at, new Date(server.clock.ms + PRESIGN_TTL_MS).toISOString());
      if (kind === 's3') {
        assert.ok(p.json.url.startsWith(`${server.s3?.endpoint}/`), p.json.url);
        assert.equal(p.json.headers['x-amz-checksum-sha256'], Buffer.from(sha256, 'hex').toString('base64'));
      } else assert.ok(p.json.url.startsWith(`${server.url}/v1/objects/`), p.json.url);

      const put = await putObject(p.json.url, bytes, { headers: p.json.headers });
      assert.equal(put.status, 200, put.text);
      assert.deepEqual(await server.deps.store.verify(p.json.object_key), { size: bytes.length, sha256 });

      const manifest = validManifest();
      const reg = await register(server.url, agent.api_key, {
        object_key: p.json.object_key,
        sha256,
        size: bytes.length,
        manifest,
      });
      assert.equal(reg.status, 201, reg.text);
      const show = await api(server.url, 'GET', `/v1/support/bundles/${reg.json.bundle_id}`, {
        token: tenant.admin_token,
      });
      assert.equal(show.status, 200, show.text);
      assert.equal(show.json.sha256, sha256);
      assert.deepEqual(show.json.manifest, manifest);
      const list = await api(server.url, 'GET', '/v1/support/bundles', { token: server.supportToken });
      assert.ok(list.json.bundles.some((b: Loose) => b.bundle_id === reg.json.bundle_id));

      const { first, final } = await download(server, reg.json.bundle_id, server.supportToken);
      assert.equal(first.status, kind === 's3' ? 302 : 200);
      assert.equal(first.headers.get('x-content-sha256'), sha256);
      assert.equal(final.status, 200);
      assert.ok(final.bytes.equals(bytes), 'downloaded bytes differ from the uploaded ones');
      assert.equal(final.headers.get('content-type'), 'application/zstd');
      assert.equal(final.headers.get('content-disposition'), 'attachment; filename="host_1.tar.zst"');
    });

    it('registering twice answers 200 with the first record', async () => {
      const slot = await newSlot(server, agent.api_key);
      assert.equal((await putObject(slot.url, slot.bytes, { headers: slot.headers })).status, 200);
      const body = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
      const first = await register(server.url, agent.api_key, body);
      assert.equal(first.status, 201, first.text);
      server.clock.advance(5000);
      const second = await register(server.url, agent.api_key, body);
      assert.equal(second.status, 200, second.text);
      assert.deepEqual(second.json, first.json);
    });

    it('registering before the PUT is refused with object_missing', async () => {
      const slot = await newSlot(server, agent.api_key);
      await assertNothingKept(server, agent.api_key, slot);
    });

    it('a PUT after the URL expired is refused and nothing is kept', async () => {
      const slot = await newSlot(server, agent.api_key);
      server.clock.advance(PRESIGN_TTL_MS + 1000);
      assertRefused(await putObject(slot.url, slot.bytes, { headers: slot.headers }), 'expired PUT');
      await assertNothingKept(server, agent.api_key, slot);
    });

    it('a PUT just before the URL expires is accepted', async () => {
      const slot = await newSlot(server, agent.api_key);
      server.clock.advance(PRESIGN_TTL_MS - 1000);
      assert.equal((await putObject(slot.url, slot.bytes, { headers: slot.headers })).status, 200);
    });

    it('a tampered URL (other object key) is refused and nothing is kept', async () => {
      const slot = await newSlot(server, agent.api_key);
      const other = await newSlot(server, agent.api_key);
      const tampered = slot.url.replace(slot.object_key, other.object_key);
      assert.notEqual(tampered, slot.url);
      assertRefused(await putObject(tampered, slot.bytes, { headers: slot.headers }), 'tampered PUT');
      await assertNothingKept(server, agent.api_key, other);
    });

    it('a Content-Length other than the presigned size is refused and nothing is kept', async () => {
      const slot = await newSlot(server, agent.api_key);
      const shorter = slot.bytes.subarray(0, slot.bytes.length - 1);
      assertRefused(await putObject(slot.url, shorter, { headers: slot.headers }), 'short PUT');
      await assertNothingKept(server, agent.api_key, slot);
    });

    it('a body whose SHA-256 differs from the presign is refused and nothing is kept', async () => {
      const slot = await newSlot(server, agent.api_key);
      const other = randomBytes(slot.bytes.length);
      assertRefused(await putObject(slot.url, other, { headers: slot.headers }), 'other body');
      await assertNothingKept(server, agent.api_key, slot);
    });

    it('a chunked body without Content-Length is refused and nothing is kept', async () => {
      const slot = await newSlot(server, agent.api_key);
      const res = await putObject(slot.url, slot.bytes, { headers: slot.headers, contentLength: null });
      assert.ok(res.status === 411 || res.status === 501 || res.status === 403, `${res.status} ${res.text}`);
      await assertNothingKept(server, agent.api_key, slot);
    });

    it('a PUT with an Authorization header is refused', async () => {
      const slot = await newSlot(server, agent.api_key);
      const res = await putObject(slot.url, slot.bytes, {
        headers: { ...slot.headers, authorization: `Bearer ${agent.api_key}` },
      });
      assertRefused(res, 'PUT with Authorization');
      await assertNothingKept(server, agent.api_key, slot);
    });

    it("another agent cannot register an agent's object, another tenant does not see it", async () => {
      const slot = await newSlot(server, agent.api_key);
      assert.equal((await putObject(slot.url, slot.bytes, { headers: slot.headers })).status, 200);
      const body = { object_key: slot.object_key, sha256: slot.sha256, size: slot.bytes.length };
      const sibling = await enrollAgent(server.url, tenant.enroll_token);
      const mismatch = await register(server.url, sibling.api_key, body);
      assert.equal(mismatch.status, 403, mismatch.text);
      const other = await setupTenant(server);
      const stranger = await enrollAgent(server.url, other.enroll_token);
      assert.equal((await register(server.url, stranger.api_key, body)).status, 404);
    });

    it('an unregistered upload is collected after its URL expired and the grace hour; a registered one stays', async () => {
      const stored = await newSlot(server, agent.api_key);
      assert.equal((await putObject(stored.url, stored.bytes, { headers: stored.headers })).status, 200);
      const kept = await uploadBundle(server.url, agent.api_key);
      server.clock.advance(PRESIGN_TTL_MS + HOUR_MS + 1000);
      assert.ok((await collectExpiredUploads(server.deps)) >= 1);
      assert.equal(await server.deps.store.verify(stored.object_key), undefined, 'the unregistered object remains');
      assert.deepEqual(await server.deps.store.verify(kept.object_key), {
        size: kept.bytes.length,
        sha256: kept.sha256,
      });
    });

    it('/readyz is ready, naming the database and the object store', async () => {
      const r = await api(server.url, 'GET', '/readyz');
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json.checks, { database: { status: 'ok' }, object_store: { status: 'ok' } });
    });
  });
}
