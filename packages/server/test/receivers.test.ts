// The receivers in five more languages (issue 21, item 5; docs/receivers/): each recipe's own
// command-line check runs on deliveries the real server made to a real HTTPS receiver — raw
// body bytes and headers as they arrived — by Guard-Signature and by the Standard Webhooks
// headers: one outside a rotation, one during a rotation (two entries in each header), one
// under a secret issued in base64url before secrets were standard base64. The standardwebhooks
// npm package checks the same deliveries as the reference for the Standard Webhooks headers.
//
// The toolchains are Debian's packages (scripts/install-test-deps.sh): a missing one fails its
// language's tests, naming the package. Go and Java are compiled once per run, in a temp dir.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { seal } from '../src/kernel/secret-box.ts';
import { SERVER_DIR } from './harness.ts';
import {
  apiCall,
  createEndpoint,
  createSignal,
  makeTestTls,
  newTenant,
  type ReceivedRequest,
  Receiver,
  startWebhookServer,
  type WebhookServer,
} from './webhook-harness.ts';

const RECEIVERS = resolve(SERVER_DIR, '../../docs/receivers');
const SCHEMES = ['guard-signature', 'standard-webhooks'] as const;
type Scheme = (typeof SCHEMES)[number];

/** One delivery as it arrived, written to files for the recipes' command-line checks. */
interface Capture {
  hit: ReceivedRequest;
  /** `name: value` lines, every header received. */
  headersFile: string;
  bodyFile: string;
  /** The body with its severity changed (sent with the same headers). */
  tamperedFile: string;
  /** Each signature header with entries of other schemes around the real one (`v2=…`; `v1a,…`, Standard Webhooks' asymmetric version). */
  otherSchemesFile: string;
  /** Each signature header with its entry nine times: more than a receiver reads. */
  tooManyFile: string;
  /** webhook-timestamp (= Guard-Timestamp), Unix seconds. */
  timestamp: number;
}

let work: string;
let server: WebhookServer;
let receiver: Receiver;
const captured: Record<'current' | 'rotating' | 'legacy', Capture> = {} as never;
/** The endpoint's secret before its rotation, the one after, a legacy base64url one, and one of nobody's. */
const secret = { old: '', new: '', legacy: '', wrong: `whsec_${randomBytes(32).toString('base64')}` };

function headerLines(headers: ReceivedRequest['headers'], replace: Record<string, string> = {}): string {
  const all = { ...headers, ...replace };
  return `${Object.entries(all)
    .map(([k, v]) => `${k}: ${Array.isArray(v) ? v.join(', ') : v}`)
    .join('\n')}\n`;
}

async function capture(name: string, hit: ReceivedRequest): Promise<Capture> {
  const guard = String(hit.headers['guard-signature']);
  const standard = String(hit.headers['webhook-signature']);
  const tampered = Buffer.from(hit.body.toString('utf8').replace(/"severity":\d/, '"severity":1'));
  assert.notDeepEqual(tampered, hit.body, 'the tampered body differs');
  const c: Capture = {
    hit,
    headersFile: join(work, `${name}.headers`),
    bodyFile: join(work, `${name}.body`),
    tamperedFile: join(work, `${name}.tampered`),
    otherSchemesFile: join(work, `${name}.other-schemes`),
    tooManyFile: join(work, `${name}.too-many`),
    timestamp: Number(hit.headers['webhook-timestamp'] ?? hit.headers['guard-timestamp']),
  };
  await writeFile(c.headersFile, headerLines(hit.headers));
  await writeFile(c.bodyFile, hit.body);
  await writeFile(c.tamperedFile, tampered);
  const v1a = `v1a,${randomBytes(64).toString('base64')}`;
  await writeFile(
    c.otherSchemesFile,
    headerLines(hit.headers, {
      'guard-signature': `v2=${randomBytes(32).toString('hex')}, ${guard}, v3=x`,
      'webhook-signature': `${v1a} ${standard} v2,x`,
    }),
  );
  await writeFile(
    c.tooManyFile,
    headerLines(hit.headers, {
      'guard-signature': Array(9).fill(guard).join(', '),
      'webhook-signature': Array(9).fill(standard).join(' '),
    }),
  );
  return c;
}

