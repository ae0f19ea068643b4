// Integration tests of `guard-agent support-bundle collect` (spec 1, 2.1, 2.2, 4.1, 7.1, 8;
// DESIGN §3). Every test runs the real bin/guard-agent in a child process against an agent
// home built in a temp directory, and reads the bundle back with GNU tar (and verifyBundle).

import assert from 'node:assert/strict';
import { existsSync, readFileSync, statfsSync } from 'node:fs';
import { chmod, lstat, mkdir, readFile, readlink, stat, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BundleManifest } from '@guard/contract';
import { firstFault } from '@guard/contract/schema-check';
import { SystemInfo } from '@guard/contract/system-info';
import { readBundle, verifyBundle } from '../src/bundle/read-archive.ts';
import {
  AGENT_VERSION,
  bytesRead,
  CAP_BYTES,
  collectArgs,
  describeRun,
  exists,
  extractBundle,
  gunzipText,
  gzipMember,
  gzipText,
  type Home,
  type HomeOptions,
  lineCount,
  listBundle,
  MiB,
  makeCharDevice,
  makeFifo,
  makeHome,
  makeSocket,
  memberTexts,
  parseOsRelease,
  pollFor,
  REDACTION_PATTERN,
  type RunningCli,
  type RunOptions,
  type RunResult,
  runCli,
  searchTexts,
  sha256,
  sha256File,
  slogLine,
  startCli,
  startCliUnderShell,
  straddlingText,
  TempDirs,
  useCompileCache,
  WORK_DIR_PREFIX,
  workDirs,
  writeBigLog,
  writeStoredSegment,
} from './harness.ts';

const dirs = new TempDirs();
before(async () => useCompileCache(await dirs.make('node-compile-cache')));
after(() => dirs.cleanup());

const HOUR = 60 * 60 * 1000;
const BASE_MEMBERS = ['BUNDLE-MANIFEST.json', 'agent.log', 'config.redacted.json', 'system.json'];

interface Collected {
  run: RunResult;
  path: string;
  names: string[];
  members: Map<string, Buffer>;
  /** Members as text, `.gz` ones gunzipped. */
  texts: Map<string, string>;
  /** Members as searched for secrets: raw bytes plus, for `.gz`, a lenient gunzip. */
  search: Map<string, string>;
  manifest: BundleManifest;
}

/** Runs collect, asserts success, and reads the bundle back with GNU tar. */
async function collectOk(home: Home, out?: string, options?: RunOptions): Promise<Collected> {
  const run = await runCli(collectArgs(home, out), options);
  assert.equal(run.code, 0, `collect failed: ${describeRun(run)}`);
  const path = run.stdout.trimEnd();
  const names = await listBundle(path);
  const members = await extractBundle(path, home.root);
  const manifestBytes = members.get('BUNDLE-MANIFEST.json');
  assert.ok(manifestBytes, `no BUNDLE-MANIFEST.json in ${names.join(', ')}`);
  const manifest = JSON.parse(manifestBytes.toString('utf8')) as BundleManifest;
  return { run, path, names, members, texts: memberTexts(members), search: searchTexts(members), manifest };
}

function sorted(values: Iterable<string>): string[] {
  return [...values].sort();
}

/** Asserts that none of `secrets` occurs in any member, raw or gunzipped. */
function assertNoSecrets(bundle: Collected, secrets: string[]): void {
  assert.ok(bundle.search.size > 0);
  for (const [name, text] of bundle.search)
    for (const secret of secrets) assert.ok(!text.includes(secret), `${secret} leaked into ${name}`);
}

/** Asserts that a failed collect left nothing behind: no file at target, no work directory. */
async function assertNothingLeft(target: string, outDir = dirname(target)): Promise<void> {
  assert.equal(await exists(target), false, `a file was left at ${target}`);
  assert.deepEqual(await workDirs(outDir), [], `work directories left in ${outDir}`);
}

function modeOf(s: { mode: number }): string {
  return (s.mode & 0o777).toString(8).padStart(4, '0');
}

// ---------------------------------------------------------------------------------------
// One collect of a typical agent home, checked from every side: output contract, archive,
// manifest, redaction, config.redacted.json and system.json.

