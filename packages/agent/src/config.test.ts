import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_DETECT, DEFAULT_LOG_PATH, DEFAULT_STATE_DIR, loadConfig } from './config.ts';
import { AgentError } from './errors.ts';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'guard-config-'));
});
after(() => rm(dir, { recursive: true, force: true }));

const rejectsWith = (p: Promise<unknown>, re: RegExp) =>
  assert.rejects(p, (e: unknown) => e instanceof AgentError && e.kind === 'config' && re.test(e.message));

test('a missing file at the default path means the defaults', async () => {
  const c = await loadConfig(join(dir, 'absent.yaml'), false);
  assert.equal(c.source, undefined);
  assert.equal(c.logPath, DEFAULT_LOG_PATH);
  assert.equal(c.stateDir, DEFAULT_STATE_DIR);
});

test('a missing file named with --config is an error that names it', async () => {
  await rejectsWith(loadConfig(join(dir, 'absent.yaml'), true), /absent\.yaml.*no such file/);
});

test('relative paths resolve against the config file directory; other keys are kept', async () => {
  const path = join(dir, 'agent.yaml');
  await writeFile(path, 'log_path: logs/agent.log\nstate_dir: /srv/guard\nenvironment: staging\nprobe: {mode: ebpf}\n');
  const c = await loadConfig(path, true);
  assert.equal(c.logPath, join(dir, 'logs/agent.log'));
  assert.equal(c.stateDir, '/srv/guard');
  assert.equal(c.environment, 'staging');
  assert.deepEqual(c.effective.probe, { mode: 'ebpf' });
});

test('invalid YAML, a non-mapping document and a bad path value are config errors', async () => {
  const bad = join(dir, 'bad.yaml');
  await writeFile(bad, 'log_path: [unclosed\n');
  await rejectsWith(loadConfig(bad, true), /not valid YAML/);
  await writeFile(bad, '- a\n- b\n');
  await rejectsWith(loadConfig(bad, true), /must be a YAML mapping/);
  await writeFile(bad, 'log_path: 42\n');
  await rejectsWith(loadConfig(bad, true), /log_path must be a non-empty path/);
  await writeFile(bad, 'environment: [a]\n');
  await rejectsWith(loadConfig(bad, true), /environment must be a string/);
});

test('an empty file means the defaults', async () => {
  const empty = join(dir, 'empty.yaml');
  await writeFile(empty, '');
  const c = await loadConfig(empty, true);
  assert.equal(c.logPath, DEFAULT_LOG_PATH);
});

test('an oversized file is refused', async () => {
  const big = join(dir, 'big.yaml');
  await writeFile(big, `# ${'x'.repeat(1024 * 1024)}\n`);
  await rejectsWith(loadConfig(big, true), /larger than/);
});

describe('the config file as collect reads it (DESIGN §3, what collect reads)', () => {
  test('other commands follow a symlinked config file', async () => {
    const real = join(dir, 'followed.yaml');
    await writeFile(real, 'environment: followed\n');
    await symlink(real, join(dir, 'followed-link.yaml'));
    const c = await loadConfig(join(dir, 'followed-link.yaml'), true);
    assert.equal(c.environment, 'followed');
    assert.equal(c.unread, undefined);
  });

  test('collect does not read a symlinked config file: the defaults apply and unread says why', async () => {
    const real = join(dir, 'unfollowed.yaml');
    await writeFile(real, 'log_path: /srv/elsewhere.log\nenvironment: linked\n');
    const link = join(dir, 'unfollowed-link.yaml');
    await symlink(real, link);
    const c = await loadConfig(link, true, { asBundleSource: true });
    assert.equal(c.source, undefined);
    assert.equal(c.logPath, DEFAULT_LOG_PATH);
    assert.equal(c.environment, undefined);
    assert.deepEqual(c.unread, {
      source: link,
      message: 'left out: a symbolic link; collect never follows links (log_path and state_dir took their defaults)',
    });
  });

  test('a FIFO config is never waited on: unread for collect, a config error for other commands', async () => {
    const fifo = join(dir, 'fifo.yaml');
    execFileSync('mkfifo', [fifo]);
    const c = await loadConfig(fifo, true, { asBundleSource: true });
    assert.match(c.unread?.message ?? '', /^left out: not a regular file \(a FIFO\)/);
    await rejectsWith(loadConfig(fifo, true), /fifo\.yaml is not a regular file \(a FIFO\)/);
  });

  test('a directory named as the config is a config error for every command', async () => {
    const d = join(dir, 'a-directory.yaml');
    await mkdir(d);
    await rejectsWith(
      loadConfig(d, true, { asBundleSource: true }),
      /a-directory\.yaml is not a regular file \(a directory\)/,
    );
    await rejectsWith(loadConfig(d, true), /not a regular file \(a directory\)/);
  });

  test('a regular config file reads the same either way', async () => {
    const path = join(dir, 'regular.yaml');
    await writeFile(path, 'environment: plain\n');
    assert.deepEqual(await loadConfig(path, true, { asBundleSource: true }), await loadConfig(path, true));
  });
});

