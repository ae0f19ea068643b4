// The single executable (issue 13): built once per source hash (packaging/build/cache.ts),
// then run as an operator runs it on a host without Node.js — PATH holds nothing, the
// environment is empty — on a copy of the sample agent home, against the real guard-server:
// enroll → collect → upload, and the bytes support downloads are the bytes collected. Then
// the agent's own CLI suites run against it (GUARD_AGENT_BIN), so every contract they check
// holds for the executable as for the launcher.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { cp, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AGENT_VERSION, sha256File } from '../../packages/agent/test/harness.ts';
import { apiGet, type GuardServer, type Loose, startGuardServer } from '../../packages/agent/test/upload-harness.ts';
import { ROOT } from '../build/paths.ts';
import { agentExecutable } from './artefacts.ts';

let exe: string;
let tmp: string;

before(async () => {
  exe = await agentExecutable();
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-sea-test-'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Collects a child's output; SIGKILL after `timeoutMs`. (Asynchronous: the server under test runs in this process.) */
function collectRun(child: ReturnType<typeof spawn>, timeoutMs = 120_000): Promise<Run> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  return new Promise((ok, fail) => {
    child.on('error', fail);
    child.on('close', (code) => {
      clearTimeout(timer);
      ok({ code, stdout, stderr });
    });
  });
}

/** Runs the executable with an empty environment and a PATH in which nothing can be found. */
function runBare(args: string[], cwd: string, env: Record<string, string> = {}): Promise<Run> {
  const emptyPath = join(tmp, 'empty-path');
  return collectRun(spawn(exe, args, { cwd, env: { PATH: emptyPath, HOME: tmp, ...env } }));
}

const show = (r: Run) => `exit ${r.code}\n--- stdout ---\n${r.stdout}\n--- stderr ---\n${r.stderr}`;

describe('the single executable on a host without Node.js', () => {
  let gs: GuardServer;
  let home: string;

  before(async () => {
    await mkdir(join(tmp, 'empty-path'));
    home = join(tmp, 'agent-home');
    await cp(join(ROOT, 'examples', 'agent-home'), home, { recursive: true });
    gs = await startGuardServer(join(tmp, 'server-data'));
  });
  after(async () => {
    await gs?.close();
  });

  it('no node is reachable from the environment it runs in', () => {
    const which = spawnSync('/bin/sh', ['-c', 'command -v node || echo none'], {
      env: { PATH: join(tmp, 'empty-path') },
      encoding: 'utf8',
    });
    assert.equal(which.stdout.trim(), 'none');
  });

  it('--version prints the agent version', async () => {
    const r = await runBare(['--version'], tmp);
    assert.equal(r.code, 0, show(r));
    assert.equal(r.stdout, `${AGENT_VERSION}\n`);
  });

  it('enroll, collect and upload the sample home to a real guard-server; support downloads the same bytes', async () => {
    const config = join(home, 'agent.yaml');
    const tokenFile = join(tmp, 'enroll-token');
    await writeFile(tokenFile, `${gs.setup.enroll_token}\n`, { mode: 0o600 });
    const enrolled = await runBare(['--config', config, 'enroll', '--url', gs.url, '--token-file', tokenFile], tmp);
    assert.equal(enrolled.code, 0, show(enrolled));
    assert.equal((await stat(join(home, 'state', 'enrollment.json'))).mode & 0o777, 0o600);

    const collected = await runBare(['--config', config, 'support-bundle', 'collect'], tmp);
    assert.equal(collected.code, 0, show(collected));
    const bundle = collected.stdout.trim();
    assert.match(bundle, new RegExp(`^${join(home, 'state', 'support')}/\\d+\\.tar\\.zst$`));
    assert.match(collected.stderr, /^sha256=[0-9a-f]{64}$/m);
    assert.equal(/^sha256=(.*)$/m.exec(collected.stderr)?.[1], await sha256File(bundle));

    const uploaded = await runBare(['--config', config, 'support-bundle', 'upload', bundle], tmp);
    assert.equal(uploaded.code, 0, show(uploaded));
    const out = Object.fromEntries(
      uploaded.stdout
        .trim()
        .split('\n')
        .map((l) => l.split(/=(.*)/s).slice(0, 2)),
    );
    assert.deepEqual(Object.keys(out), ['bundle_id', 'object_key', 'uploaded_at']);

    const dl = await apiGet(`${gs.url}/v1/support/bundles/${out.bundle_id}/download`, gs.setup.support_token as string);
    assert.equal(dl.status, 200);
    assert.ok(Buffer.from(await dl.arrayBuffer()).equals(await readFile(bundle)), 'downloaded bytes differ');
    const detail = (await (
      await apiGet(`${gs.url}/v1/support/bundles/${out.bundle_id}`, gs.setup.support_token as string)
    ).json()) as Loose;
    assert.equal(detail.manifest.agent_version, AGENT_VERSION);
    assert.equal(detail.manifest.trigger, 'cli');
  });

  it('the host NODE_OPTIONS does not reach it (its V8 flags are its own)', async () => {
    const r = await runBare(['--version'], tmp, { NODE_OPTIONS: '--require /nonexistent/preload.js' });
    assert.equal(r.code, 0, show(r));
  });
});

/**
 * The agent's CLI suites run against GUARD_AGENT_BIN: collect, enroll and upload (proxies,
 * TLS trust through NODE_EXTRA_CA_CERTS, signals, retries: where an executable's environment
 * handling could differ from node's), and the daemon's (its job process is the executable
 * started again, not job.ts forked: SIGTERM mid-collect, SIGKILL, proxies).
 * progress-tty's terminal tests are left to the launcher.
 */
const SUITES = [
  'packages/agent/test/collect.test.ts',
  'packages/agent/test/enroll.test.ts',
  'packages/agent/test/upload.test.ts',
  'packages/agent/test/daemon.test.ts',
];

function nodeTest(args: string[]): Promise<Run> {
  const env: NodeJS.ProcessEnv = { ...process.env, GUARD_AGENT_BIN: exe };
  delete env.NODE_TEST_CONTEXT; // a test runner of its own, not a child reporting to ours
  return collectRun(spawn(process.execPath, ['--test', '--test-reporter=spec', ...args], { cwd: ROOT, env }), 600_000);
}

/**
 * The summary lines of node's spec reporter, then its "failing tests" section: each failure
 * with its assertion (the nested run's describeRun output: the exit, stdout and stderr).
 */
function summary(r: Run): string {
  const lines = r.stdout.split('\n');
  const counts = lines.filter((l) => /^ℹ (tests|pass|fail)/.test(l)).join('\n');
  const failing = r.stdout.lastIndexOf('✖ failing tests:');
  const details = failing < 0 ? lines.filter((l) => l.includes('✖')).join('\n') : r.stdout.slice(failing);
  return `${counts}\n${details.slice(0, 12_000)}`;
}

describe("the agent's CLI suites against the single executable (GUARD_AGENT_BIN)", () => {
  it('the collect, enroll, upload and daemon suites pass', async () => {
    const r = await nodeTest(['--test-concurrency=2', ...SUITES]);
    assert.equal(r.code, 0, `${summary(r)}\n${r.stderr.slice(-2000)}`);
    assert.match(r.stdout, /^ℹ fail 0$/m);
    assert.doesNotMatch(r.stdout, /^ℹ pass 0$/m);
  });
});