/** A `whsec_` secret as secrets were issued before: base64url, unpadded, with both `-` and `_` in it. */
function legacySecret(): string {
  for (;;) {
    const text = randomBytes(32).toString('base64url');
    if (text.includes('-') && text.includes('_')) return `whsec_${text}`;
  }
}

/** What a standardwebhooks library takes: the base64url text converted to standard base64. */
const toStandardBase64 = (s: string) => {
  const text = s.slice('whsec_'.length).replace(/-/g, '+').replace(/_/g, '/');
  return `whsec_${text}${'='.repeat((4 - (text.length % 4)) % 4)}`;
};

before(async () => {
  work = await mkdtemp(join(os.tmpdir(), 'guard-receivers-'));
  const tls = await makeTestTls();
  server = await startWebhookServer({ caPem: tls.caPem });
  receiver = await Receiver.start(tls);
  const tenant = await newTenant(server);
  const rotating = await createEndpoint(server, tenant.adminToken, { url: receiver.url('/rotating') });
  secret.old = rotating.secret;
  // An endpoint whose secret an earlier release issued: sealed straight into its row.
  const legacy = await createEndpoint(server, tenant.adminToken, { url: receiver.url('/legacy') });
  secret.legacy = legacySecret();
  await server.deps.db
    .updateTable('webhook_endpoints')
    .set({ secret_sealed: seal(server.deps.masterKey.derive('webhook-secrets'), secret.legacy, legacy.id) })
    .where('id', '=', legacy.id)
    .execute();

  await createSignal(server, tenant.agentKey, { description: 'before the rotation' });
  const [current] = await receiver.waitForHits('/rotating', 1);
  const [legacyHit] = await receiver.waitForHits('/legacy', 1);
  const rotated = await apiCall(
    server,
    'POST',
    `/v1/webhooks/endpoints/${rotating.id}/rotate-secret`,
    tenant.adminToken,
    {
      grace_seconds: 3600,
    },
  );
  assert.equal(rotated.status, 200, rotated.text);
  secret.new = rotated.json.secret;
  await createSignal(server, tenant.agentKey, { description: 'during the rotation' });
  const during = (await receiver.waitForHits('/rotating', 2))[1];
  captured.current = await capture('current', current);
  captured.rotating = await capture('rotating', during);
  captured.legacy = await capture('legacy', legacyHit);
});

