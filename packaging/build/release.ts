// `npm run release:build`: every artefact of a release into dist/, each with its CycloneDX
// SBOM (<artefact>.cdx.json, sbom.ts), then dist/SHA256SUMS over all of them
// (`sha256sum -c SHA256SUMS` checks a download):
//   guard-agent-linux-x64                 the agent as one executable (agent-sea.ts)
//   guard-exec-probe                      its eBPF exec probe helper, to install beside it
//                                         (exec-probe.ts; scripts/build-exec-probe.sh)
//   guard-agent_<v>_amd64.deb             (agent-deb.ts; the helper inside)
//   guard-server_<v>_amd64.deb            (server-deb.ts)
//   guard-webhooks-<v>.tgz                the SDK as npm publishes it (webhooks-package.ts)
//   guard-listen-<v>.tgz                  `guard listen`/`guard trigger`, run with npx (listen-package.ts)
//   guard-server-<v>.image.tar            the server's container image (image.ts)
// A release checks itself:
//   1. before building anything, every tool the build needs (prerequisites.ts): a missing one
//      is named with its Debian package and the install command, and the build exits 2;
//   2. the .debs must pass lintian without errors and the SDK publint;
//   3. the package tests (packaging/test/) run on the artefacts just built
//      (GUARD_RELEASE_ARTEFACTS=1: release paths, nothing rebuilt); a failure fails the build;
//   4. `sha256sum -c SHA256SUMS`: what was tested is what is listed.
// Each artefact is rebuilt only when its sources changed (cache.ts).
//
//   --force               rebuild every artefact
//   --without-exec-probe  no exec probe helper (the agent then runs no exec detector); its
//                         build needs clang, bpftool, libbpf-dev and the kernel's BTF
//   --without-image       no container image
//   --skip-tests          build, but do not run the package tests on the result (said so)
//
// Exit codes: 0 released, 1 a build step or a test failed, 2 prerequisites missing.

import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ensureAgentDeb } from './agent-deb.ts';
import { ensureAgentSea } from './agent-sea.ts';
import { lintian } from './deb.ts';
import { AGENT_EXEC_PROBE, buildExecProbe, stageExecProbeRelease } from './exec-probe.ts';
import { ensureServerImage } from './image.ts';
import { ensureListenPackage } from './listen-package.ts';
import { DIST, NODE_BIN, ROOT, releaseVersion } from './paths.ts';
import { describeMissing, missingPrerequisites, type ReleasePlan } from './prerequisites.ts';
import { SBOM_CONTENTS, type SbomOptions, sha256File, writeSbom } from './sbom.ts';
import { ensureServerDeb } from './server-deb.ts';
import { ensureWebhooksPackage, WEBHOOKS_STAGE } from './webhooks-package.ts';

class PrerequisitesMissing extends Error {}
class ReleaseTestsFailed extends Error {}
class ChecksumsDiffer extends Error {}

/** The one place an error becomes an exit code. */
const EXIT_CODES: [new (...args: never[]) => Error, number][] = [
  [PrerequisitesMissing, 2],
  [ReleaseTestsFailed, 1],
  [ChecksumsDiffer, 1],
];

interface Options extends ReleasePlan {
  force: boolean;
}

export function parseArgs(argv: string[]): Options {
  const known = ['--force', '--without-exec-probe', '--without-image', '--skip-tests'];
  const unknown = argv.filter((a) => !known.includes(a));
  if (unknown.length) throw new Error(`release:build: unknown option ${unknown.join(' ')} (${known.join(', ')})`);
  return {
    force: argv.includes('--force'),
    execProbe: !argv.includes('--without-exec-probe'),
    image: !argv.includes('--without-image'),
    tests: !argv.includes('--skip-tests'),
  };
}

