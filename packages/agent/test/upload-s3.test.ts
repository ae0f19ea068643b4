// `guard-agent support-bundle upload` end to end against guard-server configured with an S3
// store (issue 11): the real bin/guard-agent presigns at the real server, PUTs the bundle to a
// local S3 (s3rver behind a gate that verifies every presigned request with an independent
// SigV4 check and S3's body rules: packages/server/test/s3-harness.ts) and registers it; the
// server verifies the object with HeadObject before it records the bundle. The PUT is held to
// DESIGN §4: the presign response's headers verbatim, an exact Content-Length, no
// Authorization header, no chunked body.

import assert from 'node:assert/strict';
import { readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type LocalS3, startLocalS3, useTestCredentials } from '../../server/test/s3-harness.ts';
import { collectArgs, describeRun, type Home, makeHome, sha256File, slogLine, TempDirs } from './harness.ts';
import { enrollArgs, type GuardServer, type Loose, runAgent, startGuardServer, uploadArgs } from './upload-harness.ts';

const dirs = new TempDirs();
let root: string;
let s3: LocalS3;
let gs: GuardServer;

before(async () => {
  root = await dirs.make('upload-s3');
  useTestCredentials(); // the in-process server's S3 client reads the SDK's env chain
  s3 = await startLocalS3();
  gs = await startGuardServer(join(root, 'data'), { objectStore: s3.objectStoreUrl });
});
after(async () => {
  await gs?.close();
  await s3?.close();
  await dirs.cleanup();
});

describe('upload end to end with the S3 object store (real agent, real guard-server, local S3)', () => {
  let home: Home;
  let bundle: string;

  before(async () => {
    home = await makeHome(join(root, 'agent'), {
      log: `${slogLine('INFO', 'started', 'api_key=S3_TEST_SECRET host=web-01')}\n`.repeat(2000),
    });
    const tokenFile = join(home.root, 'token');
    await writeFile(tokenFile, `${gs.setup.enroll_token}\n`);
    const e = await runAgent(enrollArgs(home, gs.url, tokenFile));
    assert.equal(e.code, 0, describeRun(e));
    bundle = join(home.root, 'out', 'bundle.tar.zst');
    const c = await runAgent(collectArgs(home, bundle));
    assert.equal(c.code, 0, describeRun(c));
  });

  it('the bundle goes to the bucket through a verified presigned PUT and downloads byte for byte', async () => {
    const serverRequests = gs.requests.length;
    const s3Requests = s3.log.length;
    const r = await runAgent(uploadArgs(home, bundle));
    assert.equal(r.code, 0, describeRun(r));
    const out = /^bundle_id=(\S+)\nobject_key=(\S+)\nuploaded_at=(\S+)\n$/.exec(r.stdout);
    assert.ok(out, describeRun(r));
    const [, bundleId, objectKey] = out;

    // guard-server saw presign and register only: the bytes went to S3.
    assert.deepEqual(gs.requests.slice(serverRequests), [
      'POST /v1/support/bundle/upload-url',
      'POST /v1/support/bundle/register',
    ]);
    const size = (await stat(bundle)).size;
    const sha = await sha256File(bundle);
    const puts = s3.log.slice(s3Requests).filter((x) => x.method === 'PUT');
    assert.equal(puts.length, 1, JSON.stringify(puts));
    const [put] = puts;
    assert.equal(put.auth, 'presigned');
    assert.equal(put.refused, undefined, `the gate refused the agent's PUT: ${put.refused}`);
    assert.equal(put.status, 200);
    assert.ok(put.url.startsWith(`/${s3.bucket}/${objectKey}?`), put.url);
    assert.equal(put.headers.authorization, undefined, 'the agent sent an Authorization header to S3');
    assert.equal(put.headers['transfer-encoding'], undefined, 'the agent sent a chunked body');
    assert.equal(put.headers['content-length'], String(size));
    assert.equal(put.headers['x-amz-checksum-sha256'], Buffer.from(sha, 'hex').toString('base64'));
    // Register verified the object in the bucket before recording it.
    assert.ok(
      s3.log.slice(s3Requests).some((x) => x.method === 'HEAD' && x.url.includes(objectKey) && x.auth === 'header'),
      'no HeadObject before register answered',
    );

    const dl = await fetch(`${gs.url}/v1/support/bundles/${bundleId}/download`, {
      headers: { authorization: `Bearer ${gs.setup.support_token}` },
      redirect: 'manual',
    });
    assert.equal(dl.status, 302);
    const file = await fetch(dl.headers.get('location') ?? '');
    assert.equal(file.status, 200);
    assert.ok(Buffer.from(await file.arrayBuffer()).equals(await readFile(bundle)), 'downloaded bytes differ');
    const list = await fetch(`${gs.url}/v1/support/bundles`, {
      headers: { authorization: `Bearer ${gs.setup.support_token}` },
    });
    const listed = ((await list.json()) as Loose).bundles.find((b: Loose) => b.bundle_id === bundleId);
    assert.equal(listed.sha256, sha);
  });
});
