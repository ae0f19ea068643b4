// Integration tests of `guard-agent enroll` (DESIGN §3 contract — enrolment): the real
// bin/guard-agent in a child process against the real guard-server on loopback, plus the
// URL rule (plain http:// only to loopback) as pure functions.

import assert from 'node:assert/strict';
import { chmod, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stringify as toYaml } from 'yaml';
import { checkTransportUrl, isLoopbackHost, normaliseBaseUrl } from '../src/http/url-policy.ts';
import { AGENT_VERSION, describeRun, exists, type Home, makeHome, TempDirs } from './harness.ts';
import {
  enrollArgs,
  type GuardServer,
  type Loose,
  proxyEnv,
  runAgent,
  startGuardServer,
  startProxy,
  startStandIn,
} from './upload-harness.ts';

const dirs = new TempDirs();
let root: string;
let gs: GuardServer;
let n = 0;

before(async () => {
  root = await dirs.make('enroll');
  gs = await startGuardServer(join(root, 'data'));
});
after(async () => {
  await gs?.close();
  await dirs.cleanup();
});

const LINE = /^enrolled agent_id=(ag_\S+) tenant_id=(\S+)\n$/;

/** `text` as a literal inside a RegExp. */
const esc = (text: string) => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

async function home(options: { createStateDir?: boolean } = {}): Promise<Home> {
  return makeHome(join(root, `home-${++n}`), { log: '', config: { environment: 'staging' }, ...options });
}

async function tokenFile(h: Home, text: string): Promise<string> {
  const f = join(h.root, 'token');
  await writeFile(f, text);
  return f;
}

async function agentRow(agentId: string): Promise<Loose> {
  return gs.server.deps.db.selectFrom('agents').selectAll().where('id', '=', agentId).executeTakeFirst();
}

/** Runs enroll and asserts it failed with `message`, wrote nothing and sent nothing. */
async function refused(h: Home, args: string[], message: RegExp, stdin?: string): Promise<void> {
  const requests = gs.requests.length;
  const r = await runAgent(['--config', h.configPath, 'enroll', ...args], { stdin });
  assert.equal(r.code, 1, describeRun(r));
  assert.equal(r.stdout, '');
  assert.match(r.stderr, message, describeRun(r));
  assert.equal(await exists(join(h.stateDir, 'enrollment.json')), false);
  assert.deepEqual(gs.requests.slice(requests), [], 'a request reached the server');
}