describe('collect of a typical agent home', { concurrency: true }, () => {
  const probeStatus = { probe: 'execsnoop', state: 'attached', programs: 4, updated_at: '2026-11-21T09:58:00Z' };
  const logSecrets = ['gk_live_SECRET_A1', 'SECRET B2 with spaces', 'SECRET_C3', 'SECRET_D4', 'SECRET_E5', 'SECRET_F6'];
  const segmentSecrets = ['SEG_SECRET_G7', 'SEG_SECRET_H8'];
  const configSecrets = [
    't_TENANT_9f3',
    'a_AGENT_77c',
    'gk_live_CONFIG_KEY',
    'et_CONFIG_ENROLL',
    'cfg-host-01.internal',
    'h_HOSTID_123',
    'pt_PROBE_TOKEN',
    'cs_LIST_SECRET',
    'nested_api_key_X',
    'rt_REFRESH_DEEP',
  ];
  const agentLogLines = [
    slogLine(
      'INFO',
      'enrolled',
      'base_url=https://guard.example.com api_key=gk_live_SECRET_A1 host=web-01 ip=10.0.0.5',
    ),
    slogLine('WARN', 'upload retry', 'req.client_secret="SECRET B2 with spaces" attempt=2 user=deploy'),
    JSON.stringify({
      time: new Date(Date.now() - 2 * HOUR).toISOString(),
      level: 'ERROR',
      msg: 'probe attach failed',
      probe: { name: 'execsnoop', auth: { refresh_token: 'SECRET_C3', scopes: ['read'] } },
      upstream: [{ session_token: 'SECRET_D4', region: 'eu-west' }],
    }),
    slogLine('INFO', 'enroll', 'enroll_token=SECRET_E5 path=/etc/guard/agent.yaml cmd="guard-agent enroll --url x"'),
    slogLine('INFO', 'heartbeat', 'host=web-01 ip=10.0.0.5 user=deploy token_ttl=300 secret_store=vault'),
    'garbage line {"db_secret": "SECRET_F6", broken',
    // ERROR lines: three within the last 24 h (the JSON one above, these two), two older.
    slogLine('ERROR', 'probe detach failed', 'err="permission denied" pid=1003', 60_000),
    slogLine('ERROR', 'upload failed', 'status=503', 23 * HOUR),
    slogLine('ERROR', 'stale failure', 'status=500', 25 * HOUR),
    JSON.stringify({ time: new Date(Date.now() - 30 * HOUR).toISOString(), level: 'ERROR', msg: 'old' }),
    // Not ERROR level, although the text says ERROR.
    slogLine('WARN', 'ERROR budget at 80%', 'budget=0.8'),
    slogLine('INFO', 'upstream said', 'err="ERROR: boom"'),
  ];
  const agentLogMasked = 6; // one value each: A1, B2, C3, D4, E5, F6
  const segment1Lines = [
    slogLine('INFO', 'enrolled', 'api_key=SEG_SECRET_G7 host=web-02', 48 * HOUR),
    slogLine('INFO', 'heartbeat', 'host=web-02 token_ttl=300', 48 * HOUR),
    JSON.stringify({ level: 'INFO', msg: 'oauth', oauth: { client_secret: 'SEG_SECRET_H8', client_id: 'c1' } }),
    slogLine('INFO', 'heartbeat', 'host=web-02', 48 * HOUR),
  ];
  const segment1Text = `${segment1Lines.join('\n')}\n`;
  const segment1Expected = segment1Text
    .replace('api_key=SEG_SECRET_G7', 'api_key=[REDACTED]')
    .replace('"client_secret":"SEG_SECRET_H8"', '"client_secret":"[REDACTED]"');
  const segment2 = gzipText(`${slogLine('INFO', 'rotated', 'host=web-03 token_ttl=60', 72 * HOUR)}\n`.repeat(50), 6);
  const segment3 = gzipText(`${slogLine('INFO', 'older', 'secret_store=vault', 96 * HOUR)}\n`.repeat(80), 9);
  const segment1 = gzipText(segment1Text);

  const configDoc = {
    environment: 'staging',
    tenant_id: 't_TENANT_9f3',
    agent_id: 'a_AGENT_77c',
    api_key: 'gk_live_CONFIG_KEY',
    enroll_token: 'et_CONFIG_ENROLL',
    hostname: 'cfg-host-01.internal',
    host_id: 'h_HOSTID_123',
    probe: { mode: 'ebpf', ring_buffer_pages: 64, upstream_token: 'pt_PROBE_TOKEN', enabled: true },
    proxy: { https: 'http://proxy.internal:3128', no_proxy: null },
    tags: ['web', 'eu-west'],
    oauth: {
      clients: [
        { name: 'console', client_secret: 'cs_LIST_SECRET', scopes: ['read', 'write'] },
        { name: 'cli', deep: [{ auth: { refresh_token: 'rt_REFRESH_DEEP', ttl: 60 } }] },
      ],
    },
    upstream: { api_key: 'nested_api_key_X', token_ttl: 300, secret_store: 'vault', api_key_file: '/etc/k' },
    limits: { max_mb: 1.5, retries: 0 },
  };

  let home: Home;
  let bundle: Collected;
  let startMs: number;
  let endMs: number;

  before(async () => {
    home = await makeHome(await dirs.make('typical'), {
      log: `${agentLogLines.join('\n')}\n`,
      logDirFiles: { 'agent.log.1.gz': segment1, 'agent.log.2.gz': segment2, 'agent.log.3.gz': segment3 },
      config: configDoc,
      probeStatus,
    });
    startMs = Date.now();
    bundle = await collectOk(home, join(home.root, 'out', 'bundle.tar.zst'));
    endMs = Date.now();
  });

  it('exits 0 and prints exactly the absolute bundle path and a newline on stdout', () => {
    assert.equal(bundle.run.code, 0);
    assert.equal(bundle.run.signal, null);
    assert.equal(bundle.run.stdout, `${join(home.root, 'out', 'bundle.tar.zst')}\n`);
    assert.ok(isAbsolute(bundle.path));
  });

  it('prints sha256=<hex> and size=<bytes> of the bundle file on stderr', async () => {
    const sha = /^sha256=([0-9a-f]{64})$/m.exec(bundle.run.stderr);
    const size = /^size=(\d+)$/m.exec(bundle.run.stderr);
    assert.ok(sha, `no sha256= line in stderr:\n${bundle.run.stderr}`);
    assert.ok(size, `no size= line in stderr:\n${bundle.run.stderr}`);
    assert.equal(sha[1], await sha256File(bundle.path));
    assert.equal(Number(size[1]), (await stat(bundle.path)).size);
  });

  it('draws no progress on stderr when stderr is not a TTY', () => {
    assert.ok(!bundle.run.stderr.includes('\r'), JSON.stringify(bundle.run.stderr));
    assert.ok(!bundle.run.stderr.includes('\x1b'), JSON.stringify(bundle.run.stderr));
  });

  it('holds exactly agent.log, system.json, config.redacted.json, the manifest and the segments (GNU tar)', () => {
    assert.deepEqual(
      sorted(bundle.names),
      sorted([...BASE_MEMBERS, 'agent.log.1.gz', 'agent.log.2.gz', 'agent.log.3.gz']),
    );
  });

  it('verifies against its own manifest', async () => {
    const manifest = await verifyBundle(bundle.path);
    assert.deepEqual(manifest, bundle.manifest);
    const listing = await readBundle(bundle.path);
    assert.equal(listing.members.length, bundle.names.length - 1);
  });

  it('writes a manifest with bundle_version 1, the package agent_version, trigger cli and the generation time', () => {
    const m = bundle.manifest;
    assert.equal(m.bundle_version, 1);
    assert.equal(m.agent_version, AGENT_VERSION);
    assert.equal(m.trigger, 'cli');
    assert.match(m.generated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    const at = Date.parse(m.generated_at);
    assert.ok(at >= startMs - 1000 && at <= endMs, `generated_at ${m.generated_at} outside the run`);
    assert.deepEqual(m.trimmed_segments, []);
    assert.ok(Array.isArray(m.collection_errors));
    assert.deepEqual(m.collection_errors, [], 'every source of this home is readable');
  });

  it('lists every member but the manifest in contents, with the size and SHA-256 stored', () => {
    const listed = bundle.manifest.contents.map((c) => c.name);
    assert.deepEqual(sorted(listed), sorted(bundle.names.filter((n) => n !== 'BUNDLE-MANIFEST.json')));
    for (const entry of bundle.manifest.contents) {
      const bytes = bundle.members.get(entry.name);
      assert.ok(bytes, `${entry.name} missing from the archive`);
      assert.equal(entry.size, bytes.length, `size of ${entry.name}`);
      assert.equal(entry.sha256, sha256(bytes), `sha256 of ${entry.name}`);
    }
  });

  it('records the pattern and the values masked per log member in the manifest', () => {
    const r = bundle.manifest.redaction;
    assert.equal(r.pattern, REDACTION_PATTERN);
    assert.equal(r.members['agent.log'], agentLogMasked);
    assert.equal(r.members['agent.log.1.gz'], 2);
    assert.equal(r.members['agent.log.2.gz'] ?? 0, 0);
    assert.equal(r.members['agent.log.3.gz'] ?? 0, 0);
    const logMembers = ['agent.log', 'agent.log.1.gz', 'agent.log.2.gz', 'agent.log.3.gz'];
    for (const name of Object.keys(r.members)) assert.ok(logMembers.includes(name), `unexpected member ${name}`);
    assert.equal(
      r.values_masked,
      Object.values(r.members).reduce((a, b) => a + b, 0),
    );
    assert.equal(r.values_masked, agentLogMasked + 2);
  });

  it('keeps no planted secret in any member (slog text, dotted group key, JSON at any depth, malformed line)', () => {
    assertNoSecrets(bundle, [...logSecrets, ...segmentSecrets, ...configSecrets]);
  });

  it('masks only the matching values in agent.log and changes nothing else', () => {
    const lines = (bundle.texts.get('agent.log') ?? '').split('\n');
    assert.equal(lines.length, agentLogLines.length + 1);
    assert.equal(lines.at(-1), '');
    assert.match(lines[0], /api_key=("?)\[REDACTED\]\1 host=web-01 ip=10\.0\.0\.5$/);
    assert.ok(lines[0].startsWith(agentLogLines[0].split('api_key=')[0]));
    assert.match(lines[1], /req\.client_secret=("?)\[REDACTED\]\1 attempt=2 user=deploy$/);
    const json = JSON.parse(lines[2]);
    assert.equal(json.probe.auth.refresh_token, '[REDACTED]');
    assert.deepEqual(json.probe.auth.scopes, ['read']);
    assert.equal(json.upstream[0].session_token, '[REDACTED]');
    assert.equal(json.upstream[0].region, 'eu-west');
    assert.match(
      lines[3],
      /enroll_token=("?)\[REDACTED\]\1 path=\/etc\/guard\/agent\.yaml cmd="guard-agent enroll --url x"$/,
    );
    assert.match(lines[5], /"db_secret": *"?\[REDACTED\]/);
    // Lines without a matching key are byte-for-byte unchanged (hostnames, IPs, users too).
    for (const i of [4, 6, 7, 8, 9, 10, 11]) assert.equal(lines[i], agentLogLines[i], `line ${i + 1}`);
    const masks = (bundle.texts.get('agent.log') ?? '').split('[REDACTED]').length - 1;
    assert.equal(masks, agentLogMasked);
  });

  it('stores a segment with nothing to mask byte for byte', () => {
    assert.equal(sha256(bundle.members.get('agent.log.2.gz') as Buffer), sha256(segment2));
    assert.equal(sha256(bundle.members.get('agent.log.3.gz') as Buffer), sha256(segment3));
  });

  it('re-gzips a segment that had secrets into its redacted text, line for line', () => {
    const stored = bundle.members.get('agent.log.1.gz') as Buffer;
    assert.notEqual(sha256(stored), sha256(segment1));
    const text = gunzipText(stored);
    assert.equal(text, segment1Expected);
    assert.equal(lineCount(text), lineCount(segment1Text));
  });

  it('removes identity and credential keys from config.redacted.json at any depth and keeps the rest', () => {
    const config = JSON.parse(bundle.texts.get('config.redacted.json') ?? 'null');
    assert.deepEqual(config, {
      log_path: home.logPath,
      state_dir: home.stateDir,
      environment: 'staging',
      probe: { mode: 'ebpf', ring_buffer_pages: 64, enabled: true },
      proxy: { https: 'http://proxy.internal:3128', no_proxy: null },
      tags: ['web', 'eu-west'],
      oauth: {
        clients: [
          { name: 'console', scopes: ['read', 'write'] },
          { name: 'cli', deep: [{ auth: { ttl: 60 } }] },
        ],
      },
      upstream: { token_ttl: 300, secret_store: 'vault', api_key_file: '/etc/k' },
      limits: { max_mb: 1.5, retries: 0 },
    });
  });

  it('reports the kernel release, distro, eBPF state, probe status and agent version in system.json', () => {
    const system = JSON.parse(bundle.texts.get('system.json') ?? 'null');
    assert.equal(system.kernel.release, os.release());
    const osRelease = parseOsRelease(readFileSync('/etc/os-release', 'utf8'));
    for (const key of ['ID', 'VERSION_ID', 'PRETTY_NAME'])
      if (osRelease[key] !== undefined) assert.equal(system.distro[key], osRelease[key], `distro ${key}`);
    assert.equal(system.ebpf.btf_present, existsSync('/sys/kernel/btf/vmlinux'));
    const unpriv = '/proc/sys/kernel/unprivileged_bpf_disabled';
    if (existsSync(unpriv))
      assert.equal(system.ebpf.unprivileged_bpf_disabled, Number(readFileSync(unpriv, 'utf8').trim()));
    assert.deepEqual(system.ebpf.probe_status, probeStatus);
    assert.equal(system.agent_version, AGENT_VERSION);
  });

  it('counts only ERROR-level lines of the last 24 hours of agent.log in system.json', () => {
    const system = JSON.parse(bundle.texts.get('system.json') ?? 'null');
    assert.equal(system.agent_log.error_lines_last_24h, 3);
  });

  it('adds uptime, memory, the file systems of the log and state directories and time sync to system.json', () => {
    const system = JSON.parse(bundle.texts.get('system.json') ?? 'null');
    assert.equal(firstFault(SystemInfo, system), undefined);
    assert.equal(system.memory.total_bytes, os.totalmem());
    assert.ok(system.uptime.seconds > 0 && Math.abs(system.uptime.seconds - os.uptime()) < 120);
    const fs = statfsSync(home.stateDir);
    assert.equal(system.disk.state_dir.path, home.stateDir);
    assert.equal(system.disk.state_dir.size_bytes, fs.blocks * fs.bsize);
    assert.equal(system.disk.log_dir.path, dirname(home.logPath));
    assert.ok(['systemd-timesyncd', 'chronyd', 'ntpd', null].includes(system.time_sync.source));
    // This probe status is not the daemon's (no detectors list), and no daemon ever spooled here.
    assert.equal(system.detectors, null);
    assert.equal(system.spool, null);
  });
});

// ---------------------------------------------------------------------------------------
// Output path rules (spec 4.1 --out rules, DESIGN §3 collect output)

describe('output path', { concurrency: 2 }, () => {
  let home: Home;
  let root: string;
  before(async () => {
    root = await dirs.make('output');
    home = await makeHome(join(root, 'home'), { log: `${slogLine('INFO', 'hello', 'api_key=OUT_SECRET')}\n` });
  });

  it('defaults to <state_dir>/support/<unix_seconds>.tar.zst, creating each missing level with mode 0750', async () => {
    const base = join(root, 'default');
    await mkdir(base, { mode: 0o755 });
    const h = await makeHome(base, { stateDirName: 'var/lib/guard', createStateDir: false, log: 'x\n' });
    const from = Math.floor(Date.now() / 1000);
    const got = await collectOk(h, undefined);
    const to = Math.floor(Date.now() / 1000);
    const m = /^(.*)\/(\d+)\.tar\.zst$/.exec(got.path);
    assert.ok(m, got.path);
    assert.equal(m[1], join(base, 'var/lib/guard/support'));
    const secs = Number(m[2]);
    assert.ok(secs >= from && secs <= to, `${secs} not within ${from}..${to}`);
    for (const d of ['var', 'var/lib', 'var/lib/guard', 'var/lib/guard/support'])
      assert.equal(modeOf(await stat(join(base, d))), '0750', `mode of ${d}`);
    assert.equal(modeOf(await stat(got.path)), '0600');
    assert.equal(modeOf(await stat(base)), '0755', 'an existing directory is left as it was');
  });

  it('creates every missing parent of --out with mode 0750 and the bundle with mode 0600 under umask 022', async () => {
    const base = join(root, 'umask022');
    await mkdir(base, { mode: 0o755 });
    const target = join(base, 'a/b/c/bundle.tar.zst');
    const got = await collectOk(home, target, { umask: '022' });
    assert.equal(got.path, target);
    for (const d of ['a', 'a/b', 'a/b/c']) assert.equal(modeOf(await stat(join(base, d))), '0750', `mode of ${d}`);
    assert.equal(modeOf(await stat(base)), '0755');
    assert.equal(modeOf(await stat(target)), '0600');
    assert.deepEqual(await workDirs(dirname(target)), []);
  });

  it('gives created directories mode 0750 under a stricter umask (077) as well', async () => {
    const target = join(root, 'umask077/x/y/bundle.tar.zst');
    await collectOk(home, target, { umask: '077' });
    for (const d of ['umask077', 'umask077/x', 'umask077/x/y'])
      assert.equal(modeOf(await stat(join(root, d))), '0750', `mode of ${d}`);
    assert.equal(modeOf(await stat(target)), '0600');
  });

  it('prints a relative --out as an absolute path resolved against the working directory', async () => {
    const cwd = join(root, 'cwd');
    await mkdir(cwd);
    const run = await runCli(collectArgs(home, 'rel/dir/bundle.tar.zst'), { cwd });
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.stdout, `${join(cwd, 'rel/dir/bundle.tar.zst')}\n`);
    await verifyBundle(join(cwd, 'rel/dir/bundle.tar.zst'));
  });

  it('refuses an existing regular file at --out with exit 1 and leaves it unchanged', async () => {
    const dir = join(root, 'exists-file');
    await mkdir(dir);
    const target = join(dir, 'bundle.tar.zst');
    await writeFile(target, 'precious, not a bundle\n', { mode: 0o644 });
    const before = await stat(target);
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.includes(target), `stderr does not name the path: ${run.stderr}`);
    assert.match(run.stderr, /exist/i);
    assert.equal(await readFile(target, 'utf8'), 'precious, not a bundle\n');
    const after = await stat(target);
    assert.equal(after.mtimeMs, before.mtimeMs);
    assert.equal(after.ino, before.ino);
    assert.equal(modeOf(after), '0644');
    assert.deepEqual(await workDirs(dir), []);
  });

  it('refuses a symlink at --out that points to an existing file, touching neither', async () => {
    const dir = join(root, 'exists-link');
    await mkdir(dir);
    const victim = join(root, 'victim.txt');
    await writeFile(victim, 'victim content\n');
    const target = join(dir, 'bundle.tar.zst');
    await symlink(victim, target);
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /exist/i);
    assert.ok((await lstat(target)).isSymbolicLink());
    assert.equal(await readlink(target), victim);
    assert.equal(await readFile(victim, 'utf8'), 'victim content\n');
    assert.deepEqual(await workDirs(dir), []);
  });

  it('refuses a dangling symlink at --out and creates nothing where it points', async () => {
    const dir = join(root, 'dangling-link');
    await mkdir(dir);
    const pointee = join(root, 'dangling-pointee.tar.zst');
    const target = join(dir, 'bundle.tar.zst');
    await symlink(pointee, target);
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.trim() !== '');
    assert.ok((await lstat(target)).isSymbolicLink());
    assert.equal(await readlink(target), pointee);
    assert.equal(await exists(pointee), false, 'collect wrote through the dangling symlink');
    assert.deepEqual(await workDirs(dir), []);
  });

  it('refuses an existing directory at --out', async () => {
    const dir = join(root, 'exists-dir');
    const target = join(dir, 'bundle.tar.zst');
    await mkdir(target, { recursive: true });
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok((await stat(target)).isDirectory());
    assert.deepEqual(await workDirs(dir), []);
    assert.deepEqual(await workDirs(target), []);
  });

  it('fails with exit 1 when a parent of --out is a regular file', async () => {
    const dir = join(root, 'parent-file');
    await mkdir(dir);
    const parent = join(dir, 'not-a-dir');
    await writeFile(parent, 'plain file\n');
    const target = join(parent, 'sub', 'bundle.tar.zst');
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.trim() !== '');
    assert.equal(await readFile(parent, 'utf8'), 'plain file\n');
    assert.equal(await exists(target), false);
    assert.deepEqual(await workDirs(dir), []);
  });
});

// ---------------------------------------------------------------------------------------
// Aborts (spec 1.7, 4.1 rule 4, 7.1): no signal handlers, no file at the target afterwards.

describe('collect ended by a signal', { concurrency: 2 }, () => {
  let root: string;
  let big: Home;
  let small: Home;
  const bigSecrets = ['BIG_SECRET_1', 'BIG_SECRET_2', 'BIG_SECRET_3'];

  before(async () => {
    root = await dirs.make('abort');
    big = await makeHome(join(root, 'big'));
    // 170 MiB of repeated lines (just under the cap), a few secrets at the end.
    const tail = bigSecrets.map((s) => `${slogLine('INFO', 'late', `api_key=${s}`)}\n`).join('');
    await writeBigLog(big.logPath, 170, tail);
    small = await makeHome(join(root, 'small'), { log: `${slogLine('INFO', 'after the abort')}\n` });
  });

  interface KillPoint {
    id: string;
    label: string;
    /** Waits for the moment to kill; returns the work directory seen, if any. */
    wait(run: RunningCli, outDir: string): Promise<string | undefined>;
  }
  const delay = (ms: number) => async (_run: RunningCli, outDir: string) => {
    await new Promise((r) => setTimeout(r, ms));
    return (await workDirs(outDir))[0];
  };
  const points: KillPoint[] = [
    { id: '100ms', label: '100 ms after start', wait: delay(100) },
    { id: '400ms', label: '400 ms after start', wait: delay(400) },
    {
      id: 'workdir',
      label: 'just after its work directory appears',
      wait: async (run, outDir) => {
        const wd = await pollFor(async () => (await workDirs(outDir))[0], { stop: run.exited });
        assert.ok(wd, 'no work directory appeared before collect ended');
        return wd;
      },
    },
    {
      id: 'reading',
      label: 'after it has read 48 MiB of the log',
      wait: async (run, outDir) => {
        const n = await pollFor(
          async () => {
            const b = await bytesRead(run.pid);
            return b !== undefined && b >= 48 * MiB ? b : undefined;
          },
          { stop: run.exited, everyMs: 5 },
        );
        assert.ok(n, 'collect ended before it had read 48 MiB');
        return (await workDirs(outDir))[0];
      },
    },
  ];

  for (const signal of ['SIGKILL', 'SIGTERM', 'SIGINT'] as const) {
    for (const point of points) {
      it(`${signal} ${point.label}: the run ends by ${signal}, no file is at the target, the next collect succeeds and sweeps the work directory`, async () => {
        const outDir = join(root, `out-${signal}-${point.id}`);
        const target = join(outDir, 'bundle.tar.zst');
        const run = startCli(collectArgs(big, target));
        let seen: string | undefined;
        try {
          seen = await point.wait(run, outDir);
          assert.equal(run.exited(), false, 'collect finished before the kill point: make the log bigger');
          run.child.kill(signal);
        } finally {
          if (!run.exited()) run.child.kill(signal); // also when an assertion above failed
        }
        const r = await run.result;
        assert.equal(r.signal, signal, describeRun(r));
        assert.equal(r.code, null);
        assert.equal(r.stdout, '');
        assert.equal(await exists(target), false, 'a file is at the target after the abort');
        if (seen)
          assert.ok(seen.startsWith(`${WORK_DIR_PREFIX}${run.pid}-`), `${seen} is not named after pid ${run.pid}`);

        const next = await runCli(collectArgs(small, target));
        assert.equal(next.code, 0, describeRun(next));
        assert.equal(next.stdout, `${target}\n`);
        await verifyBundle(target);
        assert.deepEqual(await workDirs(outDir), [], 'the dead run’s work directory was not removed');
      });
    }
  }

  // The node process is the grandchild of the calling shell here (sh → inner sh → exec bin →
  // exec node); the inner sh writes its PID before exec'ing, so that PID is node's and only
  // node is signalled. The shell reports 128 + signal number, as spec 7.1 lists.
  for (const [signal, status] of [
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const) {
    it(`a calling shell sees exit status ${status} when the agent is ended by ${signal}`, async () => {
      const outDir = join(root, `shell-${signal}`);
      const target = join(outDir, 'bundle.tar.zst');
      const pidFile = join(root, `shell-${signal}.pid`);
      const run = startCliUnderShell(collectArgs(big, target), pidFile);
      let pid = 0;
      let signalled = false;
      try {
        const wd = await pollFor(async () => (await workDirs(outDir))[0], { stop: run.exited });
        assert.ok(wd, 'no work directory appeared');
        pid = Number((await readFile(pidFile, 'utf8')).trim());
        assert.ok(wd.startsWith(`${WORK_DIR_PREFIX}${pid}-`), `${wd}: the signalled PID ${pid} is not the agent's`);
        process.kill(pid, signal);
        signalled = true;
      } finally {
        if (!signalled && !run.exited()) {
          // An assertion above failed: end the agent (if its PID is known) and its shell.
          if (pid > 0) process.kill(pid, 'SIGKILL');
          run.child.kill('SIGKILL');
        }
      }
      const r = await run.result;
      assert.equal(r.code, 0, describeRun(r));
      assert.match(r.stdout, new RegExp(`^rc=${status}$`, 'm'), describeRun(r));
      assert.equal(await exists(target), false);
    });
  }
});

// ---------------------------------------------------------------------------------------
// Concurrency (spec 4.1 rule 3: O_EXCL, nothing overwritten)

describe('concurrent collects', () => {
  it('of three collects started at once to one --out, exactly one succeeds and leaves a complete bundle', async () => {
    const root = await dirs.make('race');
    const home = await makeHome(root);
    await writeBigLog(home.logPath, 16);
    const target = join(root, 'out', 'missing', 'bundle.tar.zst');
    const runs = [0, 1, 2].map(() => startCli(collectArgs(home, target)));
    const results = await Promise.all(runs.map((r) => r.result));
    const codes = results.map((r) => r.code).sort();
    assert.deepEqual(codes, [0, 1, 1], results.map(describeRun).join('\n'));
    const winner = results.find((r) => r.code === 0) as RunResult;
    assert.equal(winner.stdout, `${target}\n`);
    for (const loser of results.filter((r) => r.code === 1)) {
      assert.equal(loser.stdout, '');
      assert.ok(loser.stderr.includes(target), loser.stderr);
    }
    const sha = /^sha256=([0-9a-f]{64})$/m.exec(winner.stderr)?.[1];
    assert.equal(await sha256File(target), sha);
    const manifest = await verifyBundle(target);
    assert.ok(manifest.contents.some((c) => c.name === 'agent.log'));
    assert.deepEqual(await workDirs(dirname(target)), []);
  });
});

// ---------------------------------------------------------------------------------------
// Size cap (spec 8, 4.1 rule 5, DESIGN §3 manifest)

describe('size cap', () => {
  it('takes segments newest first, names each one that would cross 180 MiB, and still takes an older one that fits', async () => {
    const root = await dirs.make('cap');
    const home = await makeHome(root);
    // agent.log (12 MiB) counts toward the cap: with it, agent.log.10.gz no longer fits.
    // Segment numbers are compared as numbers: taken in name order (1, 10, 11, 2, 3) the
    // outcome would differ.
    await writeBigLog(home.logPath, 12);
    const plan: Record<string, number> = {
      'agent.log.1.gz': 60 * MiB, // 72 MiB so far
      'agent.log.2.gz': 60 * MiB, // 132
      'agent.log.3.gz': 70 * MiB, // would be 202: trimmed
      'agent.log.10.gz': 50 * MiB, // would be 182: trimmed (170 without agent.log)
      'agent.log.11.gz': 20 * MiB, // 152: taken
    };
    const taken = ['agent.log.1.gz', 'agent.log.2.gz', 'agent.log.11.gz'];
    const sizes: Record<string, number> = {};
    await Promise.all(
      Object.entries(plan).map(async ([name, bytes]) => {
        sizes[name] = await writeStoredSegment(join(home.logDir, name), bytes);
      }),
    );
    const run = await runCli(collectArgs(home, join(root, 'out', 'bundle.tar.zst')));
    assert.equal(run.code, 0, describeRun(run));
    const path = run.stdout.trimEnd();
    const manifest = await verifyBundle(path);
    assert.deepEqual(sorted(manifest.trimmed_segments), sorted(['agent.log.3.gz', 'agent.log.10.gz']));
    const names = manifest.contents.map((c) => c.name);
    assert.deepEqual(sorted(names), sorted(['agent.log', 'system.json', 'config.redacted.json', ...taken]));
    const total = manifest.contents.reduce((sum, c) => sum + c.size, 0);
    assert.ok(total <= CAP_BYTES, `contents total ${total} > cap ${CAP_BYTES}`);
    for (const name of taken) {
      const entry = manifest.contents.find((c) => c.name === name);
      assert.equal(entry?.size, sizes[name], `${name} is stored as it is on disk`);
      assert.equal(entry?.sha256, await sha256File(join(home.logDir, name)));
    }
    assert.deepEqual(sorted((await listBundle(path)).filter((n) => n !== 'BUNDLE-MANIFEST.json')), sorted(names));
  });
});

// ---------------------------------------------------------------------------------------
// Sources that are missing or cannot be read (DESIGN §3 members, collection_errors)

describe('missing or unreadable sources', { concurrency: 2 }, () => {
  it('without any agent.log, still builds the bundle and names the log in collection_errors', async () => {
    const home = await makeHome(await dirs.make('nolog'));
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted(BASE_MEMBERS.filter((n) => n !== 'agent.log')));
    const e = got.manifest.collection_errors.find((c) => c.source.includes(home.logPath));
    assert.ok(e, `no collection error for ${home.logPath}: ${JSON.stringify(got.manifest.collection_errors)}`);
    assert.ok(e.message.length > 0);
    assert.ok(!got.manifest.contents.some((c) => c.name === 'agent.log'));
    const system = JSON.parse(got.texts.get('system.json') ?? 'null');
    assert.equal(system.ebpf.probe_status, null, 'no probe status file: null');
  });

  it('leaves out corrupt, truncated, empty and non-gzip segments, records each, and never stores them raw', async () => {
    const truncated = gzipText(`${slogLine('INFO', 'x', 'api_key=TRUNC_SECRET')}\n`.repeat(2000));
    const corrupt = Buffer.concat([
      Buffer.from([0x1f, 0x8b, 0x08, 0x00]),
      Buffer.from('api_key=CORRUPT_SECRET garbage'),
    ]);
    const home = await makeHome(await dirs.make('corrupt'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: {
        'agent.log.1.gz': gzipText(`${slogLine('INFO', 'good', 'api_key=GOOD_SEGMENT_SECRET')}\n`),
        'agent.log.2.gz': corrupt,
        'agent.log.3.gz': Buffer.alloc(0),
        'agent.log.4.gz': truncated.subarray(0, Math.floor(truncated.length / 2)),
        'agent.log.5.gz': Buffer.from(`${slogLine('INFO', 'plain', 'api_key=PLAIN_SECRET')}\n`),
      },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS, 'agent.log.1.gz']));
    for (const bad of ['agent.log.2.gz', 'agent.log.3.gz', 'agent.log.4.gz', 'agent.log.5.gz']) {
      assert.ok(!got.manifest.contents.some((c) => c.name === bad), `${bad} listed in contents`);
      assert.ok(
        got.manifest.collection_errors.some((c) => basename(c.source) === bad && c.message.length > 0),
        `${bad} not in collection_errors: ${JSON.stringify(got.manifest.collection_errors)}`,
      );
    }
    assertNoSecrets(got, ['TRUNC_SECRET', 'CORRUPT_SECRET', 'PLAIN_SECRET', 'GOOD_SEGMENT_SECRET']);
    assert.equal(gunzipText(got.members.get('agent.log.1.gz') as Buffer).includes('api_key=[REDACTED]'), true);
  });

  // Root reads files whatever their mode, so these run the CLI without root's power over
  // file modes (UNPRIVILEGED); only the file under test is closed to it.
  const unprivileged: RunOptions = { unprivileged: true };
  async function unprivilegedHome(label: string, options: HomeOptions): Promise<Home> {
    return makeHome(join(await dirs.make(label), 'home'), options);
  }
  function errorOf(got: Collected, source: string): string | undefined {
    return got.manifest.collection_errors.find((c) => c.source === source)?.message;
  }

  it('leaves out a segment it cannot read (mode 000) and records it', async () => {
    const home = await unprivilegedHome('unreadable-seg', {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: {
        'agent.log.1.gz': gzipText(`${slogLine('INFO', 'readable')}\n`),
        'agent.log.2.gz': gzipText(`${slogLine('INFO', 'locked', 'api_key=LOCKED_SECRET note=LOCKED_MARKER')}\n`),
        'agent.log.3.gz': gzipText(`${slogLine('INFO', 'older and readable')}\n`),
      },
    });
    await chmod(join(home.logDir, 'agent.log.2.gz'), 0o000);
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'), unprivileged);
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS, 'agent.log.1.gz', 'agent.log.3.gz']));
    assert.equal(errorOf(got, join(home.logDir, 'agent.log.2.gz')), 'permission denied');
    assert.deepEqual(got.manifest.trimmed_segments, []);
    assertNoSecrets(got, ['LOCKED_SECRET', 'LOCKED_MARKER']);
    assert.match(got.run.stderr, /^warning: .*agent\.log\.2\.gz: permission denied/m);
  });

  it('leaves out an agent.log it cannot read (mode 000), records it, and still takes the segments', async () => {
    const home = await unprivilegedHome('unreadable-log', {
      log: `${slogLine('ERROR', 'locked log', 'note=LOCKED_LOG_MARKER')}\n`,
      logDirFiles: { 'agent.log.1.gz': gzipText(`${slogLine('INFO', 'readable segment')}\n`) },
    });
    await chmod(home.logPath, 0o000);
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'), unprivileged);
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS.filter((n) => n !== 'agent.log'), 'agent.log.1.gz']));
    assert.equal(errorOf(got, home.logPath), 'permission denied');
    assertNoSecrets(got, ['LOCKED_LOG_MARKER']);
    const system = JSON.parse(got.texts.get('system.json') ?? 'null');
    assert.equal(system.agent_log.error_lines_last_24h, null);
  });

  it('records a log directory it cannot list (mode 0300) and still takes agent.log', async () => {
    const home = await unprivilegedHome('unlistable-dir', {
      log: `${slogLine('INFO', 'current log', 'api_key=LISTED_LOG_SECRET')}\n`,
      logDirFiles: { 'agent.log.1.gz': gzipText(`${slogLine('INFO', 'hidden segment', 'note=UNLISTED_MARKER')}\n`) },
    });
    await chmod(home.logDir, 0o300);
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'), unprivileged);
    assert.deepEqual(sorted(got.names), sorted(BASE_MEMBERS));
    assert.equal(errorOf(got, home.logDir), 'permission denied');
    assert.match(got.texts.get('agent.log') ?? '', /api_key=\[REDACTED\]/);
    assertNoSecrets(got, ['LISTED_LOG_SECRET', 'UNLISTED_MARKER']);
  });

  it('exits 1 naming the config file when it cannot read it (mode 000), and writes nothing', async () => {
    const home = await unprivilegedHome('unreadable-config', { log: `${slogLine('INFO', 'current')}\n` });
    await chmod(home.configPath, 0o000);
    const target = join(home.root, 'out', 'b.tar.zst');
    const run = await runCli(collectArgs(home, target), unprivileged);
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.includes(`cannot read config file ${home.configPath}: permission denied`), run.stderr);
    await assertNothingLeft(target);
  });

  it('ignores files beside the log that are not <log>.<N>.gz segments', async () => {
    const gzLine = (s: string) => gzipText(`${slogLine('INFO', 'stray', `api_key=${s}`)}\n`);
    const home = await makeHome(await dirs.make('stray'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: {
        'agent.log.1.gz': gzipText(`${slogLine('INFO', 'segment')}\n`),
        'agent.log.old': Buffer.from('api_key=STRAY_OLD\n'),
        'agent.log.1': Buffer.from('api_key=STRAY_PLAIN_1\n'),
        'agent.log.x.gz': gzLine('STRAY_X'),
        'agent.log.0.gz': gzLine('STRAY_ZERO'),
        'agent.log.2.gz.tmp': gzLine('STRAY_TMP'),
        'other.log.1.gz': gzLine('STRAY_OTHER'),
      },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS, 'agent.log.1.gz']));
    assert.deepEqual(got.manifest.trimmed_segments, []);
    assert.deepEqual(got.manifest.collection_errors, []);
    assertNoSecrets(got, ['STRAY_OLD', 'STRAY_PLAIN_1', 'STRAY_X', 'STRAY_ZERO', 'STRAY_TMP', 'STRAY_OTHER']);
  });

  it('stores the current log as agent.log whatever its file name, and keeps segment names', async () => {
    const home = await makeHome(await dirs.make('logname'), {
      logName: 'guard.log',
      log: `${slogLine('INFO', 'custom name marker')}\n`,
      logDirFiles: {
        'guard.log.1.gz': gzipText(`${slogLine('INFO', 'custom segment')}\n`),
        'agent.log.1.gz': gzipText(`${slogLine('INFO', 'not ours', 'api_key=NOT_OUR_SEGMENT')}\n`),
      },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS, 'guard.log.1.gz']));
    assert.ok(got.texts.get('agent.log')?.includes('custom name marker'));
    assertNoSecrets(got, ['NOT_OUR_SEGMENT']);
  });
});

