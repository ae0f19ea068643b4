// dpkg inside a throw-away container (container.ts), for the install → upgrade → purge round
// trips: never on the machine that runs the tests. Each step is checked; nothing is skipped
// quietly: when containers cannot be made here, the tests fail saying why.

import type { Container } from './container.ts';

/** `Status` and `Version` of an installed package, or undefined when dpkg knows none. */
export function installed(c: Container, name: string): { status: string; version: string } | undefined {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
  const r = c.exec(['dpkg-query', '-W', '-f=${Status}\t${Version}', name]);
  if (r.code !== 0) return undefined;
  const [status, version] = r.out.trim().split('\t');
  if (status.endsWith('not-installed')) return undefined;
  return { status, version };
}

export function conffiles(c: Container, name: string): string[] {
  return (
    c
      // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own field syntax
      .must(['dpkg-query', '-W', '-f=${Conffiles}', name])
      .split('\n')
      .map((l) => l.trim().split(' ')[0])
      .filter(Boolean)
  );
}

export function dpkgInstall(c: Container, deb: string): string {
  // confold: keep the operator's conffile changes without asking (no terminal in CI).
  return c.must(['dpkg', '--force-confold', '-i', deb]);
}

/** What systemd's enablement left of a unit: the wants link and deb-systemd-helper's state. */
export function enablementLeft(c: Container, unit: string): string[] {
  const out = c.must([
    'sh',
    '-c',
    'ls -d /etc/systemd/system/*/"$1" /var/lib/systemd/deb-systemd-helper-*/"$1"* /var/lib/systemd/deb-systemd-helper-*/*/"$1"* 2>/dev/null; true',
    'sh',
    unit,
  ]);
  return out.split('\n').filter(Boolean);
}

/** The command line of a unit's ExecStart= (systemd's prefixes `-@:+!` dropped), split into words. */
export function execStart(unitText: string): string[] {
  const lines = unitText.split('\n').filter((l) => /^ExecStart=/.test(l.trim()));
  if (lines.length !== 1) throw new Error(`expected one ExecStart= line, found ${lines.length}`);
  const command = lines[0]
    .trim()
    .slice('ExecStart='.length)
    .replace(/^[-@:+!]+/, '');
  if (/["'\\$%]/.test(command))
    throw new Error(`ExecStart= uses quoting or specifiers this test does not parse: ${command}`);
  return command.split(/\s+/).filter(Boolean);
}