describe('enroll against the real service', () => {
  it('with --token-file: one confirmation line, enrollment.json 0600 with the contract fields, no key printed', async () => {
    const h = await home({ createStateDir: false });
    const r = await runAgent(enrollArgs(h, `${gs.url}/`, await tokenFile(h, `  ${gs.setup.enroll_token}\n\n`)));
    assert.equal(r.code, 0, describeRun(r));
    const m = LINE.exec(r.stdout);
    assert.ok(m, describeRun(r));
    assert.equal(m[2], gs.setup.tenant_id);

    const path = join(h.stateDir, 'enrollment.json');
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    assert.equal((await stat(h.stateDir)).mode & 0o777, 0o750, 'a missing state_dir is created 0750');
    const doc = JSON.parse(await readFile(path, 'utf8')) as Loose;
    assert.deepEqual(Object.keys(doc), ['base_url', 'api_key', 'tenant_id', 'agent_id', 'enrolled_at']);
    assert.equal(doc.base_url, gs.url, 'the trailing slash is dropped');
    assert.equal(doc.agent_id, m[1]);
    assert.equal(doc.tenant_id, gs.setup.tenant_id);
    assert.ok(!Number.isNaN(Date.parse(doc.enrolled_at)));
    assert.ok(!r.stdout.includes(doc.api_key) && !r.stderr.includes(doc.api_key), 'the API key was printed');
    assert.deepEqual(await readdir(h.stateDir), ['enrollment.json'], 'a temp file was left behind');

    // The service recorded this host, its environment tag and the agent version.
    const row = await agentRow(doc.agent_id);
    assert.equal(row.hostname, os.hostname());
    assert.equal(row.environment, 'staging');
    assert.equal(row.agent_version, AGENT_VERSION);
    assert.equal(row.tenant_id, gs.setup.tenant_id);
  });

  it('with --token - (standard input), to http://localhost', async () => {
    const h = await home();
    const url = gs.url.replace('127.0.0.1', 'localhost');
    const r = await runAgent(['--config', h.configPath, 'enroll', '--url', url, '--token', '-'], {
      stdin: `${gs.setup.enroll_token}\n`,
    });
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, LINE);
    const doc = JSON.parse(await readFile(join(h.stateDir, 'enrollment.json'), 'utf8')) as Loose;
    assert.equal(doc.base_url, url);
  });

  it('enrolling again replaces the enrolment atomically and says so', async () => {
    const h = await home();
    const file = await tokenFile(h, gs.setup.enroll_token);
    const first = await runAgent(enrollArgs(h, gs.url, file));
    assert.equal(first.code, 0, describeRun(first));
    const firstId = (LINE.exec(first.stdout) as RegExpExecArray)[1];
    const second = await runAgent(enrollArgs(h, gs.url, file));
    assert.equal(second.code, 0, describeRun(second));
    const secondId = (LINE.exec(second.stdout) as RegExpExecArray)[1];
    assert.notEqual(secondId, firstId);
    assert.match(second.stderr, new RegExp(`replaced the previous enrolment \\(agent_id=${firstId}\\)`));
    const doc = JSON.parse(await readFile(join(h.stateDir, 'enrollment.json'), 'utf8')) as Loose;
    assert.equal(doc.agent_id, secondId);
    assert.equal((await stat(join(h.stateDir, 'enrollment.json'))).mode & 0o777, 0o600);
    assert.deepEqual(await readdir(h.stateDir), ['enrollment.json']);
  });

  it('a bad token: exit 1 with the step, the status and the service message; nothing written', async () => {
    const h = await home();
    const r = await runAgent(enrollArgs(h, gs.url, await tokenFile(h, 'get_not_a_real_token_0000000000')));
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      /^guard-agent: enroll failed: HTTP 401 invalid_enrollment_token: the enrolment token is unknown, expired, revoked or used up$/m,
    );
    assert.doesNotMatch(r.stderr, /retrying/, '401 is not retried');
    assert.equal(await exists(join(h.stateDir, 'enrollment.json')), false);
  });
});

describe('enroll refuses before any request', () => {
  it('an empty token file (whitespace only)', async () => {
    const h = await home();
    await refused(
      h,
      ['--url', gs.url, '--token-file', await tokenFile(h, ' \n\t\n')],
      /token from token file .* is empty/,
    );
  });

  it('an empty standard input', async () => {
    const h = await home();
    await refused(h, ['--url', gs.url, '--token', '-'], /token from standard input is empty/, '');
  });

  it('a token longer than 200 characters', async () => {
    const h = await home();
    await refused(
      h,
      ['--url', gs.url, '--token-file', await tokenFile(h, 'x'.repeat(201))],
      /longer than 200 characters/,
    );
  });

  it('a token with spaces inside', async () => {
    const h = await home();
    await refused(
      h,
      ['--url', gs.url, '--token-file', await tokenFile(h, 'two words')],
      /spaces or control characters/,
    );
  });

  it('a missing token file', async () => {
    const h = await home();
    await refused(
      h,
      ['--url', gs.url, '--token-file', join(h.root, 'nope')],
      /cannot read token file .*nope: no such file/,
    );
  });

  it('a token given on the command line', async () => {
    const h = await home();
    await refused(h, ['--url', gs.url, '--token', 'get_abc'], /--token only takes "-"/);
  });

  it('no token source, or both', async () => {
    const h = await home();
    await refused(h, ['--url', gs.url], /the enrolment token is required/);
    await refused(
      h,
      ['--url', gs.url, '--token', '-', '--token-file', await tokenFile(h, 'x')],
      /either --token-file FILE or --token -, not both/,
      'x',
    );
  });

  it('no --url', async () => {
    const h = await home();
    await refused(h, ['--token-file', await tokenFile(h, 'x')], /required option '--url <base_url>' not specified/);
  });

  it('plain http:// to a host that is not loopback', async () => {
    const h = await home();
    const standIn = await startStandIn(); // would answer, if anything reached it
    try {
      await refused(
        h,
        ['--url', 'http://192.0.2.1:8080', '--token-file', await tokenFile(h, 'get_x')],
        /refusing --url http:\/\/192\.0\.2\.1:8080: plain http:\/\/ is allowed only to a loopback address \(127\.0\.0\.0\/8, ::1, localhost\); use https:\/\//,
      );
      assert.equal(standIn.requests.length, 0);
    } finally {
      await standIn.close();
    }
  });

  it('a URL that is not http(s), or carries credentials, a query or a fragment', async () => {
    const h = await home();
    const f = await tokenFile(h, 'get_x');
    await refused(h, ['--url', 'ftp://127.0.0.1/', '--token-file', f], /must be an https:\/\/ URL/);
    await refused(h, ['--url', 'https://u:p@example.com', '--token-file', f], /must not carry a user name or password/);
    await refused(h, ['--url', 'https://example.com/?a=1', '--token-file', f], /must not have a query or fragment/);
    await refused(h, ['--url', 'not a url', '--token-file', f], /is not a valid absolute URL/);
  });
});