// ---------------------------------------------------------------------------------------
// What collect reads (DESIGN §3, contract — what collect reads): every member source is
// opened with O_NOFOLLOW | O_NONBLOCK and must be a regular file by fstat. A symlink, FIFO,
// socket or device is left out, never followed, never waited on, and recorded.

describe('what collect reads', { concurrency: 2 }, () => {
  /** The collection error recorded for `source`, asserting there is one. */
  function errorFor(got: Collected, source: string): string {
    const e = got.manifest.collection_errors.find((c) => c.source === source);
    assert.ok(e, `no collection error for ${source}: ${JSON.stringify(got.manifest.collection_errors)}`);
    return e.message;
  }

  it('run as root, follows neither agent.log -> /etc/shadow nor a segment linked to a private file', async () => {
    const root = await dirs.make('links');
    const privateDir = join(root, 'private');
    await mkdir(privateDir, { mode: 0o700 });
    const privateFile = join(privateDir, 'secret.gz');
    await writeFile(privateFile, gzipText('note=PRIVATE_FILE_MARKER owner=root\n'), { mode: 0o600 });
    const home = await makeHome(join(root, 'home'), {
      logDirFiles: { 'agent.log.2.gz': gzipText(`${slogLine('INFO', 'ordinary segment')}\n`) },
    });
    await symlink('/etc/shadow', home.logPath);
    await symlink(privateFile, join(home.logDir, 'agent.log.1.gz'));
    const shadowHead = (await readFile('/etc/shadow', 'utf8')).split('\n')[0];
    assert.ok(shadowHead.length > 0);

    const got = await collectOk(home, join(root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS.filter((n) => n !== 'agent.log'), 'agent.log.2.gz']));
    assert.match(errorFor(got, home.logPath), /^left out: a symbolic link; collect never follows links/);
    assert.match(
      errorFor(got, join(home.logDir, 'agent.log.1.gz')),
      /^left out: a symbolic link; collect never follows links/,
    );
    assertNoSecrets(got, [shadowHead, 'PRIVATE_FILE_MARKER']);
    assert.deepEqual(got.manifest.trimmed_segments, []);
    assert.match(got.run.stderr, /^warning: .*agent\.log: left out: a symbolic link/m);
  });

  it('leaves out a dangling symlink segment and records it instead of skipping it silently', async () => {
    const home = await makeHome(await dirs.make('dangling-seg'), { log: `${slogLine('INFO', 'current')}\n` });
    await symlink(join(home.root, 'nowhere.gz'), join(home.logDir, 'agent.log.1.gz'));
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(sorted(got.names), sorted(BASE_MEMBERS));
    assert.match(errorFor(got, join(home.logDir, 'agent.log.1.gz')), /^left out: a symbolic link/);
  });

  it('does not hang on a FIFO as agent.log or as a segment, and leaves out sockets, devices and directories', async () => {
    const home = await makeHome(await dirs.make('special'), {
      logDirFiles: { 'agent.log.5.gz': gzipText(`${slogLine('INFO', 'regular segment', 'api_key=REG_SECRET')}\n`) },
    });
    await makeFifo(home.logPath);
    await makeFifo(join(home.logDir, 'agent.log.1.gz'));
    const server = await makeSocket(join(home.logDir, 'agent.log.2.gz'));
    try {
      await makeCharDevice(join(home.logDir, 'agent.log.3.gz'));
      await mkdir(join(home.logDir, 'agent.log.4.gz'));
      // A FIFO with no writer blocks a plain open() for ever: the test's own timeout bounds this.
      const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'), { timeoutMs: 60_000 });
      await verifyBundle(got.path);
      assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS.filter((n) => n !== 'agent.log'), 'agent.log.5.gz']));
      assert.match(errorFor(got, home.logPath), /^left out: not a regular file \(a FIFO\)/);
      assert.match(errorFor(got, join(home.logDir, 'agent.log.1.gz')), /^left out: not a regular file \(a FIFO\)/);
      assert.match(errorFor(got, join(home.logDir, 'agent.log.2.gz')), /^left out: not a regular file \(a socket\)/);
      assert.match(
        errorFor(got, join(home.logDir, 'agent.log.3.gz')),
        /^left out: not a regular file \(a character device\)/,
      );
      assert.match(errorFor(got, join(home.logDir, 'agent.log.4.gz')), /^left out: not a regular file \(a directory\)/);
      assert.equal(got.manifest.redaction.members['agent.log.5.gz'], 1);
      assertNoSecrets(got, ['REG_SECRET']);
      const system = JSON.parse(got.texts.get('system.json') ?? 'null');
      assert.equal(system.agent_log.error_lines_last_24h, null);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('follows symlinked directories above the log and the config (the operator’s layout)', async () => {
    const root = await dirs.make('dirlinks');
    const real = await makeHome(join(root, 'real'), {
      log: `${slogLine('INFO', 'through a linked dir', 'api_key=DIR_LINK_SECRET')}\n`,
      logDirFiles: { 'agent.log.1.gz': gzipText(`${slogLine('INFO', 'linked dir segment')}\n`) },
    });
    await symlink(real.logDir, join(root, 'logs'));
    await symlink(real.root, join(root, 'etc'));
    await writeFile(
      real.configPath,
      `log_path: ${join(root, 'logs', 'agent.log')}\nstate_dir: ${real.stateDir}\nenvironment: linked\n`,
    );
    const home = { ...real, configPath: join(root, 'etc', 'agent.yaml') };
    const got = await collectOk(home, join(root, 'out', 'b.tar.zst'));
    assert.deepEqual(sorted(got.names), sorted([...BASE_MEMBERS, 'agent.log.1.gz']));
    assert.deepEqual(got.manifest.collection_errors, []);
    assert.match(got.texts.get('agent.log') ?? '', /through a linked dir.*api_key=\[REDACTED\]/);
    assert.equal(JSON.parse(got.texts.get('config.redacted.json') ?? 'null').environment, 'linked');
  });

  it('does not read a config file that is a symlink: config.redacted.json is left out, recorded, and the defaults apply', async () => {
    const root = await dirs.make('cfglink');
    const home = await makeHome(join(root, 'home'), {
      log: `${slogLine('INFO', 'LINKED_CONFIG_LOG_MARKER')}\n`,
      config: { environment: 'LINKED_CONFIG_ENV_MARKER' },
    });
    const linked = { ...home, configPath: join(root, 'agent.yaml') };
    await symlink(home.configPath, linked.configPath);
    const got = await collectOk(linked, join(root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.ok(!got.names.includes('config.redacted.json'), got.names.join(', '));
    assert.match(errorFor(got, linked.configPath), /^left out: a symbolic link; collect never follows links.*defaults/);
    // The log the linked config names was not read: log_path took its default.
    assertNoSecrets(got, ['LINKED_CONFIG_LOG_MARKER', 'LINKED_CONFIG_ENV_MARKER']);
    assert.ok(!got.manifest.collection_errors.some((c) => c.source === home.logPath));
  });

  it('does not hang on a config file that is a FIFO: left out, recorded, defaults apply', async () => {
    const root = await dirs.make('cfgfifo');
    const configPath = join(root, 'agent.yaml');
    await makeFifo(configPath);
    const target = join(root, 'out', 'b.tar.zst');
    const run = await runCli(['--config', configPath, 'support-bundle', 'collect', '--out', target], {
      timeoutMs: 60_000,
    });
    assert.equal(run.code, 0, describeRun(run));
    const manifest = await verifyBundle(target);
    assert.ok(!manifest.contents.some((c) => c.name === 'config.redacted.json'));
    const e = manifest.collection_errors.find((c) => c.source === configPath);
    assert.match(e?.message ?? '', /^left out: not a regular file \(a FIFO\)/);
  });
});

// ---------------------------------------------------------------------------------------
// Config (DESIGN §3 invocation and config file; spec 1.6)

describe('config', { concurrency: 2 }, () => {
  it('exits 1 naming the file when --config names a missing file', async () => {
    const root = await dirs.make('nocfg');
    const missing = join(root, 'does-not-exist.yaml');
    const run = await runCli(['--config', missing, 'support-bundle', 'collect', '--out', join(root, 'b.tar.zst')]);
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.includes(missing), run.stderr);
    await assertNothingLeft(join(root, 'b.tar.zst'));
  });

  it('exits 1 with a message when the config is not valid YAML', async () => {
    const home = await makeHome(await dirs.make('badyaml'), {
      configText: 'log_path: [unclosed\nstate_dir: : :\n  - x\n',
      log: 'x\n',
    });
    const target = join(home.root, 'out', 'b.tar.zst');
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.includes(home.configPath), run.stderr);
    await assertNothingLeft(target);
  });

  it('collects on an agent that was never enrolled (no enrollment.json)', async () => {
    const home = await makeHome(await dirs.make('unenrolled'), { log: `${slogLine('INFO', 'fresh agent')}\n` });
    assert.equal(existsSync(join(home.stateDir, 'enrollment.json')), false);
    const got = await collectOk(home, undefined);
    await verifyBundle(got.path);
    assert.equal(dirname(got.path), home.supportDir);
  });

  it('keeps the enrolment credentials of an enrolled agent out of the bundle', async () => {
    const home = await makeHome(await dirs.make('enrolled'), { log: `${slogLine('INFO', 'enrolled agent')}\n` });
    await writeFile(
      join(home.stateDir, 'enrollment.json'),
      JSON.stringify({
        base_url: 'https://guard.example.com',
        api_key: 'gk_ENROLLED_SECRET',
        tenant_id: 't_ENROLLED',
        agent_id: 'a_ENROLLED',
      }),
      { mode: 0o600 },
    );
    const got = await collectOk(home, undefined);
    assertNoSecrets(got, ['gk_ENROLLED_SECRET', 't_ENROLLED', 'a_ENROLLED']);
  });

  it('reads no GUARD_* environment variable', async () => {
    const root = await dirs.make('env');
    const home = await makeHome(join(root, 'home'), { log: `${slogLine('INFO', 'CONFIG_LOG_MARKER')}\n` });
    const decoy = await makeHome(join(root, 'decoy'), { log: `${slogLine('INFO', 'ENV_LOG_MARKER')}\n` });
    const env = {
      GUARD_LOG_PATH: decoy.logPath,
      GUARD_STATE_DIR: decoy.stateDir,
      GUARD_CONFIG: decoy.configPath,
      GUARD_OUT: join(decoy.root, 'env-out.tar.zst'),
      GUARD_API_KEY: 'gk_ENV_SECRET',
      GUARD_TENANT_ID: 't_ENV',
    };
    const got = await collectOk(home, undefined, { env });
    assert.equal(dirname(got.path), home.supportDir);
    assert.ok(got.texts.get('agent.log')?.includes('CONFIG_LOG_MARKER'));
    assertNoSecrets(got, ['ENV_LOG_MARKER', 'gk_ENV_SECRET', 't_ENV']);
    assert.equal(existsSync(decoy.supportDir), false);
    assert.equal(existsSync(join(decoy.root, 'env-out.tar.zst')), false);
    const config = JSON.parse(got.texts.get('config.redacted.json') ?? 'null');
    assert.equal(config.log_path, home.logPath);
    assert.equal(config.state_dir, home.stateDir);
  });
});

