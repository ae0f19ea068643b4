// Integration tests of `guard-agent support-bundle upload` (spec 1.3, 1.7, 2.3, 4.1, 4.2, 5,
// 7.1; DESIGN §3 contract — upload output, §4). The real bin/guard-agent runs in a child
// process against the real guard-server on loopback (in-process, real SQLite and object
// files), or against stand-in services of our own whose answers each test scripts.

import assert from 'node:assert/strict';
import { chmod, copyFile, mkdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { zstdCompressSync } from 'node:zlib';
import { stringify as toYaml } from 'yaml';
import { MAX_ATTEMPTS } from '../src/http/retry-policy.ts';
import {
  AGENT_VERSION,
  collectArgs,
  describeRun,
  exists,
  type Home,
  makeHome,
  type RunResult,
  refusedUrl,
  sha256File,
  slogLine,
  TempDirs,
} from './harness.ts';
import {
  type AgentRunOptions,
  apiGet,
  enrollArgs,
  fakeEnrollment,
  type GuardServer,
  type Loose,
  pack,
  proxyEnv,
  type Recorded,
  runAgent,
  type StandInOptions,
  selfSignedCert,
  startAgent,
  startAgentUnderShell,
  startGuardServer,
  startProxy,
  startStandIn,
  unpack,
  uploadArgs,
  writeEnrollmentFile,
  writeRandomLog,
} from './upload-harness.ts';

const dirs = new TempDirs();
let root: string;
let gs: GuardServer;
let counter = 0;

before(async () => {
  root = await dirs.make('upload');
  gs = await startGuardServer(join(root, 'data'));
});
after(async () => {
  await gs?.close();
  await dirs.cleanup();
});

const OUTPUT = /^bundle_id=(\S+)\nobject_key=(\S+)\nuploaded_at=(\S+)\n$/;

/** `text` as a literal inside a RegExp. */
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** A fresh agent home with a small log holding one secret. */
async function newHome(label: string, log?: string): Promise<Home> {
  const home = await makeHome(join(root, `${label}-${++counter}`), {
    log: log ?? `${slogLine('INFO', 'started', 'api_key=UPLOAD_TEST_SECRET host=web-01')}\n`,
    config: { environment: 'staging' },
  });
  return home;
}

/** enroll (CLI) against the real server with the setup's enrolment token. */
async function enrolled(label: string, log?: string): Promise<Home> {
  const home = await newHome(label, log);
  const tokenFile = join(home.root, 'token');
  await writeFile(tokenFile, `${gs.setup.enroll_token}\n`);
  const r = await runAgent(enrollArgs(home, gs.url, tokenFile));
  assert.equal(r.code, 0, describeRun(r));
  return home;
}

/** collect (CLI) into `<home>/out/<name>`; returns the bundle path. */
async function collect(home: Home, name = 'bundle.tar.zst'): Promise<string> {
  const out = join(home.root, 'out', name);
  const r = await runAgent(collectArgs(home, out));
  assert.equal(r.code, 0, describeRun(r));
  assert.equal(r.stdout, `${out}\n`);
  return out;
}

function parseOutput(r: RunResult): { bundle_id: string; object_key: string; uploaded_at: string } {
  const m = OUTPUT.exec(r.stdout);
  assert.ok(m, `stdout is not exactly the three lines:\n${describeRun(r)}`);
  return { bundle_id: m[1], object_key: m[2], uploaded_at: m[3] };
}

// ---------------------------------------------------------------------------------------
// End to end with the real service

describe('upload end to end (real guard-server)', () => {
  let home: Home;
  let bundle: string;
  let fileSha: string;
  let first: { bundle_id: string; object_key: string; uploaded_at: string };

  before(async () => {
    home = await enrolled('e2e');
    bundle = await collect(home);
    fileSha = await sha256File(bundle);
  });

  it('enroll wrote enrollment.json (0600) with the contract fields and printed no key', async () => {
    const path = join(home.stateDir, 'enrollment.json');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const doc = JSON.parse(await readFile(path, 'utf8')) as Loose;
    assert.deepEqual(Object.keys(doc).sort(), ['agent_id', 'api_key', 'base_url', 'enrolled_at', 'tenant_id']);
    assert.equal(doc.base_url, gs.url);
    assert.equal(doc.tenant_id, gs.setup.tenant_id);
    assert.match(doc.api_key, /^gak_/);
    assert.match(doc.agent_id, /^ag_/);
    assert.match(doc.enrolled_at, RFC3339);
  });

  it('uploads: exactly three stdout lines, the bundle is listed for support and downloads byte for byte', async () => {
    const before = gs.requests.length;
    const r = await runAgent(uploadArgs(home, bundle));
    assert.equal(r.code, 0, describeRun(r));
    first = parseOutput(r);
    assert.match(first.bundle_id, /^bdl_/);
    assert.match(first.object_key, new RegExp(`^bundles/${gs.setup.tenant_id}/`));
    assert.match(first.uploaded_at, RFC3339);
    // The three calls, in order (spec 4.1 upload rule 3).
    const calls = gs.requests.slice(before).map((l) => l.replace(/^PUT \/v1\/objects\/.*$/, 'PUT /v1/objects/…'));
    assert.deepEqual(calls, [
      'POST /v1/support/bundle/upload-url',
      'PUT /v1/objects/…',
      'POST /v1/support/bundle/register',
    ]);

    const list = await apiGet(`${gs.url}/v1/support/bundles`, gs.setup.support_token as string);
    assert.equal(list.status, 200);
    const listed = ((await list.json()) as Loose).bundles.find((b: Loose) => b.bundle_id === first.bundle_id);
    assert.ok(listed, 'the bundle is not listed for support');
    assert.equal(listed.sha256, fileSha);
    assert.equal(listed.size, (await stat(bundle)).size);
    assert.equal(listed.tenant_id, gs.setup.tenant_id);
    assert.equal(listed.filename, 'bundle.tar.zst');
    assert.equal(listed.trigger, 'cli');
    assert.equal(listed.uploaded_at, first.uploaded_at);

    const dl = await apiGet(
      `${gs.url}/v1/support/bundles/${first.bundle_id}/download`,
      gs.setup.support_token as string,
    );
    assert.equal(dl.status, 200);
    const bytes = Buffer.from(await dl.arrayBuffer());
    assert.ok(bytes.equals(await readFile(bundle)), 'downloaded bytes differ from the local file');
    assert.equal(await sha256File(bundle), fileSha, 'the local file changed');
  });

  it('re-uploading the same file creates a new bundle with a new object, and succeeds', async () => {
    const r = await runAgent(uploadArgs(home, bundle));
    assert.equal(r.code, 0, describeRun(r));
    const second = parseOutput(r);
    assert.notEqual(second.bundle_id, first.bundle_id);
    assert.notEqual(second.object_key, first.object_key);
    const list = (await (
      await apiGet(`${gs.url}/v1/support/bundles`, gs.setup.support_token as string)
    ).json()) as Loose;
    const ids = list.bundles.map((b: Loose) => b.bundle_id);
    assert.ok(ids.includes(first.bundle_id) && ids.includes(second.bundle_id));
    assert.equal(await sha256File(bundle), fileSha);
  });

  it('a relative bundle path resolves against the working directory', async () => {
    const r = await runAgent(uploadArgs(home, 'out/bundle.tar.zst'), { cwd: home.root });
    assert.equal(r.code, 0, describeRun(r));
    parseOutput(r);
  });
});

// ---------------------------------------------------------------------------------------
// Checks made before any network call

describe('refused before any request reaches the service', () => {
  let home: Home;
  let good: string;
  let work: string;

  before(async () => {
    home = await enrolled('pre');
    good = await collect(home);
    work = join(home.root, 'bad');
    await mkdir(work, { recursive: true });
  });

  /** Runs upload of `file`, expects exit 1 with `message` and no request at the server. */
  async function refused(
    file: string,
    message: RegExp,
    target: Home = home,
    options: AgentRunOptions = {},
  ): Promise<RunResult> {
    const requests = gs.requests.length;
    const uploads = await gs.uploadCount();
    const shaBefore = (await exists(file)) && (await stat(file)).isFile() ? await sha256File(file) : undefined;
    const r = await runAgent(uploadArgs(target, file), options);
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, message, describeRun(r));
    assert.deepEqual(gs.requests.slice(requests), [], 'a request reached the server');
    assert.equal(await gs.uploadCount(), uploads, 'an upload was presigned');
    if (shaBefore) assert.equal(await sha256File(file), shaBefore, 'the local file was modified');
    return r;
  }

  /** A copy of the good bundle, re-packed after `edit` changed its unpacked members. */
  async function repacked(name: string, edit: (dir: string) => Promise<string[] | undefined>): Promise<string> {
    const dir = await unpack(good, work);
    const names = await edit(dir);
    const out = join(work, name);
    await pack(dir, out, names);
    return out;
  }

  it('a missing file', async () => {
    await refused(join(work, 'nope.tar.zst'), /bundle file .*nope\.tar\.zst does not exist/);
  });

  it('a directory', async () => {
    await refused(work, /is not a regular file/);
  });

  it('an empty file', async () => {
    const f = join(work, 'empty.tar.zst');
    await writeFile(f, '');
    await refused(f, /is empty/);
  });

  it('an unreadable file (run as an unprivileged user: root reads files whatever their mode)', async () => {
    // An agent home of its own: its config and enrolment, a bundle its user may not read.
    const other = await newHome('unreadable');
    await writeEnrollmentFile(other, fakeEnrollment(gs.url));
    const f = join(other.root, 'unreadable.tar.zst');
    await copyFile(good, f);
    await chmod(f, 0o000);
    await refused(f, /^guard-agent: bundle file .*unreadable\.tar\.zst cannot be read: permission denied$/m, other, {
      unprivileged: true,
    });
  });

  it('a truncated bundle', async () => {
    const f = join(work, 'truncated.tar.zst');
    await copyFile(good, f);
    await truncate(f, Math.floor((await stat(f)).size / 2));
    await refused(f, /is not a readable bundle/);
  });

  it('a corrupt bundle (bytes flipped in the middle)', async () => {
    const f = join(work, 'corrupt.tar.zst');
    const bytes = await readFile(good);
    for (let i = Math.floor(bytes.length / 3); i < Math.floor(bytes.length / 3) + 64; i++) bytes[i] ^= 0xff;
    await writeFile(f, bytes);
    await refused(f, /is not a readable bundle/);
  });

  it('a file that is not zstd at all: not a Guard bundle', async () => {
    const f = join(work, 'random.tar.zst');
    await writeFile(f, 'this is not a zstd frame\n'.repeat(100));
    const r = await refused(
      f,
      /^guard-agent: .*random\.tar\.zst is not a Guard bundle \(not a zstd-compressed tar archive\)$/m,
    );
    assert.doesNotMatch(r.stderr, /frame descriptor/i);
  });

  it('a file shorter than a zstd frame header: not a Guard bundle', async () => {
    const f = join(work, 'tiny.tar.zst');
    await writeFile(f, 'ab');
    await refused(f, /^guard-agent: .*tiny\.tar\.zst is not a Guard bundle \(not a zstd-compressed tar archive\)$/m);
  });

  it('zstd data that is not a tar archive: not a Guard bundle', async () => {
    const f = join(work, 'text.tar.zst');
    await writeFile(f, zstdCompressSync(Buffer.from('just some text, no tar header\n'.repeat(40))));
    await refused(f, /^guard-agent: .*text\.tar\.zst is not a Guard bundle \(not a zstd-compressed tar archive\)$/m);
  });

  it('a bundle without BUNDLE-MANIFEST.json', async () => {
    const f = await repacked('no-manifest.tar.zst', async () => ['agent.log', 'system.json', 'config.redacted.json']);
    await refused(f, /has no BUNDLE-MANIFEST\.json/);
  });

  it('a member altered after collect (same size, different SHA-256)', async () => {
    const f = await repacked('altered.tar.zst', async (dir) => {
      const log = await readFile(join(dir, 'agent.log'), 'utf8');
      await writeFile(join(dir, 'agent.log'), log.replace('web-01', 'web-02'));
      return undefined;
    });
    await refused(f, /member agent\.log does not match its SHA-256 in the manifest/);
  });

  it('a member whose size differs from the manifest', async () => {
    const f = await repacked('grown.tar.zst', async (dir) => {
      await writeFile(join(dir, 'agent.log'), `${await readFile(join(dir, 'agent.log'), 'utf8')}extra line\n`);
      return undefined;
    });
    await refused(f, /member agent\.log is \d+ bytes, the manifest says \d+/);
  });

  it('a member listed in the manifest is missing', async () => {
    const f = await repacked('missing-member.tar.zst', async () => [
      'BUNDLE-MANIFEST.json',
      'agent.log',
      'config.redacted.json',
    ]);
    await refused(f, /member system\.json listed in the manifest is missing/);
  });

  it('an extra member not in the manifest', async () => {
    const f = await repacked('extra.tar.zst', async (dir) => {
      await writeFile(join(dir, 'notes.txt'), 'smuggled\n');
      return undefined;
    });
    await refused(f, /member notes\.txt is not listed in the manifest/);
  });

  it('an agent that is not enrolled', async () => {
    const fresh = await newHome('unenrolled');
    const bundle = await collect(fresh);
    await refused(
      bundle,
      /this agent is not enrolled .*run guard-agent enroll --url BASE_URL --token-file FILE/,
      fresh,
    );
  });

  it('an enrollment.json that is not valid', async () => {
    const broken = await newHome('broken-enrolment');
    const bundle = await collect(broken);
    await writeEnrollmentFile(broken, '{"base_url": "http://127.0.0.1:1", "api_key": ');
    await refused(bundle, /enrollment\.json is not valid \(it is not JSON\): re-enroll/, broken);
    await writeEnrollmentFile(broken, { ...fakeEnrollment(gs.url), api_key: '' });
    await refused(bundle, /api_key must be a non-empty string/, broken);
  });

  it('an enrollment.json whose api_key is malformed: says so locally (re-enroll), never prints it', async () => {
    const broken = await newHome('malformed-key');
    const bundle = await collect(broken);
    for (const apiKey of [
      'gak_abc.def!',
      'gak_abc def0123',
      'gak_\u00e9t\u00e9_0123456',
      'gak_',
      `gak_${'x'.repeat(300)}`,
    ]) {
      await writeEnrollmentFile(broken, { ...fakeEnrollment(gs.url), api_key: apiKey });
      const r = await refused(
        bundle,
        /^guard-agent: the enrolment .*enrollment\.json is not valid \(its api_key is malformed: not an agent key as the service issues them\): re-enroll: run guard-agent enroll --url BASE_URL --token-file FILE$/m,
        broken,
      );
      assert.ok(!r.stderr.includes(apiKey), 'the key was printed');
      assert.doesNotMatch(r.stderr, /Authorization|Bearer/);
    }
  });

  it('an enrolled base_url that is plain http:// to a host that is not loopback', async () => {
    const remote = await newHome('http-remote');
    const bundle = await collect(remote);
    await writeEnrollmentFile(remote, fakeEnrollment('http://192.0.2.10:8080'));
    await refused(
      bundle,
      /refusing the enrolled base_url http:\/\/192\.0\.2\.10:8080: plain http:\/\/ is allowed only to a loopback address/,
      remote,
    );
  });
});