describe('redaction.extra_keys', () => {
  const load = async (yaml: string) => {
    const path = join(dir, 'extra.yaml');
    await writeFile(path, yaml);
    return loadConfig(path, true);
  };

  test('absent means none', async () => {
    assert.deepEqual((await load('environment: x\n')).extraKeys, []);
    assert.deepEqual((await load('redaction: {}\n')).extraKeys, []);
  });

  test('keeps key names and anchored patterns as written, in order', async () => {
    const c = await load(
      'redaction:\n  extra_keys: [password, passwd, authorization, "^x-.*-key$", aws_secret_access_key]\n',
    );
    assert.deepEqual(c.extraKeys, ['password', 'passwd', 'authorization', '^x-.*-key$', 'aws_secret_access_key']);
  });

  const bad: [string, string, RegExp][] = [
    ['a scalar block', 'redaction: password\n', /redaction must be a mapping/],
    [
      'an unknown key beside extra_keys',
      'redaction: {extra_key: [password]}\n',
      /redaction\.extra_key is not a known key/,
    ],
    ['a scalar list', 'redaction: {extra_keys: password}\n', /extra_keys must be a list/],
    ['a number entry', 'redaction: {extra_keys: [password, 42]}\n', /extra_keys\[1\].*must be a string/],
    ['a nested list entry', 'redaction: {extra_keys: [[password]]}\n', /extra_keys\[0\].*must be a string/],
    ['an empty entry', 'redaction: {extra_keys: [""]}\n', /extra_keys\[0\].*is empty/],
    ['a blank entry', 'redaction: {extra_keys: ["  "]}\n', /extra_keys\[0\].*is empty/],
    [
      'an invalid regex',
      'redaction: {extra_keys: ["^(unclosed$"]}\n',
      /extra_keys\[0\].*not a valid regular expression/,
    ],
    ['a pattern anchored at one end', 'redaction: {extra_keys: ["^password"]}\n', /anchored at both ends/],
    ['a key name with a space', 'redaction: {extra_keys: ["pass word"]}\n', /neither a key name/],
    ['a key name with =', 'redaction: {extra_keys: ["password="]}\n', /neither a key name/],
    ['a glob', 'redaction: {extra_keys: ["*_password"]}\n', /neither a key name/],
    ['a too long entry', `redaction: {extra_keys: [${'k'.repeat(129)}]}\n`, /129 characters long; at most 128/],
    [
      'too many entries',
      `redaction: {extra_keys: [${Array.from({ length: 65 }, (_, i) => `k${i}`).join(', ')}]}\n`,
      /65 entries; at most 64/,
    ],
  ];
  for (const [name, yaml, re] of bad) {
    test(`refuses ${name} with a config error naming the entry`, async () => {
      await rejectsWith(load(yaml), re);
      await rejectsWith(load(yaml), /extra\.yaml/);
    });
  }
});

test('detect: the contract defaults; each key set, relative paths resolved; wrong keys and values named', async () => {
  const defaults = await loadConfig(join(dir, 'absent.yaml'), false);
  assert.deepEqual(defaults.detect, DEFAULT_DETECT);
  assert.equal(DEFAULT_DETECT.authLog, '/var/log/auth.log');
  assert.equal(DEFAULT_DETECT.exec, true);
  assert.deepEqual(DEFAULT_DETECT.watch, [
    '/etc/passwd',
    '/etc/shadow',
    '/etc/group',
    '/etc/sudoers',
    '/etc/sudoers.d',
    '/etc/ssh/sshd_config',
    '/root/.ssh/authorized_keys',
  ]);
  const path = join(dir, 'detect.yaml');
  await writeFile(path, 'detect:\n  auth_log: journal\n  watch: [etc/app.conf, /etc/sudoers.d/]\n  exec: false\n');
  assert.deepEqual((await loadConfig(path, true)).detect, {
    authLog: 'journal',
    watch: [join(dir, 'etc/app.conf'), '/etc/sudoers.d'],
    exec: false,
    floodPerMinute: 20,
  });
  await writeFile(path, 'detect:\n  auth_log: false\n  watch: []\n  flood_per_minute: 5\n');
  const off = (await loadConfig(path, true)).detect;
  assert.equal(off?.authLog, false);
  assert.deepEqual(off?.watch, []);
  assert.equal(off?.floodPerMinute, 5);
  for (const [text, re] of [
    ['detect: [a]', /detect must be a mapping/],
    ['detect: {probes: 1}', /detect\.probes is not a known key/],
    ['detect: {auth_log: 3}', /detect\.auth_log/],
    ['detect: {watch: /etc/passwd}', /detect\.watch must be a list/],
    ['detect: {exec: "yes"}', /detect\.exec must be true or false/],
    ['detect: {flood_per_minute: 0}', /flood_per_minute must be a whole number/],
  ] as const) {
    await writeFile(path, `${text}\n`);
    await rejectsWith(loadConfig(path, true), re);
  }
});