describe('enroll through a proxy', () => {
  it("the config file's proxy.http carries the request, over HTTP_PROXY", async () => {
    const proxy = await startProxy();
    const gone = await startProxy();
    const dead = gone.url;
    await gone.close();
    try {
      const h = await home();
      await writeFile(h.configPath, toYaml({ log_path: h.logPath, state_dir: h.stateDir, proxy: { http: proxy.url } }));
      const r = await runAgent(enrollArgs(h, gs.url, await tokenFile(h, gs.setup.enroll_token)), {
        env: proxyEnv({ http: dead }),
      });
      assert.equal(r.code, 0, describeRun(r));
      assert.deepEqual(proxy.forwarded, [`POST ${new URL(gs.url).host}`]);
    } finally {
      await proxy.close();
    }
  });
});

describe('enroll with a service that is down', () => {
  it('connection errors are retried a few times, then exit 1 naming the step', async () => {
    const standIn = await startStandIn();
    const url = standIn.url;
    await standIn.close();
    const h = await home();
    const r = await runAgent(enrollArgs(h, url, await tokenFile(h, 'get_x')));
    assert.equal(r.code, 1, describeRun(r));
    assert.match(r.stderr, /enroll: connect ECONNREFUSED .*; retrying in/);
    assert.match(r.stderr, /enroll failed: connect ECONNREFUSED .*\(gave up after 4 attempts\)/);
    assert.equal(await exists(join(h.stateDir, 'enrollment.json')), false);
  });
});

describe('enroll checks that it can write state_dir before it sends the token', () => {
  /** Uses of the setup's enrolment token, as the service counts them. */
  async function tokenUses(): Promise<number> {
    const row = await gs.server.deps.db
      .selectFrom('enrollment_tokens')
      .select('uses')
      .where('tenant_id', '=', gs.setup.tenant_id)
      .executeTakeFirstOrThrow();
    return row.uses;
  }

  async function agentCount(): Promise<number> {
    const rows = await gs.server.deps.db
      .selectFrom('agents')
      .select('id')
      .where('tenant_id', '=', gs.setup.tenant_id)
      .execute();
    return rows.length;
  }

  /** Enrols without root's power over file modes (harness.ts UNPRIVILEGED). */
  async function unprivilegedEnroll(h: Home, file: string) {
    const before = { uses: await tokenUses(), agents: await agentCount(), requests: gs.requests.length };
    const r = await runAgent(enrollArgs(h, gs.url, file), { unprivileged: true });
    return { r, before };
  }

  const ADVICE = 'run enroll as the user the agent runs as; nothing was sent to the service';
  const cases: [string, (h: Home) => string, (h: Home) => Promise<void>][] = [
    [
      'a state_dir the user cannot write',
      (h) => `state_dir ${h.stateDir} is not writable by this user (permission denied): ${ADVICE}`,
      (h) => chmod(h.stateDir, 0o555),
    ],
    [
      'a missing state_dir that the user cannot create',
      (h) => `cannot create output directory ${h.stateDir}: permission denied: ${ADVICE}`,
      async (h) => {
        await rm(h.stateDir, { recursive: true });
        await chmod(h.root, 0o555);
      },
    ],
  ];
  for (const [name, message, prepare] of cases) {
    it(`${name}: refused before any request, the token keeps its uses, no agent is created`, async () => {
      const h = await home();
      const file = await tokenFile(h, gs.setup.enroll_token);
      await prepare(h);
      try {
        const { r, before } = await unprivilegedEnroll(h, file);
        assert.equal(r.code, 1, describeRun(r));
        assert.equal(r.stdout, '');
        assert.match(r.stderr, new RegExp(`^guard-agent: cannot enrol: ${esc(message(h))}$`, 'm'), describeRun(r));
        assert.deepEqual(gs.requests.slice(before.requests), [], 'a request reached the server');
        assert.equal(await tokenUses(), before.uses, 'a use of the enrolment token was consumed');
        assert.equal(await agentCount(), before.agents, 'an agent was created on the service');
        assert.equal(await exists(join(h.stateDir, 'enrollment.json')), false);
        if (await exists(h.stateDir)) assert.deepEqual(await readdir(h.stateDir), [], 'a probe file was left behind');
      } finally {
        await chmod(h.root, 0o755);
      }
    });
  }

  it('a state_dir the user owns: the same unprivileged run enrols, leaving only enrollment.json', async () => {
    const h = await home();
    const { r, before } = await unprivilegedEnroll(h, await tokenFile(h, gs.setup.enroll_token));
    assert.equal(r.code, 0, describeRun(r));
    assert.match(r.stdout, LINE);
    assert.equal(await tokenUses(), before.uses + 1);
    assert.deepEqual(await readdir(h.stateDir), ['enrollment.json']);
  });
});

