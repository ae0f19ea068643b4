// The agent's eBPF exec probe helper, guard-exec-probe (packages/agent/ebpf, built by
// scripts/build-exec-probe.sh into packages/agent/ebpf/build/): the .deb ships it as
// /usr/lib/guard-agent/guard-exec-probe and a release puts it beside the single executable as
// dist/guard-exec-probe (the daemon looks beside its own executable, then in /usr/lib/guard-agent).
// Without it the agent runs the same, less its exec detector (reported in its log).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, copyFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { DIST, ROOT } from './paths.ts';

export const EXEC_PROBE_BUILT = join(ROOT, 'packages', 'agent', 'ebpf', 'build', 'guard-exec-probe');
export const EXEC_PROBE_RELEASE = join(DIST, 'guard-exec-probe');
export const EXEC_PROBE_PACKAGED = '/usr/lib/guard-agent/guard-exec-probe';

export const AGENT_EXEC_PROBE = {
  /** Whether the checkout holds a built helper (what the packages ship when it does). */
  built: (): boolean => existsSync(EXEC_PROBE_BUILT),
  /** A cache key part: the helper's SHA-256, or that there is none. */
  hash: (): string =>
    existsSync(EXEC_PROBE_BUILT)
      ? `exec-probe:${createHash('sha256').update(readFileSync(EXEC_PROBE_BUILT)).digest('hex')}`
      : 'exec-probe:none',
};

/** Runs scripts/build-exec-probe.sh (it skips the build when its inputs are unchanged); returns the helper. */
export function buildExecProbe(): string {
  execFileSync('bash', [join(ROOT, 'scripts', 'build-exec-probe.sh')], { cwd: ROOT, stdio: 'inherit' });
  if (!existsSync(EXEC_PROBE_BUILT)) throw new Error(`scripts/build-exec-probe.sh wrote no ${EXEC_PROBE_BUILT}`);
  return EXEC_PROBE_BUILT;
}

/** Copies the built helper beside the single executable in dist/; returns its path. */
export async function stageExecProbeRelease(): Promise<string> {
  const tmp = `${EXEC_PROBE_RELEASE}.tmp`;
  await copyFile(EXEC_PROBE_BUILT, tmp);
  await chmod(tmp, 0o755);
  await rename(tmp, EXEC_PROBE_RELEASE); // never overwritten in place: a test may be running it
  return EXEC_PROBE_RELEASE;
}