/** The package tests run on the release: every packaging/test/*.test.ts but the one that runs release:build. */
export function releaseTestFiles(plan: ReleasePlan): string[] {
  const dir = join(ROOT, 'packaging', 'test');
  return readdirSync(dir)
    .filter((f) => f.endsWith('.test.ts') && f !== 'release-prerequisites.test.ts')
    .filter((f) => plan.image || !(f.startsWith('image') || f.startsWith('compose')))
    .sort()
    .map((f) => join(dir, f));
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(0)} s`;
const size = (bytes: number) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);

async function release(opts: Options): Promise<void> {
  const missing = missingPrerequisites(opts, process.env.PATH ?? '');
  if (missing.length) throw new PrerequisitesMissing(describeMissing(missing, process.getuid?.() === 0));

  const t0 = Date.now();
  const built: [string, SbomOptions][] = [];
  if (opts.execProbe) buildExecProbe(); // before the .deb, which ships it
  built.push([await ensureAgentSea(opts.force), SBOM_CONTENTS.agentExecutable]);
  if (opts.execProbe) built.push([await stageExecProbeRelease(), SBOM_CONTENTS.execProbe]);
  built.push([await ensureAgentDeb('release', opts.force), SBOM_CONTENTS.agentDeb(AGENT_EXEC_PROBE.built())]);
  built.push([await ensureServerDeb('release', opts.force), SBOM_CONTENTS.serverDeb]);
  built.push([await ensureWebhooksPackage(opts.force), SBOM_CONTENTS.webhooksPackage]);
  built.push([await ensureListenPackage(opts.force), SBOM_CONTENTS.listenPackage]);
  if (opts.image) {
    const image = await ensureServerImage(opts.force);
    built.push([image.path, SBOM_CONTENTS.serverImage(image.debianPackages)]);
  }
  const artefacts = built.map(([path]) => path);

  for (const deb of artefacts.filter((a) => a.endsWith('.deb'))) {
    const tags = lintian(deb);
    const errors = tags.filter((t) => t.startsWith('E:'));
    if (errors.length) throw new Error(`lintian found errors in ${basename(deb)}:\n${errors.join('\n')}`);
    console.log(`lintian ${basename(deb)}: no errors, ${tags.filter((t) => t.startsWith('W:')).length} warnings`);
  }
  execFileSync(join(ROOT, 'node_modules', '.bin', 'publint'), ['run', WEBHOOKS_STAGE, '--strict'], {
    stdio: 'inherit',
  });
  const tBuilt = Date.now();

  const sboms: string[] = [];
  for (const [path, sbom] of built) sboms.push(await writeSbom(path, sbom));
  const listed = [...artefacts, ...sboms];
  const lines: string[] = [];
  for (const a of listed) lines.push(`${await sha256File(a)}  ${basename(a)}`);
  await writeFile(join(DIST, 'SHA256SUMS'), `${lines.join('\n')}\n`);
  const tSbom = Date.now();

  if (opts.tests) {
    const files = releaseTestFiles(opts);
    console.log(
      `\nThe package tests on the release (GUARD_RELEASE_ARTEFACTS=1): ${files.map((f) => basename(f)).join(', ')}`,
    );
    const run = spawnSync(NODE_BIN, ['--test', '--test-concurrency=2', ...files], {
      cwd: ROOT,
      stdio: 'inherit',
      env: { ...process.env, GUARD_RELEASE_ARTEFACTS: '1' },
    });
    if (run.status !== 0)
      throw new ReleaseTestsFailed(
        `release:build: the package tests failed on the release artefacts (exit ${run.status ?? run.signal}): do not publish dist/`,
      );
  } else console.log('\n--skip-tests: the package tests were NOT run on these artefacts');
  const tTests = Date.now();

  const check = spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: DIST, encoding: 'utf8' });
  if (check.status !== 0)
    throw new ChecksumsDiffer(
      `release:build: sha256sum -c SHA256SUMS failed in ${DIST}:\n${check.stdout}${check.stderr}`,
    );

  console.log(`\nGuard ${releaseVersion()} in ${DIST} (${seconds(Date.now() - t0)}):`);
  for (const a of listed) console.log(`  ${basename(a).padEnd(40)} ${size((await stat(a)).size).padStart(9)}`);
  console.log('  SHA256SUMS (sha256sum -c: OK)');
  console.log(
    `build ${seconds(tBuilt - t0)}, SBOMs and checksums ${seconds(tSbom - tBuilt)}, ${
      opts.tests ? `tests ${seconds(tTests - tSbom)}` : 'tests skipped'
    }`,
  );
}

if (import.meta.main) {
  try {
    await release(parseArgs(process.argv.slice(2)));
  } catch (e) {
    const code = EXIT_CODES.find(([type]) => e instanceof type)?.[1];
    if (code === undefined) throw e; // unexpected: the stack trace says where
    console.error((e as Error).message);
    process.exitCode = code;
  }
}
