import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { DEFAULT_LOG_PATH, DEFAULT_STATE_DIR, loadConfig } from './config.ts';
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