// ---------------------------------------------------------------------------------------
// Command line surface

describe('command line', { concurrency: 2 }, () => {
  it('--help exits 0 and shows the usage', async () => {
    const run = await runCli(['--help']);
    assert.equal(run.code, 0, describeRun(run));
    assert.match(run.stdout, /support-bundle/);
    assert.match(run.stdout, /--config/);
  });

  it('--version exits 0 and prints the package version', async () => {
    const run = await runCli(['--version']);
    assert.equal(run.code, 0, describeRun(run));
    assert.equal(run.stdout.trim(), AGENT_VERSION);
  });

  it('support-bundle collect --help exits 0 and documents --out', async () => {
    const run = await runCli(['support-bundle', 'collect', '--help']);
    assert.equal(run.code, 0, describeRun(run));
    assert.match(run.stdout, /--out/);
  });

  it('an unknown command exits 1 with a message on stderr', async () => {
    const run = await runCli(['frobnicate']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stderr, /frobnicate/);
  });

  it('an unknown support-bundle subcommand exits 1 with a message on stderr', async () => {
    const run = await runCli(['support-bundle', 'frobnicate']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stderr, /frobnicate/);
  });

  it('an unknown option exits 1 with a message on stderr and writes nothing', async () => {
    const home = await makeHome(await dirs.make('badopt'), { log: 'x\n' });
    const run = await runCli([...collectArgs(home), '--bogus']);
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /--bogus/);
    assert.equal(existsSync(home.supportDir), false);
  });

  it('--out without a value exits 1 with a message on stderr', async () => {
    const home = await makeHome(await dirs.make('noval'), { log: 'x\n' });
    const run = await runCli([...collectArgs(home), '--out']);
    assert.equal(run.code, 1, describeRun(run));
    assert.match(run.stderr, /--out/);
  });
});

