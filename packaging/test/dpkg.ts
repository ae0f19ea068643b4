// dpkg on this machine's real root, for the install → upgrade → purge round trips. Each step
// is checked; a package left installed by an earlier, interrupted run is purged first, so the
// tests can be run again and again. Nothing is skipped quietly: when the machine cannot run
// them (not root, no dpkg), they fail saying why.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export interface Cmd {
  code: number | null;
  out: string;
}

export function sh(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): Cmd {
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    timeout: 300_000,
  });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

export function must(cmd: string, args: string[]): string {
  const r = sh(cmd, args);
  assert.equal(r.code, 0, `${cmd} ${args.join(' ')} failed:\n${r.out}`);
  return r.out;
}

/** Fails (never skips) when dpkg cannot be used here. */
export function requireDpkg(): void {
  assert.equal(process.getuid?.(), 0, 'the dpkg round trips install into / and must run as root');
  for (const tool of ['/usr/bin/dpkg', '/usr/bin/dpkg-query', '/usr/bin/lintian', '/usr/bin/systemd-analyze'])
    assert.ok(existsSync(tool), `${tool} is missing: run scripts/install-test-deps.sh`);
}

/** `Status` and `Version` of an installed package, or undefined when dpkg knows none. */
export function installed(name: string): { status: string; version: string } | undefined {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
  const r = sh('dpkg-query', ['-W', '-f=${Status}\t${Version}', name]);
  if (r.code !== 0) return undefined;
  const [status, version] = r.out.trim().split('\t');
  if (status.endsWith('not-installed')) return undefined;
  return { status, version };
}

export function purge(name: string): void {
  if (installed(name)) must('dpkg', ['--purge', name]);
}

export function conffiles(name: string): string[] {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
  return execFileSync('dpkg-query', ['-W', '-f=${Conffiles}', name], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(' ')[0])
    .filter(Boolean);
}

export function dpkgInstall(deb: string): string {
  // confold: keep the operator's conffile changes without asking (no terminal in CI).
  return must('dpkg', ['--force-confold', '-i', deb]);
}
