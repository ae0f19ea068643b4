// Integration tests of `guard-agent support-bundle collect --obfuscate`, `collect --preview`
// and `support-bundle reveal --map` (DESIGN §4, bundles, second round). Every test runs the
// real bin/guard-agent in a child process against an agent home built in a temp directory,
// and reads the bundle back with GNU tar.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFile, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BundleManifest } from '@guard/contract';
import { verifyBundle } from '../src/bundle/read-archive.ts';
import {
  BIN,
  childEnv,
  collectArgs,
  describeRun,
  exists,
  extractBundle,
  gzipText,
  type Home,
  listBundle,
  makeHome,
  memberTexts,
  type RunResult,
  runCli,
  TempDirs,
  useCompileCache,
} from './harness.ts';
import { apiGet, enrollArgs, type Loose, runAgent, startGuardServer, uploadArgs } from './upload-harness.ts';

const dirs = new TempDirs();
before(async () => useCompileCache(await dirs.make('node-compile-cache')));
after(() => dirs.cleanup());

const HOST = os.hostname();
/** Whether the machine's name is one obfuscation hides (localhost identifies nothing). */
const HOST_IS_NAME = /[A-Za-z]/.test(HOST) && !/^localhost(\.|$)/i.test(HOST);
/** The values of the four kinds in the fixture logs (the host's real name among them). */
const ORIGINALS = [
  'alice',
  'db7.internal',
  '10.20.30.40',
  '2001:db8::77',
  'bob@example.com',
  'carol',
  '192.0.2.9',
  ...(HOST_IS_NAME ? [HOST] : []),
];
const AGENT_LOG = [
  'time=2026-11-28T05:00:00.000Z level=INFO msg="exec observed" user=alice host=db7.internal peer=10.20.30.40 api_key=sk-live-123',
  `time=2026-11-28T05:00:01.000Z level=WARN msg="login" email=bob@example.com from=2001:db8::77 on ${HOST}`,
  'time=2026-11-28T05:00:02.000Z level=INFO msg="sshd: Accepted publickey for carol from 192.0.2.9 port 22"',
  'time=2026-11-28T05:00:03.000Z level=INFO msg="listening" addr=127.0.0.1:8443',
  '',
].join('\n');
const SEGMENT = [
  'time=2026-11-27T05:00:00.000Z level=INFO msg="old" user=alice peer=10.20.30.40',
  '{"time":"2026-11-27T05:00:01Z","level":"INFO","msg":"json","client_secret":"shh","user":"carol"}',
  '',
].join('\n');

async function fixtureHome(label: string): Promise<Home> {
  return makeHome(await dirs.make(label), {
    log: AGENT_LOG,
    logDirFiles: { 'agent.log.1.gz': gzipText(SEGMENT) },
  });
}

/** Runs bin/guard-agent with `input` on its standard input. */
function runWithInput(args: string[], input: Buffer | string): Promise<RunResult> {
  const t0 = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(BIN, args, { cwd: os.tmpdir(), env: childEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.on('data', (d: Buffer) => err.push(d));
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
        pid: child.pid as number,
        ms: Date.now() - t0,
      }),
    );
    child.stdin.end(input);
  });
}

