// Moving an embedded deployment (docs/deploy.md): bin/guard-server export writes a data dir's
// rows, objects and master key as one archive; bin/guard-server import reads it into an empty
// target — here a new data dir with an S3 store (the local S3 of s3-harness.ts) — and the
// server started on the target serves the same data: the same tokens and agent keys work,
// the endpoint's secret and custom header are still decryptable (a test event is signed with
// the secret shown at creation), deliveries and their attempts are there, and every bundle
// downloads byte-identical.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { openDatabase } from '../src/db/index.ts';
import { TABLES } from '../src/transfer/index.ts';
import {
  api,
  freePort,
  type Loose,
  makeTempDir,
  SERVER_BIN,
  spawnServer,
  stopSpawned,
  type Uploaded,
  uploadBundle,
  waitFor,
} from './harness.ts';
import { type LocalS3, startLocalS3, TEST_CREDENTIALS, useTestCredentials } from './s3-harness.ts';
import { testCluster } from './test-database.ts';
import {
  type CreatedEndpoint,
  createEndpoint,
  createSignal,
  independentlyVerified,
  listDeliveries,
  makeTestTls,
  newTenant,
  Receiver,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
} from './webhook-harness.ts';

const execFileP = promisify(execFile);

/** bin/guard-server in a child process; resolves with its exit code and stderr. */
async function cli(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return execFileP(SERVER_BIN, args, { env: { ...process.env, ...env } }).then(
    (r) => ({ code: 0, stderr: r.stderr }),
    (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
  );
}

const S3_ENV = {
  AWS_ACCESS_KEY_ID: TEST_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: TEST_CREDENTIALS.secretAccessKey,
};

async function tableCounts(db: Awaited<ReturnType<typeof openDatabase>>): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of TABLES) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    counts[table] = Number(row.n);
  }
  return counts;
}