// ---------------------------------------------------------------------------------------
// Stand-in services: retries, error messages, the PUT's exact headers

describe('against a stand-in service', () => {
  let home: Home;
  let bundle: string;
  let size: number;
  let fileSha: string;
  let manifest: Loose;

  before(async () => {
    home = await newHome('standin');
    bundle = await collect(home);
    size = (await stat(bundle)).size;
    fileSha = await sha256File(bundle);
    const dir = await unpack(bundle, home.root);
    manifest = JSON.parse(await readFile(join(dir, 'BUNDLE-MANIFEST.json'), 'utf8'));
  });

  /** Starts a stand-in, points the enrolment at it, runs upload, closes the stand-in. */
  async function uploadTo(options: StandInOptions, env?: Record<string, string>) {
    const standIn = await startStandIn(options);
    const enrollment = fakeEnrollment(standIn.url);
    await writeEnrollmentFile(home, enrollment);
    try {
      const r = await runAgent(uploadArgs(home, bundle), { env });
      assert.equal(await sha256File(bundle), fileSha, 'the local file changed');
      return { r, standIn, enrollment };
    } finally {
      await standIn.close();
    }
  }

  const apiError = (status: number, code: string, message: string) => ({
    status,
    body: { error: { code, message } },
  });

  it('the three requests carry exactly what the contract says', async () => {
    const { r, standIn, enrollment } = await uploadTo({ putHeaders: { 'x-amz-checksum-sha256': 'c2lnbmVk' } });
    assert.equal(r.code, 0, describeRun(r));
    const out = parseOutput(r);
    assert.deepEqual(
      standIn.requests.map((q) => `${q.method} ${q.path.replace(/^\/objects\/.*/, '/objects/…')}`),
      ['POST /v1/support/bundle/upload-url', 'PUT /objects/…', 'POST /v1/support/bundle/register'],
    );
    const [presign, put, register] = standIn.requests as [Recorded, Recorded, Recorded];
    for (const api of [presign, register]) {
      assert.equal(api.headers.authorization, `Bearer ${enrollment.api_key}`);
      assert.equal(api.headers['user-agent'], `guard-agent/${AGENT_VERSION}`);
      assert.match(api.headers['content-type'] ?? '', /^application\/json/);
    }
    assert.deepEqual(JSON.parse(presign.body.toString()), { filename: 'bundle.tar.zst', size, sha256: fileSha });
    const reg = JSON.parse(register.body.toString());
    assert.deepEqual(Object.keys(reg).sort(), ['manifest', 'object_key', 'sha256', 'size']);
    assert.equal(reg.object_key, out.object_key);
    assert.equal(reg.sha256, fileSha);
    assert.equal(reg.size, size);
    assert.deepEqual(reg.manifest, { collection_errors: [], ...manifest });

    // The PUT: no Authorization, an exact Content-Length, never chunked, the presign's headers.
    assert.equal(put.headers.authorization, undefined);
    assert.ok(!put.rawHeaders.some((h, i) => i % 2 === 0 && /^authorization$/i.test(h)));
    assert.equal(put.headers['transfer-encoding'], undefined);
    assert.equal(put.headers['content-length'], String(size));
    assert.equal(put.headers['content-type'], 'application/octet-stream');
    assert.equal(put.headers['x-amz-checksum-sha256'], 'c2lnbmVk');
    assert.equal(put.headers['user-agent'], `guard-agent/${AGENT_VERSION}`);
    assert.equal(put.bodyBytes, size);
    assert.equal(put.bodySha256, fileSha);
  });

  it('503 twice on presign, then success: retried with backoff, and the upload succeeds', async () => {
    const unavailable = apiError(503, 'unavailable', 'try later');
    const { r, standIn } = await uploadTo({ script: { presign: [unavailable, unavailable, 'ok'] } });
    assert.equal(r.code, 0, describeRun(r));
    parseOutput(r);
    const presigns = standIn.of('presign');
    assert.equal(presigns.length, 3);
    assert.equal((r.stderr.match(/presign: HTTP 503 unavailable: try later; retrying in/g) ?? []).length, 2, r.stderr);
    // Backoff: at least half of 1 s, then half of 2 s (equal jitter).
    assert.ok(presigns[1].at - presigns[0].at >= 450, 'first retry came too soon');
    assert.ok(presigns[2].at - presigns[1].at >= 950, 'second retry came too soon');
  });

  it('429 with Retry-After on register: waits as told, then succeeds (register is idempotent)', async () => {
    const limited = { ...apiError(429, 'rate_limited', 'slow down'), headers: { 'retry-after': '2' } };
    const { r, standIn } = await uploadTo({ script: { register: [limited, 'ok'] } });
    assert.equal(r.code, 0, describeRun(r));
    const regs = standIn.of('register');
    assert.equal(regs.length, 2);
    assert.ok(regs[1].at - regs[0].at >= 1950, `retried after ${regs[1].at - regs[0].at} ms, not 2 s`);
    assert.match(r.stderr, /register: HTTP 429 rate_limited: slow down; retrying in 2\.0 s/);
  });

  it('a 5xx on the PUT: the whole file is sent again from its first byte', async () => {
    const { r, standIn } = await uploadTo({ script: { put: [{ status: 500, body: 'boom' }, 'ok'] } });
    assert.equal(r.code, 0, describeRun(r));
    const puts = standIn.of('put');
    assert.equal(puts.length, 2);
    for (const p of puts) {
      assert.equal(p.bodyBytes, size);
      assert.equal(p.bodySha256, fileSha);
      assert.equal(p.headers['content-length'], String(size));
    }
    assert.equal(standIn.of('presign').length, 1);
  });

  it('400 on presign: no retry; the message names the step, the status and the service message', async () => {
    const { r, standIn } = await uploadTo({
      script: { presign: [apiError(400, 'invalid_request', 'body/size must be >= 1')] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /^guard-agent: presign failed: HTTP 400 invalid_request: body\/size must be >= 1$/m);
    assert.doesNotMatch(r.stderr, /retrying/);
    assert.equal(standIn.of('presign').length, 1);
    assert.equal(standIn.of('put').length, 0);
  });

  it('401 on presign: says the API key was refused and how to recover', async () => {
    const { r } = await uploadTo({ script: { presign: [apiError(401, 'unauthorized', 'unknown API key')] } });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(
      r.stderr,
      /presign failed: HTTP 401 unauthorized: unknown API key; .*re-enroll with guard-agent enroll/,
    );
  });

  it('403 on the PUT: no retry, no register', async () => {
    const { r, standIn } = await uploadTo({
      script: { put: [apiError(403, 'invalid_signature', 'the presigned URL signature does not match')] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(
      r.stderr,
      /upload \(PUT\) failed: HTTP 403 invalid_signature: the presigned URL signature does not match/,
    );
    assert.equal(standIn.of('put').length, 1);
    assert.equal(standIn.of('register').length, 0);
  });

  it('409 on register: the service message is shown', async () => {
    const { r, standIn } = await uploadTo({
      script: { register: [apiError(409, 'checksum_mismatch', 'the stored object does not match')] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /register failed: HTTP 409 checksum_mismatch: the stored object does not match/);
    assert.equal(standIn.of('register').length, 1);
  });

  it('an error body that is not the JSON error shape is quoted as a short excerpt', async () => {
    const html = `<html><body>${'Not Found '.repeat(100)}</body></html>`;
    const { r } = await uploadTo({ script: { presign: [{ status: 404, body: html }] } });
    assert.equal(r.code, 1, describeRun(r));
    const line = r.stderr.split('\n').find((l) => l.includes('presign failed')) ?? '';
    assert.match(line, /presign failed: HTTP 404: "<html><body>Not Found/);
    assert.ok(line.length < 320, `the excerpt is too long: ${line.length} chars`);
  });

  it('a redirect is not followed: the step fails, naming where it pointed', async () => {
    const { r, standIn } = await uploadTo({
      script: { presign: [{ status: 307, headers: { location: 'https://elsewhere.example/v1/x' } }] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(
      r.stderr,
      /presign failed: HTTP 307: redirect to https:\/\/elsewhere\.example\/v1\/x \(redirects are not followed\)/,
    );
    assert.equal(standIn.of('presign').length, 1);
  });

  it('a service that stays unavailable: gives up after a few tries, exit 1', async () => {
    const { r, standIn } = await uploadTo({ script: { presign: [{ status: 502, body: '' }] } });
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(standIn.of('presign').length, MAX_ATTEMPTS);
    assert.match(
      r.stderr,
      new RegExp(`presign failed: HTTP 502: \\(empty body\\) \\(gave up after ${MAX_ATTEMPTS} attempts\\)`),
    );
  });

  it('the PUT is not retried once the presigned URL has expired', async () => {
    const { r, standIn } = await uploadTo({
      expiresAt: () => new Date(Date.now() - 1000).toISOString(),
      script: { put: [{ status: 503, body: '' }, 'ok'] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(standIn.of('put').length, 1);
    assert.match(r.stderr, /upload \(PUT\) failed: HTTP 503: .*the presigned URL expires before another try/);
  });

  it('a presign answer without a URL is refused: nothing is sent', async () => {
    const { r, standIn } = await uploadTo({
      script: { presign: [{ status: 200, body: { object_key: 'k', expires_at: new Date().toISOString() } }] },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /presign failed: unexpected answer from the service \(url is missing\)/);
    assert.equal(standIn.of('put').length, 0);
  });

  it('a presigned URL that is plain http:// to a host that is not loopback is refused', async () => {
    const { r, standIn } = await uploadTo({
      script: {
        presign: [
          {
            status: 200,
            body: { url: 'http://198.51.100.7/objects/x', object_key: 'x', expires_at: new Date().toISOString() },
          },
        ],
      },
    });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /refusing the presigned upload URL http:\/\/198\.51\.100\.7/);
    assert.equal(standIn.of('put').length, 0);
  });

  it('a presign answer asking for an Authorization header on the PUT is refused', async () => {
    const { r, standIn } = await uploadTo({ putHeaders: { Authorization: 'Bearer leak' } });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /it asks for a Authorization header, which the PUT never carries/);
    assert.equal(standIn.of('put').length, 0);
  });

  it('an enrolled https:// base_url whose server speaks plain HTTP: says so, not retried', async () => {
    const standIn = await startStandIn();
    try {
      const url = standIn.url.replace(/^http:/, 'https:');
      await writeEnrollmentFile(home, fakeEnrollment(url));
      const r = await runAgent(uploadArgs(home, bundle));
      assert.equal(r.code, 1, describeRun(r));
      assert.equal(r.stdout, '');
      assert.match(
        r.stderr,
        new RegExp(
          `^guard-agent: presign failed: the server at ${esc(url)} did not speak TLS \\(is the URL's scheme right\\? try ${esc(standIn.url)}\\)$`,
          'm',
        ),
      );
      assert.doesNotMatch(r.stderr, /retrying|wrong version number|EPROTO|openssl/i);
      assert.equal(r.stderr.split('\n').filter((l) => l !== '').length, 1, 'one line');
      assert.equal(standIn.requests.length, 0);
    } finally {
      await standIn.close();
    }
  });

  it('a presigned https:// URL whose server speaks plain HTTP: the PUT says so, not retried', async () => {
    const storage = await startStandIn(); // plain HTTP, named with https:// by the presign answer
    try {
      const put = `${storage.url.replace(/^http:/, 'https:')}/objects/k.tar.zst?X-Sig=1`;
      const expires = new Date(Date.now() + 15 * 60_000).toISOString();
      const { r, standIn } = await uploadTo({
        script: { presign: [{ status: 200, body: { url: put, object_key: 'k.tar.zst', expires_at: expires } }] },
      });
      assert.equal(r.code, 1, describeRun(r));
      const origin = new URL(put).origin;
      assert.match(
        r.stderr,
        new RegExp(
          `^guard-agent: upload \\(PUT\\) failed: the server at ${esc(origin)} did not speak TLS \\(is the URL's scheme right\\? try ${esc(storage.url)}\\)$`,
          'm',
        ),
      );
      assert.doesNotMatch(r.stderr, /retrying/);
      assert.equal(storage.requests.length, 0);
      assert.equal(standIn.of('register').length, 0);
    } finally {
      await storage.close();
    }
  });

  it('a service that cannot be reached: connection errors are retried, then exit 1 naming the step', async () => {
    await writeEnrollmentFile(home, fakeEnrollment(await refusedUrl()));
    const r = await runAgent(uploadArgs(home, bundle));
    assert.equal(r.code, 1, describeRun(r));
    assert.equal((r.stderr.match(/presign: .*ECONNREFUSED.*; retrying in/g) ?? []).length, MAX_ATTEMPTS - 1, r.stderr);
    assert.match(r.stderr, new RegExp(`presign failed: .*ECONNREFUSED.*\\(gave up after ${MAX_ATTEMPTS} attempts\\)`));
  });
});

// ---------------------------------------------------------------------------------------
// Signals mid-PUT (spec 1.7, 7.1): no handlers, default disposition; the file is intact

describe('signals during the PUT', () => {
  let home: Home;
  let bundle: string;
  let fileSha: string;

  before(async () => {
    home = await newHome('signals', '');
    await writeRandomLog(home.logPath, 6 * 1024 * 1024); // ~6 MiB that zstd cannot shrink
    bundle = await collect(home);
    fileSha = await sha256File(bundle);
  });

  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    it(`${signal} while the service stalls the PUT: the agent ends by ${signal}, the file is intact`, async () => {
      const standIn = await startStandIn({ script: { put: ['stall'] } });
      try {
        await writeEnrollmentFile(home, fakeEnrollment(standIn.url));
        const run = startAgent(uploadArgs(home, bundle));
        await standIn.putStarted;
        run.child.kill(signal);
        const r = await run.result;
        assert.equal(r.signal, signal, describeRun(r));
        assert.equal(r.code, null);
        assert.equal(r.stdout, '');
        assert.equal(standIn.of('register').length, 0);
        assert.equal(await sha256File(bundle), fileSha, 'the local file changed');
      } finally {
        await standIn.close();
      }
    });
  }

  for (const [signal, status] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    it(`a calling shell sees exit status ${status} when ${signal} ends the agent mid-PUT`, async () => {
      const standIn = await startStandIn({ script: { put: ['stall'] } });
      try {
        await writeEnrollmentFile(home, fakeEnrollment(standIn.url));
        const pidFile = join(home.root, `${signal}.pid`);
        await rm(pidFile, { force: true });
        const run = startAgentUnderShell(uploadArgs(home, bundle), pidFile);
        await standIn.putStarted;
        const pid = Number((await readFile(pidFile, 'utf8')).trim());
        process.kill(pid, signal);
        const r = await run.result;
        assert.equal(r.code, 0, describeRun(r));
        assert.match(r.stdout, new RegExp(`^rc=${status}$`, 'm'), describeRun(r));
        assert.equal(await sha256File(bundle), fileSha, 'the local file changed');
      } finally {
        await standIn.close();
      }
    });
  }
});

// ---------------------------------------------------------------------------------------
// Proxies: HTTP_PROXY / HTTPS_PROXY / NO_PROXY through node:http's built-in proxy support

describe('proxies', () => {
  let home: Home;
  let bundle: string;
  let size: number;
  let tls: { key: string; cert: string; certPath: string };

  before(async () => {
    home = await enrolled('proxy');
    bundle = await collect(home);
    size = (await stat(bundle)).size;
    const certDir = join(home.root, 'tls');
    await mkdir(certDir, { recursive: true });
    tls = await selfSignedCert(certDir);
  });

  /** An https:// stand-in service and a second agent home enrolled with it. */
  async function httpsService(name: string) {
    const standIn = await startStandIn({ tls });
    const other = await newHome(name);
    const otherBundle = await collect(other);
    await writeEnrollmentFile(other, fakeEnrollment(standIn.url));
    return { standIn, other, otherBundle };
  }

  it('HTTP_PROXY: the three calls to an http:// service are forwarded by the proxy', async () => {
    const proxy = await startProxy();
    try {
      const before = gs.requests.length;
      const r = await runAgent(uploadArgs(home, bundle), { env: proxyEnv({ http: proxy.url }) });
      assert.equal(r.code, 0, describeRun(r));
      parseOutput(r);
      const { host } = new URL(gs.url);
      assert.deepEqual(proxy.forwarded, [`POST ${host}`, `PUT ${host}`, `POST ${host}`]);
      assert.deepEqual(proxy.tunnels, []);
      assert.ok(proxy.bytesUp() >= size, `only ${proxy.bytesUp()} bytes went through the proxy`);
      assert.equal(gs.requests.length - before, 3);
    } finally {
      await proxy.close();
    }
  });

  it('NO_PROXY naming the service host bypasses HTTP_PROXY', async () => {
    const proxy = await startProxy();
    try {
      const r = await runAgent(uploadArgs(home, bundle), {
        env: proxyEnv({ http: proxy.url, no: 'example.org, 127.0.0.1' }),
      });
      assert.equal(r.code, 0, describeRun(r));
      assert.deepEqual(proxy.tunnels, []);
      assert.deepEqual(proxy.forwarded, []);
    } finally {
      await proxy.close();
    }
  });

  it('HTTPS_PROXY: an https:// service is reached through the proxy, the TLS inside the tunnel', async () => {
    const { standIn, other, otherBundle } = await httpsService('proxy-https');
    const proxy = await startProxy();
    try {
      const r = await runAgent(uploadArgs(other, otherBundle), {
        env: { ...proxyEnv({ https: proxy.url }), NODE_EXTRA_CA_CERTS: tls.certPath },
      });
      assert.equal(r.code, 0, describeRun(r));
      parseOutput(r);
      const { host } = new URL(standIn.url);
      assert.ok(proxy.tunnels.length >= 1 && proxy.tunnels.every((t) => t === host), proxy.tunnels.join(', '));
      const put = standIn.of('put')[0];
      assert.equal(put.bodySha256, await sha256File(otherBundle));
      assert.ok(proxy.bytesUp() > put.bodyBytes, 'the PUT did not go through the proxy');
      assert.equal(put.headers['transfer-encoding'], undefined);
      assert.equal(put.headers.authorization, undefined);
    } finally {
      await proxy.close();
      await standIn.close();
    }
  });

  it('HTTP_PROXY alone also carries an https:// service (through a tunnel)', async () => {
    const { standIn, other, otherBundle } = await httpsService('proxy-http-for-https');
    const proxy = await startProxy();
    try {
      const r = await runAgent(uploadArgs(other, otherBundle), {
        env: { ...proxyEnv({ http: proxy.url }), NODE_EXTRA_CA_CERTS: tls.certPath },
      });
      assert.equal(r.code, 0, describeRun(r));
      const { host } = new URL(standIn.url);
      assert.ok(proxy.tunnels.length >= 1 && proxy.tunnels.every((t) => t === host), proxy.tunnels.join(', '));
      assert.equal(standIn.requests.length, 3);
    } finally {
      await proxy.close();
      await standIn.close();
    }
  });

  it('HTTPS_PROXY alone does not apply to an http:// service', async () => {
    const proxy = await startProxy();
    try {
      const r = await runAgent(uploadArgs(home, bundle), { env: proxyEnv({ https: proxy.url }) });
      assert.equal(r.code, 0, describeRun(r));
      assert.deepEqual(proxy.tunnels, []);
      assert.deepEqual(proxy.forwarded, []);
    } finally {
      await proxy.close();
    }
  });

  it('a proxy that drops CONNECT: each try fails at once, retried, then exit 1 naming the tunnel', async () => {
    const { standIn, other, otherBundle } = await httpsService('proxy-drop');
    const proxy = await startProxy({ drop: true });
    try {
      const r = await runAgent(uploadArgs(other, otherBundle), {
        env: { ...proxyEnv({ https: proxy.url }), NODE_EXTRA_CA_CERTS: tls.certPath },
        timeoutMs: 60_000,
      });
      assert.equal(r.code, 1, describeRun(r));
      const { host } = new URL(standIn.url);
      assert.match(
        r.stderr,
        new RegExp(
          `presign failed: .*the proxy did not open a tunnel to ${host.replaceAll('.', '\\.')}: .*\\(gave up after ${MAX_ATTEMPTS} attempts\\)`,
        ),
      );
      // One tunnel attempt per try (undici 7, used before, reconnected thousands of times a second).
      assert.equal(proxy.tunnels.length, MAX_ATTEMPTS);
      assert.equal(standIn.requests.length, 0);
    } finally {
      await proxy.close();
      await standIn.close();
    }
  });

  it('a proxy that cannot be reached fails the step with a network error', async () => {
    const proxy = await startProxy();
    const url = proxy.url;
    await proxy.close();
    const r = await runAgent(uploadArgs(home, bundle), { env: proxyEnv({ http: url }) });
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /presign failed: .*ECONNREFUSED/);
  });

  describe("the config file's proxy keys (they win over the environment, as curl's --proxy does)", () => {
    let h: Home;
    let b: string;
    let dead: string;

    before(async () => {
      h = await enrolled('proxy-config');
      b = await collect(h);
      dead = await refusedUrl(); // nothing listens there: a request sent through it fails
    });

    /** Rewrites the home's config with a `proxy` mapping (the other keys as before). */
    async function configProxy(proxy: unknown): Promise<void> {
      await writeFile(
        h.configPath,
        toYaml({ log_path: h.logPath, state_dir: h.stateDir, environment: 'staging', proxy }),
      );
    }

    it('proxy.http: the three calls go through it, with no proxy variable set', async () => {
      const proxy = await startProxy();
      try {
        await configProxy({ http: proxy.url });
        const r = await runAgent(uploadArgs(h, b));
        assert.equal(r.code, 0, describeRun(r));
        parseOutput(r);
        const { host } = new URL(gs.url);
        assert.deepEqual(proxy.forwarded, [`POST ${host}`, `PUT ${host}`, `POST ${host}`]);
      } finally {
        await proxy.close();
      }
    });

    it('proxy.http wins over HTTP_PROXY', async () => {
      const proxy = await startProxy();
      try {
        await configProxy({ http: proxy.url });
        const r = await runAgent(uploadArgs(h, b), { env: proxyEnv({ http: dead }) });
        assert.equal(r.code, 0, describeRun(r));
        assert.equal(proxy.forwarded.length, 3);
      } finally {
        await proxy.close();
      }
    });

    it('proxy.https wins over HTTPS_PROXY (a CONNECT tunnel to an https:// service)', async () => {
      const { standIn, other, otherBundle } = await httpsService('proxy-config-https');
      const proxy = await startProxy();
      try {
        await writeFile(
          other.configPath,
          toYaml({ log_path: other.logPath, state_dir: other.stateDir, proxy: { https: proxy.url } }),
        );
        const r = await runAgent(uploadArgs(other, otherBundle), {
          env: { ...proxyEnv({ https: dead }), NODE_EXTRA_CA_CERTS: tls.certPath },
        });
        assert.equal(r.code, 0, describeRun(r));
        const { host } = new URL(standIn.url);
        assert.ok(proxy.tunnels.length >= 1 && proxy.tunnels.every((t) => t === host), proxy.tunnels.join(', '));
      } finally {
        await proxy.close();
        await standIn.close();
      }
    });

    it('proxy.no_proxy (a list) wins over NO_PROXY; an empty proxy.http turns HTTP_PROXY off', async () => {
      await configProxy({ no_proxy: ['example.org', '127.0.0.1'] });
      let r = await runAgent(uploadArgs(h, b), { env: proxyEnv({ http: dead, no: 'example.org' }) });
      assert.equal(r.code, 0, describeRun(r));
      await configProxy({ http: '' });
      r = await runAgent(uploadArgs(h, b), { env: proxyEnv({ http: dead }) });
      assert.equal(r.code, 0, describeRun(r));
    });

    it('a proxy key that is not valid: exit 1 naming the key, before any request; the value is not printed', async () => {
      const cases: [unknown, RegExp][] = [
        [{ https: 'socks5://user:S3CRET_PW@proxy.example:1080' }, /config key proxy\.https must be a proxy URL/],
        [
          { HTTPS: 'http://proxy.example:3128' },
          /config key proxy\.HTTPS is not known: the keys are http, https and no_proxy/,
        ],
        ['http://proxy.example:3128', /config key proxy must be a mapping/],
        [{ no_proxy: [1, 2] }, /config key proxy\.no_proxy must be a string or a list/],
      ];
      for (const [proxy, message] of cases) {
        await configProxy(proxy);
        const requests = gs.requests.length;
        const r = await runAgent(uploadArgs(h, b));
        assert.equal(r.code, 1, describeRun(r));
        assert.match(r.stderr, message, describeRun(r));
        assert.match(r.stderr, new RegExp(`\\(in ${esc(h.configPath)}\\)`));
        assert.doesNotMatch(r.stderr, /S3CRET_PW/);
        assert.deepEqual(gs.requests.slice(requests), []);
      }
    });
  });
});