describe('support-bundle collect --obfuscate', () => {
  it('replaces the four kinds with one token per value in every member and system.json; the map is beside, 0600, not inside', async () => {
    const home = await fixtureHome('obf');
    const out = join(home.root, 'out', 'b.tar.zst');
    const run = await runCli([...collectArgs(home, out), '--obfuscate']);
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.stdout, `${out}\n`);
    const mapPath = `${out}.map.json`;
    assert.match(run.stderr, new RegExp(`^map=${mapPath.replaceAll('.', '\\.')}$`, 'm'));
    assert.equal((await stat(mapPath)).mode & 0o777, 0o600);
    const map: Record<string, string> = JSON.parse(await readFile(mapPath, 'utf8'));

    const names = await listBundle(out);
    assert.deepEqual([...names].sort(), [
      'BUNDLE-MANIFEST.json',
      'agent.log',
      'agent.log.1.gz',
      'config.redacted.json',
      'system.json',
    ]);
    const members = await extractBundle(out, home.root);
    const texts = memberTexts(members);
    for (const [name, text] of texts) {
      assert.ok(!text.includes(JSON.stringify(map).slice(1, 30)), `${name} holds the map`);
      if (name === 'config.redacted.json') continue; // holds paths, no log values
      for (const original of ORIGINALS) assert.ok(!text.includes(original), `${name} still holds ${original}`);
    }
    const log = texts.get('agent.log') as string;
    const segment = texts.get('agent.log.1.gz') as string;
    // Credentials are still masked first; loopback is kept.
    assert.match(log, /api_key=\[REDACTED\]/);
    assert.match(segment, /"client_secret":"\[REDACTED\]"/);
    assert.match(log, /addr=127\.0\.0\.1:8443/);
    // One value, one token, in every member.
    const tokenOf = (original: string) => Object.entries(map).find(([, v]) => v === original)?.[0];
    for (const original of ORIGINALS) assert.ok(tokenOf(original), `no token for ${original}`);
    assert.match(log, new RegExp(`user=${tokenOf('alice')} `));
    assert.match(segment, new RegExp(`user=${tokenOf('alice')} peer=${tokenOf('10.20.30.40')}\\n`));
    assert.match(segment, new RegExp(`"user":"${tokenOf('carol')}"`));
    assert.match(log, new RegExp(`for ${tokenOf('carol')} from ${tokenOf('192.0.2.9')} `));
    if (HOST_IS_NAME) assert.match(log, new RegExp(`on ${tokenOf(HOST)}\\n`));
    for (const token of Object.keys(map)) assert.match(token, /^(host|ip|user|email)-[1-9][0-9]*$/);

    const manifest: BundleManifest = JSON.parse((members.get('BUNDLE-MANIFEST.json') as Buffer).toString());
    assert.deepEqual(manifest.obfuscation, { kinds: ['host', 'ip', 'user', 'email'], values: Object.keys(map).length });
    assert.equal(manifest.redaction.values_masked, 2);
    await verifyBundle(out); // what upload checks before sending

    // reveal: the obfuscated log back to the original (credentials stay masked).
    const revealed = await runWithInput(['support-bundle', 'reveal', '--map', mapPath], log);
    assert.equal(revealed.code, 0, describeRun(revealed));
    assert.equal(revealed.stdout, AGENT_LOG.replace('sk-live-123', '[REDACTED]'));
    assert.equal(revealed.stderr, '');
  });

  it('refuses to overwrite a map already beside the target and writes no bundle', async () => {
    const home = await fixtureHome('obf-exists');
    const out = join(home.root, 'b.tar.zst');
    await writeFile(`${out}.map.json`, '{}');
    const run = await runCli([...collectArgs(home, out), '--obfuscate']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stderr, /refusing to overwrite .*b\.tar\.zst\.map\.json/);
    assert.equal(await exists(out), false);
    assert.equal(await readFile(`${out}.map.json`, 'utf8'), '{}');
  });

  it('without --obfuscate writes no map and no obfuscation field', async () => {
    const home = await fixtureHome('plain');
    const out = join(home.root, 'b.tar.zst');
    const run = await runCli(collectArgs(home, out));
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(await exists(`${out}.map.json`), false);
    const members = await extractBundle(out, home.root);
    const manifest: BundleManifest = JSON.parse((members.get('BUNDLE-MANIFEST.json') as Buffer).toString());
    assert.equal('obfuscation' in manifest, false);
    assert.match(memberTexts(members).get('agent.log') as string, /user=alice host=db7\.internal peer=10\.20\.30\.40/);
  });
});

describe('support-bundle collect --preview', () => {
  it('prints member:line: key for every value collect would mask, and writes nothing', async () => {
    const home = await fixtureHome('preview');
    const run = await runCli(['--config', home.configPath, 'support-bundle', 'collect', '--preview']);
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.stdout, 'agent.log:1: api_key\nagent.log.1.gz:2: client_secret\n');
    assert.equal(await exists(home.supportDir), false);
  });

  it('with --obfuscate also prints the kind of every value it would replace, system.json included', async () => {
    const home = await fixtureHome('preview-obf');
    const run = await runCli(['--config', home.configPath, 'support-bundle', 'collect', '--preview', '--obfuscate']);
    assert.equal(run.code, 0, describeRun(run));
    const logLines = run.stdout.split('\n').filter((l) => !l.startsWith('system.json:'));
    assert.deepEqual(logLines, [
      'agent.log:1: api_key',
      'agent.log:1: user',
      'agent.log:1: host',
      'agent.log:1: ip',
      'agent.log:2: email',
      'agent.log:2: ip',
      ...(HOST_IS_NAME ? ['agent.log:2: host'] : []),
      'agent.log:3: user',
      'agent.log:3: ip',
      'agent.log.1.gz:1: user',
      'agent.log.1.gz:1: ip',
      'agent.log.1.gz:2: client_secret',
      'agent.log.1.gz:2: user',
      '',
    ]);
    for (const l of run.stdout.split('\n').filter((x) => x.startsWith('system.json:')))
      assert.match(l, /^system\.json:\d+: (host|ip|user|email)$/);
    assert.equal(await exists(home.supportDir), false);
  });

  it('refuses --out with --preview', async () => {
    const home = await fixtureHome('preview-out');
    const run = await runCli([...collectArgs(home, join(home.root, 'x.tar.zst')), '--preview']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stderr, /--preview writes no bundle/);
    assert.equal(await exists(join(home.root, 'x.tar.zst')), false);
  });
});