after(async () => {
  await server?.close();
  await receiver?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the captured deliveries', () => {
  it('carry one entry in each signature header outside a rotation, two during one, under secrets issued in standard base64', () => {
    for (const s of [secret.old, secret.new]) assert.match(s, /^whsec_[A-Za-z0-9+/]{43}=$/);
    const one = captured.current.hit.headers;
    assert.match(String(one['guard-signature']), /^sha256=[0-9a-f]{64}$/);
    assert.match(String(one['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}=$/);
    assert.equal(one['webhook-id'], one['guard-delivery']);
    assert.equal(one['webhook-timestamp'], one['guard-timestamp']);
    const two = captured.rotating.hit.headers;
    assert.match(String(two['guard-signature']), /^sha256=[0-9a-f]{64}, sha256=[0-9a-f]{64}$/);
    assert.match(String(two['webhook-signature']), /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/);
  });
});

// ---------------------------------------------------------------------------------------
// The reference: the standardwebhooks npm package on the same deliveries

describe('the standardwebhooks package (the reference for the Standard Webhooks headers)', () => {
  /** The package's verify: the parsed envelope, or a throw. */
  const verify = (c: Capture, s: string, body: Buffer = c.hit.body) =>
    new Webhook(s).verify(body, c.hit.headers as Record<string, string>) as { data: { description: string } };

  it('verifies a delivery under its secret as Guard issued it, and refuses a tampered body or another secret', () => {
    assert.equal(verify(captured.current, secret.old).data.description, 'before the rotation');
    const tampered = Buffer.from(captured.current.hit.body.toString('utf8').replace(/"severity":\d/, '"severity":1'));
    assert.throws(() => verify(captured.current, secret.old, tampered), /No matching signature/);
    assert.throws(() => verify(captured.current, secret.wrong), /No matching signature/);
  });

  it('verifies a delivery made during a rotation under the new secret and under the old one', () => {
    assert.equal(verify(captured.rotating, secret.new).data.description, 'during the rotation');
    assert.equal(verify(captured.rotating, secret.old).data.description, 'during the rotation');
  });

  it('refuses a replay ten minutes later', (t) => {
    t.mock.timers.enable({ apis: ['Date'], now: (captured.current.timestamp + 600) * 1000 });
    assert.throws(() => verify(captured.current, secret.old), /timestamp too old/);
  });

  it('verifies a legacy base64url secret once converted to standard base64 (it cannot decode it as it is)', () => {
    assert.equal(verify(captured.legacy, toStandardBase64(secret.legacy)).data.description, 'before the rotation');
    assert.throws(() => new Webhook(secret.legacy));
  });
});

// ---------------------------------------------------------------------------------------
// The five recipes

interface Language {
  name: string;
  /** The Debian package that brings the toolchain. */
  debian: string;
  /** Commands the recipe needs on PATH. */
  tools: string[];
  /** Compiles the recipe when it needs it (once) and returns the command line of its check. */
  prepare(dir: string): Promise<string[]>;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Run> {
  return new Promise((done, fail) => {
    execFile(argv[0], argv.slice(1), { timeout: 60_000, ...options }, (error, stdout, stderr) => {
      if (typeof error?.code === 'string')
        fail(error); // not started (ENOENT, …)
      else done({ code: error ? (error.code ?? null) : 0, stdout, stderr });
    });
  });
}

async function mustRun(argv: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<void> {
  const r = await run(argv, options);
  if (r.code !== 0) throw new Error(`${argv.join(' ')} exited ${r.code}: ${r.stderr}${r.stdout}`);
}

const LANGUAGES: Language[] = [
  {
    name: 'Python',
    debian: 'python3',
    tools: ['python3'],
    prepare: async () => ['python3', join(RECEIVERS, 'python/guard_webhook.py')],
  },
  {
    name: 'Go',
    debian: 'golang-go',
    tools: ['go'],
    async prepare(dir) {
      const binary = join(dir, 'guard-verify');
      // Standard library only: no module is fetched (GOPROXY=off), and nothing is cached outside the temp dir.
      const env = {
        ...process.env,
        GOCACHE: join(dir, 'gocache'),
        GOPATH: join(dir, 'gopath'),
        GOPROXY: 'off',
        GOFLAGS: '',
        GOTOOLCHAIN: 'local',
        GO111MODULE: 'on',
      };
      await mustRun(['go', 'build', '-o', binary, './cmd/guard-verify'], { cwd: join(RECEIVERS, 'go'), env });
      return [binary];
    },
  },
  {
    name: 'Ruby',
    debian: 'ruby',
    tools: ['ruby'],
    prepare: async () => ['ruby', join(RECEIVERS, 'ruby/guard_webhook.rb')],
  },
  {
    name: 'PHP',
    debian: 'php-cli',
    tools: ['php'],
    prepare: async () => ['php', join(RECEIVERS, 'php/verify.php')],
  },
  {
    name: 'Java',
    debian: 'default-jdk-headless',
    tools: ['javac', 'java'],
    async prepare(dir) {
      const classes = join(dir, 'classes');
      await mustRun(['javac', '-d', classes, join(RECEIVERS, 'java/GuardWebhook.java')]);
      return ['java', '-cp', classes, 'GuardWebhook'];
    },
  },
];

async function onPath(tool: string): Promise<boolean> {
  return (await run(['sh', '-c', `command -v ${tool}`])).code === 0;
}

for (const language of LANGUAGES) {
  describe(`the ${language.name} receiver (docs/receivers/)`, () => {
    let command: string[];

    before(async () => {
      for (const tool of language.tools)
        if (!(await onPath(tool)))
          throw new Error(
            `${tool} is not installed: the ${language.name} receiver's test needs Debian's ${language.debian} (bash scripts/install-test-deps.sh)`,
          );
      const dir = await mkdtemp(join(work, `${language.name.toLowerCase()}-`));
      command = await language.prepare(dir);
    });

    /** The recipe's check on a capture: exit 0 when genuine, 1 when refused. */
    const check = (
      c: Capture,
      scheme: Scheme,
      secrets: string[],
      options: { tampered?: boolean; now?: number; headersFile?: string } = {},
    ): Promise<Run> =>
      run([
        ...command,
        ...(options.now === undefined ? [] : [`--now=${options.now}`]),
        scheme,
        options.headersFile ?? c.headersFile,
        options.tampered ? c.tamperedFile : c.bodyFile,
        ...secrets,
      ]);

    const accepted = (r: Run, scheme: Scheme) => {
      assert.equal(r.code, 0, `expected the ${scheme} check to accept: exit ${r.code}\n${r.stderr}${r.stdout}`);
      assert.match(r.stdout, new RegExp(`^verified by ${scheme}: signal_created`));
    };
    const refused = (r: Run, scheme: Scheme, code: string) => {
      assert.equal(r.code, 1, `expected the ${scheme} check to refuse: exit ${r.code}\n${r.stderr}${r.stdout}`);
      assert.match(r.stderr, new RegExp(`^refused \\(${code}\\): `), `${scheme}: ${r.stderr}`);
    };

    /** Runs `each` for both schemes at once. */
    const bothSchemes = async (each: (scheme: Scheme) => Promise<void>): Promise<void> => {
      await Promise.all(SCHEMES.map(each));
    };

    it('accepts a delivery under its secret, by Guard-Signature and by the Standard Webhooks headers', () =>
      bothSchemes(async (scheme) => accepted(await check(captured.current, scheme, [secret.old]), scheme)));

    it('refuses a tampered body under either scheme', () =>
      bothSchemes(async (scheme) =>
        refused(await check(captured.current, scheme, [secret.old], { tampered: true }), scheme, 'signature_mismatch'),
      ));

    it('refuses a delivery checked with another secret under either scheme', () =>
      bothSchemes(async (scheme) =>
        refused(await check(captured.current, scheme, [secret.wrong]), scheme, 'signature_mismatch'),
      ));

    it('refuses a replay ten minutes later, and a delivery stamped ten minutes ahead of its clock, under either scheme', () =>
      bothSchemes(async (scheme) => {
        const at = captured.current.timestamp;
        refused(await check(captured.current, scheme, [secret.old], { now: at + 600 }), scheme, 'timestamp_too_old');
        refused(await check(captured.current, scheme, [secret.old], { now: at - 600 }), scheme, 'timestamp_in_future');
        accepted(await check(captured.current, scheme, [secret.old], { now: at + 240 }), scheme);
      }));

    it('accepts a delivery made during a rotation (two entries in each header) under the new secret and under the old one, and refuses it under a third', () =>
      bothSchemes(async (scheme) => {
        accepted(await check(captured.rotating, scheme, [secret.new]), scheme);
        accepted(await check(captured.rotating, scheme, [secret.old]), scheme);
        refused(await check(captured.rotating, scheme, [secret.wrong]), scheme, 'signature_mismatch');
      }));

    it("accepts with a list of secrets when any one matches (the receiver's own rollover)", () =>
      bothSchemes(async (scheme) => {
        accepted(await check(captured.current, scheme, [secret.wrong, secret.old]), scheme);
        accepted(await check(captured.current, scheme, [secret.old, secret.wrong]), scheme);
      }));

    it('ignores entries of other schemes beside the matching one, and refuses a header of more than 8 entries', () =>
      bothSchemes(async (scheme) => {
        const c = captured.current;
        accepted(await check(c, scheme, [secret.old], { headersFile: c.otherSchemesFile }), scheme);
        refused(await check(c, scheme, [secret.old], { headersFile: c.tooManyFile }), scheme, 'malformed_signature');
      }));

    it('takes a secret issued in base64url before as it is, under either scheme', () =>
      bothSchemes(async (scheme) => {
        accepted(await check(captured.legacy, scheme, [secret.legacy]), scheme);
        refused(await check(captured.legacy, scheme, [secret.wrong]), scheme, 'signature_mismatch');
      }));

    it("takes the legacy secret converted to standard base64 for the Standard Webhooks headers only (Guard-Signature's key is the secret's text)", async () => {
      const converted = toStandardBase64(secret.legacy);
      accepted(await check(captured.legacy, 'standard-webhooks', [converted]), 'standard-webhooks');
      refused(await check(captured.legacy, 'guard-signature', [converted]), 'guard-signature', 'signature_mismatch');
    });
  });
}
