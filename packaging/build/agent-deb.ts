// guard-agent_<version>_amd64.deb (issue 13): the single executable as /usr/bin/guard-agent,
// the eBPF exec probe's helper as /usr/lib/guard-agent/guard-exec-probe when it has been built
// (exec-probe.ts), /etc/guard/agent.yaml (conffile, 0600: it may hold proxy credentials),
// /var/lib/guard and /var/log/guard (0750), the hardened unit for `guard-agent daemon`, a
// logrotate rule that writes exactly the agent.log.<N>.gz segments collect reads, a man page
// per command, and the recipes for hosts without systemd under /usr/share/doc/guard-agent/examples/:
// a runit service directory, runit/guard-agent/ (executable, as it is copied to /etc/sv/), and
// a supervisord program, supervisor/guard-agent.conf, that runs the same run script.

import { chmod, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { AGENT_SEA, ensureAgentSea } from './agent-sea.ts';
import { buildOnce, sourceHash } from './cache.ts';
import { copyright } from './copyright.ts';
import { buildDeb, COMPRESSION, type DebSpec, type Flavour, install, stageManPages, writeDocs } from './deb.ts';
import { AGENT_EXEC_PROBE, EXEC_PROBE_BUILT, EXEC_PROBE_PACKAGED } from './exec-probe.ts';
import { DIST, PACKAGING, ROOT, releaseVersion } from './paths.ts';

export { AGENT_EXEC_PROBE } from './exec-probe.ts';

const SRC = join(PACKAGING, 'agent');
/** The runit service directory's scripts (packaging/agent/runit/guard-agent/). */
export const RUNIT_FILES = ['run', 'finish', 'log/run'];

/**
 * Where the package is written: dist/ for a release (xz, the smallest); dist/.test/ for the
 * tests, compressed with gzip -1 (the same tree, built in a few seconds instead of a minute
 * or two of xz).
 */
export function agentDebPath(flavour: Flavour = 'release', version = releaseVersion()): string {
  return join(DIST, ...(flavour === 'test' ? ['.test'] : []), `guard-agent_${version}_amd64.deb`);
}

/** Stages the package tree and builds the .deb into `out` (version may differ for an upgrade test). */
export async function buildAgentDeb(
  out: string,
  version = releaseVersion(),
  compression?: DebSpec['compression'],
): Promise<void> {
  const stage = join(DIST, '.build', `guard-agent-deb-${version}`);
  await rm(stage, { recursive: true, force: true });
  await install(AGENT_SEA, join(stage, 'usr', 'bin', 'guard-agent'), 0o755);
  const probe = AGENT_EXEC_PROBE.built();
  if (probe) await install(EXEC_PROBE_BUILT, join(stage, EXEC_PROBE_PACKAGED), 0o755);
  else
    console.warn(
      'guard-agent .deb: packages/agent/ebpf/build/guard-exec-probe is not built (scripts/build-exec-probe.sh): the package has no exec probe',
    );
  // The configuration may hold proxy credentials: root's alone (the daemon runs as root).
  await install(join(SRC, 'agent.yaml'), join(stage, 'etc', 'guard', 'agent.yaml'), 0o600);
  await install(join(SRC, 'guard-agent.logrotate'), join(stage, 'etc', 'logrotate.d', 'guard-agent'), 0o644);
  // The unit the agent package itself keeps (and tests); one file, whatever installs it.
  await install(
    join(ROOT, 'packages', 'agent', 'systemd', 'guard-agent.service'),
    join(stage, 'lib', 'systemd', 'system', 'guard-agent.service'),
    0o644,
  );
  // Hosts without systemd (docs/guard-agent-daemon.md): the scripts keep their mode, so
  // `cp -a` of the directory is the whole install.
  const examples = join(stage, 'usr', 'share', 'doc', 'guard-agent', 'examples');
  for (const file of RUNIT_FILES)
    await install(join(SRC, 'runit', 'guard-agent', file), join(examples, 'runit', 'guard-agent', file), 0o755);
  await install(join(SRC, 'supervisor', 'guard-agent.conf'), join(examples, 'supervisor', 'guard-agent.conf'), 0o644);
  for (const dir of ['var/lib/guard', 'var/log/guard']) {
    await mkdir(join(stage, dir), { recursive: true });
    await chmod(join(stage, dir), 0o750);
  }
  await install(
    join(SRC, 'debian', 'lintian-overrides'),
    join(stage, 'usr', 'share', 'lintian', 'overrides', 'guard-agent'),
    0o644,
  );
  await stageManPages(join(SRC, 'man'), stage, version);
  const spec: DebSpec = {
    name: 'guard-agent',
    version,
    stage,
    section: 'admin',
    elfFiles: ['usr/bin/guard-agent', ...(probe ? [EXEC_PROBE_PACKAGED.slice(1)] : [])],
    description: `Guard host agent: detection signals and redacted support bundles
guard-agent enrols a Linux host with a Guard service, turns host events (sudo,
SSH logins, new users, changed critical files, executions from writable
directories) into signals, and builds redacted diagnostic bundles (.tar.zst) of
its logs for Guard support, uploaded through presigned URLs. One executable
with the Node.js runtime inside, and a small eBPF exec probe helper.`,
    scripts: Object.fromEntries(
      await Promise.all(
        ['postinst', 'prerm', 'postrm'].map(async (s) => [s, await readFile(join(SRC, 'debian', s), 'utf8')]),
      ),
    ),
    out,
    compression,
  };
  await writeDocs(
    spec,
    copyright(
      'guard-agent',
      'usr/bin/guard-agent',
      `Bundled into it: commander, yaml, tar-stream, typebox (MIT).${
        probe
          ? ' usr/lib/guard-agent/guard-exec-probe (Apache-2.0; its BPF program Dual BSD/GPL) links libbpf (LGPL-2.1 or BSD-2-Clause), libelf (LGPL-3+ or GPL-2+) and zlib (Zlib) statically.'
          : ''
      }`,
    ),
  );
  await buildDeb(spec);
  await rm(stage, { recursive: true, force: true });
}

const INPUTS = [
  'packaging/agent',
  'packages/agent/systemd',
  'packaging/build/agent-deb.ts',
  'packaging/build/deb.ts',
  'packaging/build/copyright.ts',
];

/** Builds the .deb unless fresh (the executable first); returns its path. */
export async function ensureAgentDeb(flavour: Flavour = 'release', force = false): Promise<string> {
  await ensureAgentSea(force);
  const out = agentDebPath(flavour);
  const sea = await readFile(join(DIST, '.stamps', 'agent-sea.sha256'), 'utf8');
  const hash = sourceHash(INPUTS, [releaseVersion(), sea, AGENT_EXEC_PROBE.hash()]);
  const build = () => buildAgentDeb(out, releaseVersion(), COMPRESSION[flavour]);
  await buildOnce(`agent-deb-${flavour}`, hash, [out], build, force);
  return out;
}

if (import.meta.main) {
  const t0 = Date.now();
  const path = await ensureAgentDeb('release', process.argv.includes('--force'));
  console.log(`${path} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
}