// ---------------------------------------------------------------------------------------
// Redaction edge cases: read boundaries, gzip framing, lines too long to scan

describe('redaction edge cases', { concurrency: 2 }, () => {
  it('masks secrets whose key or value straddles a 1 MiB read boundary', async () => {
    const keyLine = slogLine('INFO', 'split key', 'api_key=STRADDLE_KEY_SECRET host=web-01');
    const valueLine = slogLine('INFO', 'split value', 'session_token=STRADDLE_VALUE_SECRET host=web-01');
    const jsonLine = JSON.stringify({
      level: 'INFO',
      msg: 'split json',
      oauth: { client_secret: 'STRADDLE_JSON_SECRET' },
    });
    const log = straddlingText(MiB, keyLine, keyLine.indexOf('api_key') + 3);
    const seg1 = straddlingText(MiB, valueLine, valueLine.indexOf('STRADDLE') + 4);
    const seg2 = straddlingText(MiB, jsonLine, jsonLine.indexOf('client_secret') + 5);
    const home = await makeHome(await dirs.make('straddle'), {
      log,
      logDirFiles: { 'agent.log.1.gz': gzipText(seg1), 'agent.log.2.gz': gzipText(seg2) },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assertNoSecrets(got, ['STRADDLE_KEY_SECRET', 'STRADDLE_VALUE_SECRET', 'STRADDLE_JSON_SECRET']);
    assert.deepEqual(got.manifest.redaction.members, { 'agent.log': 1, 'agent.log.1.gz': 1, 'agent.log.2.gz': 1 });
    assert.equal(lineCount(got.texts.get('agent.log') ?? ''), lineCount(log));
    assert.equal(lineCount(got.texts.get('agent.log.1.gz') ?? ''), lineCount(seg1));
    assert.equal(lineCount(got.texts.get('agent.log.2.gz') ?? ''), lineCount(seg2));
  });

  it('scans every member of a multi-member gzip segment, and never stores plain text appended to a gzip segment', async () => {
    const multi = Buffer.concat([
      gzipText(`${slogLine('INFO', 'first member')}\n`),
      gzipText(`${slogLine('INFO', 'second member', 'api_key=MULTI_MEMBER_SECRET')}\n`),
    ]);
    const trailing = Buffer.concat([
      gzipText(`${slogLine('INFO', 'first member')}\n`),
      Buffer.from(`${slogLine('INFO', 'appended plain text', 'api_key=TRAILING_PLAIN_SECRET')}\n`),
    ]);
    const home = await makeHome(await dirs.make('multigz'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: { 'agent.log.1.gz': multi, 'agent.log.2.gz': trailing },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assertNoSecrets(got, ['MULTI_MEMBER_SECRET', 'TRAILING_PLAIN_SECRET']);
    const text = got.texts.get('agent.log.1.gz') ?? '';
    assert.match(text, /first member/);
    assert.match(text, /second member.*api_key=\[REDACTED\]/);
    assert.equal(got.manifest.redaction.members['agent.log.1.gz'], 1);
  });

  it('never stores a secret of a 5 MiB single line without a newline', async () => {
    const half = 'x'.repeat(Math.floor(2.5 * MiB));
    const line = `time=2026-11-21T08:00:00Z level=INFO msg="blob" api_key=LONG_HEAD_SECRET data=${half} api_key=LONG_MID_SECRET ${half} api_key=LONG_TAIL_SECRET`;
    assert.ok(line.length > 5 * MiB);
    const home = await makeHome(await dirs.make('longline'), {
      log: line,
      logDirFiles: { 'agent.log.1.gz': gzipText(`${slogLine('INFO', 'before')}\n${line}`) },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assertNoSecrets(got, ['LONG_HEAD_SECRET', 'LONG_MID_SECRET', 'LONG_TAIL_SECRET']);
  });
});

// A segment is archived byte for byte only when it is nothing but well-formed gzip members
// (RFC 1952) whose headers carry no name, comment or extra field, with no bytes after the
// last member, and nothing in it needed masking; anything else is rebuilt from its redacted
// content, or left out when part of it is not gzip data.
describe('segments copied byte for byte only when clean gzip', { concurrency: 2 }, () => {
  const line = (msg: string, attrs = '') => `${slogLine('INFO', msg, attrs, 48 * HOUR)}\n`;
  /** RFC 1952 FLG bits that can carry text: FEXTRA, FNAME, FCOMMENT. */
  const TEXT_FLAGS = 0x04 | 0x08 | 0x10;
  /** Asserts `stored` is one clean gzip member (no text-bearing header field, no trailing bytes) holding `text`. */
  function assertCleanMember(stored: Buffer, text: string, name: string): void {
    assert.deepEqual([...stored.subarray(0, 3)], [0x1f, 0x8b, 0x08], `${name}: not a gzip member`);
    assert.equal(stored[3] & TEXT_FLAGS, 0, `${name}: header flags ${stored[3].toString(2)}`);
    assert.equal(gunzipText(stored), text, `${name}: content`);
    // The member ends the file: its last four bytes are ISIZE, the content length mod 2^32.
    assert.equal(stored.readUInt32LE(stored.length - 4), Buffer.byteLength(text), `${name}: trailing bytes`);
  }

  it('leaves out a segment holding plain text after zero bytes after its gzip member, and records it', async () => {
    const padded = Buffer.concat([
      gzipText(line('before the padding')),
      Buffer.alloc(512),
      Buffer.from(line('appended after the padding', 'api_key=ZERO_PADDED_SECRET')),
    ]);
    const garbage = Buffer.concat([gzipText(line('first')), Buffer.from('\x00\x01api_key=BINARY_TAIL_SECRET\n')]);
    const home = await makeHome(await dirs.make('trailing'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: { 'agent.log.1.gz': padded, 'agent.log.2.gz': garbage },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.deepEqual(sorted(got.names), sorted(BASE_MEMBERS));
    assertNoSecrets(got, ['ZERO_PADDED_SECRET', 'BINARY_TAIL_SECRET']);
    for (const name of ['agent.log.1.gz', 'agent.log.2.gz']) {
      const e = got.manifest.collection_errors.find((c) => c.source === join(home.logDir, name));
      assert.match(
        e?.message ?? '',
        /bytes after the last gzip member/,
        JSON.stringify(got.manifest.collection_errors),
      );
    }
  });

  it('rebuilds a segment padded with zero bytes after its last member, without the padding', async () => {
    const text = line('padded segment', 'host=web-01');
    const home = await makeHome(await dirs.make('zeropad'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: { 'agent.log.1.gz': Buffer.concat([gzipText(text), Buffer.alloc(4096)]) },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(got.manifest.collection_errors, []);
    assertCleanMember(got.members.get('agent.log.1.gz') as Buffer, text, 'agent.log.1.gz');
    assert.equal(got.manifest.redaction.members['agent.log.1.gz'], 0);
  });

  it('rebuilds a segment whose gzip header carries a name, comment or extra field holding api_key=', async () => {
    const [first, second] = [line('clean first member'), line('commented second member')];
    const texts = {
      'agent.log.1.gz': line('named member'),
      'agent.log.2.gz': line('commented member'),
      'agent.log.3.gz': line('extra field member'),
      'agent.log.4.gz': first + second,
    };
    const home = await makeHome(await dirs.make('fname'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: {
        'agent.log.1.gz': gzipMember(texts['agent.log.1.gz'], { name: 'api_key=FNAME_SECRET' }),
        'agent.log.2.gz': gzipMember(texts['agent.log.2.gz'], { comment: 'api_key=FCOMMENT_SECRET' }),
        'agent.log.3.gz': gzipMember(texts['agent.log.3.gz'], { extra: Buffer.from('api_key=FEXTRA_SECRET') }),
        'agent.log.4.gz': Buffer.concat([
          gzipMember(first),
          gzipMember(second, { comment: 'api_key=SECOND_COMMENT_SECRET', headerCrc: true }),
        ]),
      },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assert.deepEqual(got.manifest.collection_errors, []);
    assertNoSecrets(got, ['FNAME_SECRET', 'FCOMMENT_SECRET', 'FEXTRA_SECRET', 'SECOND_COMMENT_SECRET']);
    for (const [name, text] of Object.entries(texts)) {
      assertCleanMember(got.members.get(name) as Buffer, text, name);
      assert.equal(got.manifest.redaction.members[name], 0, name);
    }
  });

  it('copies byte for byte a clean multi-member segment and one with a header CRC', async () => {
    const multi = Buffer.concat([gzipMember(line('one')), gzipText(line('two')), gzipMember(line('three'))]);
    const hcrc = gzipMember(line('with a header crc'), { headerCrc: true });
    const home = await makeHome(await dirs.make('clean-multi'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: { 'agent.log.1.gz': multi, 'agent.log.2.gz': hcrc },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(got.manifest.collection_errors, []);
    assert.equal(sha256(got.members.get('agent.log.1.gz') as Buffer), sha256(multi));
    assert.equal(sha256(got.members.get('agent.log.2.gz') as Buffer), sha256(hcrc));
  });

  it('rebuilds a multi-member segment with a secret in a later member into one clean member', async () => {
    const texts = [line('one'), line('two', 'api_key=LATER_MEMBER_SECRET'), line('three')];
    const home = await makeHome(await dirs.make('later-secret'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: { 'agent.log.1.gz': Buffer.concat(texts.map((t) => gzipMember(t))) },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assertNoSecrets(got, ['LATER_MEMBER_SECRET']);
    assertCleanMember(
      got.members.get('agent.log.1.gz') as Buffer,
      texts.join('').replace('LATER_MEMBER_SECRET', '[REDACTED]'),
      'agent.log.1.gz',
    );
    assert.equal(got.manifest.redaction.members['agent.log.1.gz'], 1);
  });

  it('leaves out a segment with a wrong CRC32, a wrong header CRC or reserved header flags', async () => {
    const text = line('damaged', 'api_key=DAMAGED_SECRET');
    const badHcrc = gzipMember(text, { headerCrc: true });
    badHcrc[10] ^= 0xff; // the header CRC16 follows the 10 fixed header bytes
    const reserved = gzipMember(text);
    reserved[3] |= 0x20;
    const home = await makeHome(await dirs.make('damaged'), {
      log: `${slogLine('INFO', 'current')}\n`,
      logDirFiles: {
        'agent.log.1.gz': gzipMember(text, {}, 0x12345678),
        'agent.log.2.gz': badHcrc,
        'agent.log.3.gz': reserved,
      },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assert.deepEqual(sorted(got.names), sorted(BASE_MEMBERS));
    assertNoSecrets(got, ['DAMAGED_SECRET']);
    for (const name of ['agent.log.1.gz', 'agent.log.2.gz', 'agent.log.3.gz'])
      assert.ok(
        got.manifest.collection_errors.some((c) => c.source === join(home.logDir, name)),
        `${name}: ${JSON.stringify(got.manifest.collection_errors)}`,
      );
  });
});

// redaction.extra_keys in agent.yaml: keys masked on top of the contract pattern, in every
// log member, and listed in the manifest's redaction block.
describe('redaction.extra_keys', { concurrency: 2 }, () => {
  const extraKeys = ['password', 'authorization', 'aws_secret_access_key', '^x-.*-key$'];
  const logLines = [
    slogLine('INFO', 'db connect', 'user=app password=HUNTER2_PW host=db-01'),
    slogLine('INFO', 'outbound', 'req.headers.authorization="Bearer BEARER_TOKEN_VALUE" status=200'),
    JSON.stringify({ level: 'INFO', msg: 's3', aws: { aws_secret_access_key: 'AWS_SECRET_VALUE', region: 'eu' } }),
    slogLine('INFO', 'custom header', 'x-tenant-key=CUSTOM_HEADER_KEY x-trace=keep-me'),
    slogLine('INFO', 'contract key still masked', 'api_key=CONTRACT_KEY_VALUE'),
  ];
  const segmentLine = slogLine('INFO', 'old', 'Password=SEGMENT_PW user=bob', 48 * HOUR);
  const cleanSegment = gzipText(`${slogLine('INFO', 'nothing to mask', 'user=bob', 72 * HOUR)}\n`);
  const secrets = [
    'HUNTER2_PW',
    'BEARER_TOKEN_VALUE',
    'AWS_SECRET_VALUE',
    'CUSTOM_HEADER_KEY',
    'CONTRACT_KEY_VALUE',
    'SEGMENT_PW',
  ];
  const files = () => ({
    log: `${logLines.join('\n')}\n`,
    logDirFiles: { 'agent.log.1.gz': gzipText(`${segmentLine}\n`), 'agent.log.2.gz': cleanSegment },
  });

  it('masks the extra keys in agent.log and in segments, and lists them in the manifest', async () => {
    const home = await makeHome(await dirs.make('extra-keys'), {
      ...files(),
      config: { redaction: { extra_keys: extraKeys } },
    });
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    await verifyBundle(got.path);
    assertNoSecrets(got, secrets);
    const r = got.manifest.redaction;
    assert.equal(r.pattern, REDACTION_PATTERN);
    assert.deepEqual(r.extra_keys, extraKeys);
    assert.deepEqual(r.members, { 'agent.log': 5, 'agent.log.1.gz': 1, 'agent.log.2.gz': 0 });
    assert.equal(r.values_masked, 6);
    const log = got.texts.get('agent.log') ?? '';
    assert.match(log, /password=\[REDACTED\] host=db-01/);
    assert.match(log, /x-trace=keep-me/);
    assert.match(got.texts.get('agent.log.1.gz') ?? '', /Password=\[REDACTED\] user=bob/);
    assert.equal(sha256(got.members.get('agent.log.2.gz') as Buffer), sha256(cleanSegment));
  });

  it('without extra_keys, masks the contract pattern only: password= and Authorization stay, no extra_keys field', async () => {
    const home = await makeHome(await dirs.make('no-extra-keys'), files());
    const got = await collectOk(home, join(home.root, 'out', 'b.tar.zst'));
    assertNoSecrets(got, ['CONTRACT_KEY_VALUE']);
    const log = got.texts.get('agent.log') ?? '';
    for (const kept of ['HUNTER2_PW', 'BEARER_TOKEN_VALUE', 'AWS_SECRET_VALUE', 'CUSTOM_HEADER_KEY'])
      assert.ok(log.includes(kept), `${kept} was masked without extra_keys`);
    assert.deepEqual(Object.keys(got.manifest.redaction), ['pattern', 'values_masked', 'members']);
    assert.equal(got.manifest.redaction.values_masked, 1);
  });

  it('exits 1 naming the file and the entry for an invalid extra key, and writes nothing', async () => {
    const home = await makeHome(await dirs.make('bad-extra-keys'), {
      ...files(),
      config: { redaction: { extra_keys: ['password', '^(broken$'] } },
    });
    const target = join(home.root, 'out', 'b.tar.zst');
    const run = await runCli(collectArgs(home, target));
    assert.equal(run.code, 1, describeRun(run));
    assert.equal(run.stdout, '');
    assert.ok(run.stderr.includes(home.configPath), run.stderr);
    assert.match(run.stderr, /extra_keys\[1\].*not a valid regular expression/);
    await assertNothingLeft(target);
  });
});

describe('redaction speed', () => {
  // DESIGN §9: redaction runs near memory speed, the regex only on the lines that hold a key
  // hint. Compared with the same log without secrets (timed just before, so machine load
  // cancels out), a few secrets must not make collect several times slower.
  it('collects a log with one secret in every MiB about as fast as the same log without secrets', async () => {
    const filler = `${slogLine('INFO', 'heartbeat', 'host=web-01 ip=10.0.0.5 user=deploy uptime_s=240')}\n`;
    const block = filler.repeat(Math.floor(MiB / filler.length));
    const mib = 6;
    let withSecrets = '';
    for (let i = 0; i < mib; i++) withSecrets += `${slogLine('INFO', 'x', `api_key=SPEED_SECRET_${i}`)}\n${block}`;
    const clean = await makeHome(await dirs.make('speed-clean'), {
      log: withSecrets.replaceAll('api_key=', 'api_kex='),
    });
    const secret = await makeHome(await dirs.make('speed-secret'), { log: withSecrets });
    const baseline = await runCli(collectArgs(clean, join(clean.root, 'out', 'b.tar.zst')));
    assert.equal(baseline.code, 0, describeRun(baseline));
    const limitMs = 3 * baseline.ms + 2000;
    const run = await runCli(collectArgs(secret, join(secret.root, 'out', 'b.tar.zst')), { timeoutMs: limitMs });
    assert.equal(
      run.signal,
      null,
      `${mib} MiB with ${mib} secrets took over ${limitMs} ms (killed); without secrets: ${baseline.ms} ms`,
    );
    assert.equal(run.code, 0, describeRun(run));
  });
});