describe('export an embedded deployment, import it onto SQLite or PostgreSQL with an S3 store', () => {
  let root: string;
  let tls: TestTls;
  let receiver: Receiver;
  let s3: LocalS3;
  let source: WebhookServer;
  let target: WebhookServer | undefined;
  let tenant: Tenant;
  let endpoint: CreatedEndpoint;
  let bundles: Uploaded[];
  let sourceCounts: Record<string, number>;
  const archive = () => join(root, 'guard-export.tar');

  /** What a deployment imported from the source must serve (the source is stopped by then). */
  async function assertServesTheSameData(target: WebhookServer): Promise<void> {
    const eps = await api(target.url, 'GET', '/v1/webhooks/endpoints', { token: tenant.adminToken });
    assert.equal(eps.status, 200, eps.text);
    assert.deepEqual(
      eps.json.endpoints.map((e: Loose) => [e.id, e.name, e.url]),
      [[endpoint.id, 'siem', endpoint.url]],
    );
    const deliveries = await listDeliveries(target, tenant.adminToken, endpoint.id);
    assert.equal(deliveries.length, 1);
    assert.equal(deliveries[0].state, 'succeeded');

    const list = await api(target.url, 'GET', '/v1/support/bundles', { token: tenant.adminToken });
    assert.equal(list.status, 200, list.text);
    assert.deepEqual(list.json.bundles.map((b: Loose) => b.bundle_id).sort(), bundles.map((b) => b.bundle_id).sort());
    for (const b of bundles) {
      const dl = await api(target.url, 'GET', `/v1/support/bundles/${b.bundle_id}/download`, {
        token: tenant.adminToken,
      });
      assert.equal(dl.status, 302, dl.text);
      const file = await fetch(dl.headers.get('location') ?? '');
      assert.ok(Buffer.from(await file.arrayBuffer()).equals(b.bytes), `bundle ${b.bundle_id} differs`);
    }
    // The agent's key still works: a new bundle goes to the S3 store.
    const fresh = await uploadBundle(target.url, tenant.agentKey, { size: 5000 });
    assert.deepEqual(await target.deps.store.verify(fresh.object_key), { size: 5000, sha256: fresh.sha256 });
  }

  /** A test event from `target` verifies with the secret shown when the endpoint was created. */
  async function assertSecretsDecryptable(target: WebhookServer): Promise<void> {
    const before = receiver.hits.length;
    const r = await api(target.url, 'POST', `/v1/webhooks/endpoints/${endpoint.id}/test`, {
      token: tenant.adminToken,
    });
    assert.ok(r.status === 200 || r.status === 201 || r.status === 202, r.text);
    await waitFor(() => receiver.hits.length > before, 'the test event');
    const hit = receiver.hits[receiver.hits.length - 1];
    assert.ok(independentlyVerified(hit.body, hit.headers['guard-signature'] as string, endpoint.secret));
    assert.equal(hit.headers['x-siem-token'], 'custom-header-value');
  }

  before(async () => {
    root = await makeTempDir('transfer');
    tls = await makeTestTls();
    receiver = await Receiver.start(tls);
    useTestCredentials();
    s3 = await startLocalS3();
    source = await startWebhookServer({ caPem: tls.caPem, dataDir: join(root, 'source'), flags: { database: '' } });
    tenant = await newTenant(source);
    const port = (receiver.server.address() as { port: number }).port;
    endpoint = await createEndpoint(source, tenant.adminToken, {
      name: 'siem',
      url: `https://localhost:${port}/hook`,
      headers: { 'X-Siem-Token': 'custom-header-value' },
    });
    await createSignal(source, tenant.agentKey);
    await waitFor(() => receiver.hits.length === 1, 'the delivery before the move');
    await waitFor(
      async () => (await listDeliveries(source, tenant.adminToken, endpoint.id))[0]?.state === 'succeeded',
      'the delivery to be recorded as succeeded',
    );
    bundles = [
      await uploadBundle(source.url, tenant.agentKey, { size: 300_000, filename: 'a.tar.zst' }),
      await uploadBundle(source.url, tenant.agentKey, { size: 1, filename: 'b.tar.zst' }),
    ];
    await api(source.url, 'GET', '/v1/support/bundles', { token: tenant.adminToken }); // an audit row
    sourceCounts = await tableCounts(source.deps.db);
    await source.close();
  });
  after(async () => {
    await target?.close();
    await receiver?.close();
    await s3?.close();
    await rm(root, { recursive: true, force: true });
  });

  it('export writes one archive, 0600, while the server is stopped', async () => {
    const r = await cli(['export', '--data-dir', join(root, 'source'), '--out', archive()]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /exported 2 object\(s\), 300001 bytes; rows: tenants 1, users 2, mfa_recovery_codes 0, webauthn_credentials 0, sso_connections 0, sso_domains 0, scim_tokens 0, scim_groups 0, scim_group_members 0, api_tokens 2, sessions 0, password_links 0, enrollment_tokens 1, agents 1, uploads 2, bundles 2/,
    );
    assert.equal((await stat(archive())).mode & 0o777, 0o600);
    const again = await cli(['export', '--data-dir', join(root, 'source'), '--out', archive()]);
    assert.equal(again.code, 1, 'an existing archive was overwritten');
  });

  it('export refuses while a guard-server serves the data dir', async () => {
    const port = await freePort();
    const serving = await spawnServer(join(root, 'source'), port, ['--database=']);
    try {
      const r = await cli(['export', '--data-dir', join(root, 'source'), '--out', join(root, 'busy.tar')]);
      assert.equal(r.code, 1);
      assert.match(r.stderr, /in use by another guard-server/);
    } finally {
      await stopSpawned(serving);
    }
  });

  it('import fills an empty target; the master key moves with the data', async () => {
    const r = await cli(
      ['import', '--data-dir', join(root, 'target'), '--object-store', s3.objectStoreUrl, '--in', archive()],
      S3_ENV,
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /imported 2 object\(s\), 300001 bytes/);
    assert.equal(
      await readFile(join(root, 'target', 'master.key'), 'utf8'),
      await readFile(join(root, 'source', 'master.key'), 'utf8'),
    );
    assert.equal((await stat(join(root, 'target', 'master.key'))).mode & 0o777, 0o600);
    const db = await openDatabase({ dataDir: join(root, 'target') });
    try {
      assert.deepEqual(await tableCounts(db), sourceCounts);
    } finally {
      await db.destroy();
    }
  });

  it('the imported deployment serves the same data: tokens, agent keys, endpoints, deliveries, bundles', async () => {
    target = await startWebhookServer({
      caPem: tls.caPem,
      dataDir: join(root, 'target'),
      flags: { database: '', 'object-store': s3.objectStoreUrl }, // the imported SQLite, in any run
    });
    await assertServesTheSameData(target);
  });

  it("the endpoint's secret and custom header are still decryptable: a test event verifies with the secret shown at creation", async () => {
    assert.ok(target);
    await assertSecretsDecryptable(target);
  });

  it('import into PostgreSQL and another S3 bucket: the server on them serves the same data', async () => {
    const cluster = await testCluster();
    const url = await cluster.createDatabase('guard_import');
    const bucket = await startLocalS3();
    const dir = join(root, 'pg-target');
    let pgTarget: WebhookServer | undefined;
    try {
      const r = await cli(
        ['import', '--data-dir', dir, '--database', url, '--object-store', bucket.objectStoreUrl, '--in', archive()],
        S3_ENV,
      );
      assert.equal(r.code, 0, r.stderr);
      pgTarget = await startWebhookServer({
        caPem: tls.caPem,
        dataDir: dir,
        flags: { database: url, 'object-store': bucket.objectStoreUrl },
      });
      assert.deepEqual(await tableCounts(pgTarget.deps.db), { ...sourceCounts });
      await assertServesTheSameData(pgTarget);
      await assertSecretsDecryptable(pgTarget);
      const again = await cli(
        ['import', '--data-dir', join(root, 'pg-again'), '--database', url, '--in', archive()],
        S3_ENV,
      );
      assert.equal(again.code, 1);
      assert.match(again.stderr, /already has tenants/);
    } finally {
      await pgTarget?.close();
      await bucket.close();
      await cluster.dropDatabase(url).catch(() => {});
    }
  });

  it('import refuses a target that is not empty, and a data dir with another master key', async () => {
    const busy = await cli(
      ['import', '--data-dir', join(root, 'target'), '--object-store', s3.objectStoreUrl, '--in', archive()],
      S3_ENV,
    );
    assert.equal(busy.code, 1);
    // The target holds the imported key: it is the other key that is refused first, or the rows.
    assert.match(busy.stderr, /in use by another guard-server|already has tenants/);
    const otherKeyDir = join(root, 'other-key');
    await mkdir(otherKeyDir);
    await writeFile(join(otherKeyDir, 'master.key'), `${randomBytes(32).toString('base64')}\n`, { mode: 0o600 });
    const otherKey = await cli(['import', '--data-dir', otherKeyDir, '--in', archive()]);
    assert.equal(otherKey.code, 1);
    assert.match(otherKey.stderr, /another master key than the exported one/);
    const db = await openDatabase({ dataDir: otherKeyDir });
    try {
      assert.equal((await tableCounts(db)).tenants, 0, 'rows were written before the key was refused');
    } finally {
      await db.destroy();
    }
  });

  it('a SQLite-to-SQLite import on the embedded store serves the bundles byte for byte too', async () => {
    const dir = join(root, 'embedded-target');
    const r = await cli(['import', '--data-dir', dir, '--in', archive()]);
    assert.equal(r.code, 0, r.stderr);
    const port = await freePort();
    const served = await spawnServer(dir, port, ['--database=']); // the imported SQLite, in any run
    try {
      for (const b of bundles) {
        const dl = await api(served.url, 'GET', `/v1/support/bundles/${b.bundle_id}/download`, {
          token: tenant.adminToken,
        });
        assert.equal(dl.status, 200, dl.text);
        assert.ok(dl.bytes.equals(b.bytes));
      }
    } finally {
      await stopSpawned(served);
    }
    await writeFile(join(root, 'not-an-archive'), 'hello');
    const bad = await cli(['import', '--data-dir', join(root, 'bad-target'), '--in', join(root, 'not-an-archive')]);
    assert.equal(bad.code, 1);
  });
});
