import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DAEMON_V8_FLAGS, runsDaemon } from './compilers.ts';

const LAUNCHER = join(dirname(fileURLToPath(import.meta.url)), '..', 'bin', 'guard-agent');

const CASES: [string[], boolean][] = [
  [['daemon'], true],
  [['--config', '/etc/guard/agent.yaml', 'daemon'], true],
  [['--config=/tmp/daemon', 'daemon'], true],
  [['daemon', '--help'], true],
  [['--config', 'daemon', 'support-bundle', 'collect'], false],
  [['support-bundle', 'collect', 'daemon'], false],
  [['enroll', '--token-file', 'daemon'], false],
  [['--version'], false],
  [[], false],
];

describe('the daemon’s compilers', () => {
  it('runsDaemon finds the command past the global options and --config’s value', () => {
    for (const [args, daemon] of CASES) assert.equal(runsDaemon(args), daemon, args.join(' '));
  });

  describe('the launcher', () => {
    // A copy of bin/guard-agent beside a stand-in for node that prints its arguments.
    const root = mkdtempSync(join(os.tmpdir(), 'guard-launcher-'));
    after(() => rmSync(root, { recursive: true, force: true }));
    const bin = join(root, 'a', 'b', 'c', 'bin', 'guard-agent');
    mkdirSync(dirname(bin), { recursive: true });
    copyFileSync(LAUNCHER, bin);
    const node = join(root, 'a', 'node_modules', '.bin', 'node');
    mkdirSync(dirname(node), { recursive: true });
    writeFileSync(node, '#!/bin/sh\nfor a in "$@"; do printf "%s\\n" "$a"; done\n');
    chmodSync(node, 0o755);
    const nodeArgs = (args: string[]) =>
      execFileSync(bin, args, { encoding: 'utf8', env: { PATH: process.env.PATH, NODE_COMPILE_CACHE: root } })
        .split('\n')
        .filter(Boolean);

    it('adds DAEMON_V8_FLAGS for the daemon and nothing for the other commands, as runsDaemon decides', () => {
      for (const [args, daemon] of CASES) {
        const got = nodeArgs(args);
        const main = got.findIndex((a) => a.endsWith('/src/main.ts'));
        assert.deepEqual(got.slice(main + 1), args, 'the arguments pass through unchanged');
        const flags = got.slice(0, main);
        assert.deepEqual(
          flags.filter((f) => DAEMON_V8_FLAGS.includes(f)),
          daemon ? [...DAEMON_V8_FLAGS] : [],
          args.join(' '),
        );
        assert.ok(flags.includes('--max-old-space-size=32'), 'the heap flags for every command');
      }
    });

    it('names the same flags as compilers.ts', () => {
      assert.ok(readFileSync(LAUNCHER, 'utf8').includes(`daemon) compilers="${DAEMON_V8_FLAGS.join(' ')}"`));
    });
  });
});