describe('support-bundle reveal', () => {
  it('streams a large input through, replacing whole tokens only', async () => {
    const dir = await dirs.make('reveal');
    const mapPath = join(dir, 'b.tar.zst.map.json');
    await writeFile(mapPath, JSON.stringify({ 'host-1': 'web01', 'ip-12': '10.0.0.12', 'user-1': 'jürgen' }), {
      mode: 0o600,
    });
    const line = 'seen host-1 at ip-12 (not ip-1, nor xhost-1, nor host-10) by user-1\n';
    const input = line.repeat(40_000); // ~2.7 MB: many chunks
    const run = await runWithInput(['support-bundle', 'reveal', '--map', mapPath], input);
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.stdout, 'seen web01 at 10.0.0.12 (not ip-1, nor xhost-1, nor host-10) by jürgen\n'.repeat(40_000));
  });

  it('fails clearly on a missing map, a map that is no map, and without --map', async () => {
    const dir = await dirs.make('reveal-bad');
    const missing = await runWithInput(['support-bundle', 'reveal', '--map', join(dir, 'nope.json')], 'x');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /cannot read the map .*nope\.json: no such file or directory/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ 'api_key=': 'x' }));
    const notMap = await runWithInput(['support-bundle', 'reveal', '--map', bad], 'x');
    assert.equal(notMap.code, 1);
    assert.match(notMap.stderr, /not an obfuscation map: entry "api_key=" is not a token/);
    await writeFile(bad, '[1,2]');
    assert.match((await runWithInput(['support-bundle', 'reveal', '--map', bad], 'x')).stderr, /not a JSON object/);
    const noFlag = await runWithInput(['support-bundle', 'reveal'], 'x');
    assert.equal(noFlag.code, 1);
    assert.match(noFlag.stderr, /--map/);
  });
});

describe('an obfuscated bundle and the real guard-server', () => {
  it('uploads; the service keeps the manifest with its obfuscation field; the map never leaves the host', async () => {
    const gs = await startGuardServer(await dirs.make('obf-server'));
    try {
      const home = await fixtureHome('obf-upload');
      const tokenFile = join(home.root, 'token');
      await writeFile(tokenFile, `${gs.setup.enroll_token}\n`);
      const enrolled = await runAgent(enrollArgs(home, gs.url, tokenFile));
      assert.equal(enrolled.code, 0, describeRun(enrolled));
      const out = join(home.root, 'out', 'b.tar.zst');
      const collected = await runCli([...collectArgs(home, out), '--obfuscate']);
      assert.equal(collected.code, 0, describeRun(collected));
      const before = gs.requests.length;
      const uploaded = await runAgent(uploadArgs(home, out));
      assert.equal(uploaded.code, 0, describeRun(uploaded));
      const id = /^bundle_id=(\S+)$/m.exec(uploaded.stdout)?.[1];
      assert.ok(id, uploaded.stdout);
      // Three calls, the bundle's bytes only: nothing else is sent.
      assert.equal(gs.requests.length - before, 3);
      const detail = await apiGet(`${gs.url}/v1/support/bundles/${id}`, gs.setup.support_token as string);
      assert.equal(detail.status, 200);
      const body = (await detail.json()) as Loose;
      const map = JSON.parse(await readFile(`${out}.map.json`, 'utf8'));
      assert.deepEqual(body.manifest.obfuscation, {
        kinds: ['host', 'ip', 'user', 'email'],
        values: Object.keys(map).length,
      });
      // The manifest the service keeps names no original value (whole words: a short host
      // name may well occur inside a random id).
      const served = JSON.stringify(body.manifest);
      for (const original of ORIGINALS)
        assert.doesNotMatch(
          served,
          new RegExp(`(?<![A-Za-z0-9])${original.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![A-Za-z0-9])`),
        );
    } finally {
      await gs.close();
    }
  });
});
