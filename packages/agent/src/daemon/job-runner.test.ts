import assert from 'node:assert/strict';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DAEMON_V8_FLAGS } from '../compilers.ts';
import { jobCommand } from './job-runner.ts';

it('a bundle job runs with the optimizing compilers the daemon goes without, and the daemon’s other flags', () => {
  const input = {
    configPath: '/etc/guard/agent.yaml',
    configExplicit: false,
    requestId: 'r1',
    out: '/tmp/b',
    version: '1',
  };
  const saved = [...process.execArgv];
  process.execArgv.splice(
    0,
    process.execArgv.length,
    '--max-old-space-size=32',
    ...DAEMON_V8_FLAGS,
    '--max-semi-space-size=1',
  );
  try {
    const { command, args } = jobCommand(input);
    assert.equal(command, process.execPath);
    assert.deepEqual(args, [
      '--max-old-space-size=32',
      '--max-semi-space-size=1',
      fileURLToPath(new URL('./job.ts', import.meta.url)),
      JSON.stringify(input),
    ]);
  } finally {
    process.execArgv.splice(0, process.execArgv.length, ...saved);
  }
});