describe('enroll to an https:// URL whose server speaks plain HTTP', () => {
  it('says the server did not speak TLS and how to fix the URL; not retried, nothing written', async () => {
    const h = await home();
    const url = gs.url.replace(/^http:/, 'https:');
    const requests = gs.requests.length;
    const r = await runAgent(enrollArgs(h, url, await tokenFile(h, gs.setup.enroll_token)));
    assert.equal(r.code, 1, describeRun(r));
    assert.equal(r.stdout, '');
    assert.match(
      r.stderr,
      new RegExp(
        `^guard-agent: enroll failed: the server at ${esc(url)} did not speak TLS \\(is the URL's scheme right\\? try ${esc(gs.url)}\\)$`,
        'm',
      ),
      describeRun(r),
    );
    assert.doesNotMatch(
      r.stderr,
      /retrying|wrong version number|EPROTO|openssl/i,
      'not transient: not retried, no raw OpenSSL text',
    );
    assert.equal(r.stderr.split('\n').filter((l) => l !== '').length, 1, 'one line');
    assert.deepEqual(gs.requests.slice(requests), []);
    assert.equal(await exists(join(h.stateDir, 'enrollment.json')), false);
  });
});

describe('the plain-http rule (pure functions)', () => {
  it('loopback is 127.0.0.0/8, ::1 and localhost, in every spelling the URL parser accepts', () => {
    for (const url of [
      'http://127.0.0.1:8080',
      'http://127.1.2.3/',
      'http://127.1/',
      'http://0x7f000001/',
      'http://[::1]:8080/',
      'http://localhost/',
      'http://LOCALHOST:1/',
    ])
      assert.equal(checkTransportUrl(url, 'url').protocol, 'http:', url);
    for (const host of ['127.0.0.1', '127.255.255.255', '[::1]', '::1', 'localhost'])
      assert.ok(isLoopbackHost(host), host);
  });

  it('everything else needs https://', () => {
    for (const url of [
      'http://128.0.0.1/',
      'http://10.0.0.1/',
      'http://[::2]/',
      'http://[::ffff:10.0.0.1]/',
      'http://localhost.example.com/',
      'http://127.0.0.1.nip.io/',
      'http://example.com/',
    ])
      assert.throws(() => checkTransportUrl(url, 'url'), /plain http:\/\/ is allowed only to a loopback address/, url);
    assert.equal(checkTransportUrl('https://example.com/x', 'url').host, 'example.com');
  });

  it('a base URL keeps its path and loses trailing slashes', () => {
    assert.equal(normaliseBaseUrl('https://guard.example.com/', 'u'), 'https://guard.example.com');
    assert.equal(normaliseBaseUrl(' https://example.com/guard// ', 'u'), 'https://example.com/guard');
    assert.equal(normaliseBaseUrl('HTTPS://Example.COM:443/', 'u'), 'https://example.com');
  });
});
