// `npm run release:build`: every artefact of a release into dist/, then dist/SHA256SUMS
// (`sha256sum -c SHA256SUMS` checks a download):
//   guard-agent-linux-x64                 the agent as one executable (agent-sea.ts)
//   guard-exec-probe                      its eBPF exec probe helper, to install beside it
//                                         (exec-probe.ts; scripts/build-exec-probe.sh)
//   guard-agent_<v>_amd64.deb             (agent-deb.ts; the helper inside)
//   guard-server_<v>_amd64.deb            (server-deb.ts)
//   guard-webhooks-<v>.tgz                the SDK as npm publishes it (webhooks-package.ts)
//   guard-listen-<v>.tgz                  `guard listen`/`guard trigger`, run with npx (listen-package.ts)
// The .debs must pass lintian without errors and the SDK publint, or the build fails.
// Each artefact is rebuilt only when its sources changed (cache.ts); --force rebuilds all.
// The helper needs clang, bpftool, libbpf-dev and the kernel's BTF (scripts/install-test-deps.sh);
// --without-exec-probe builds a release without it (the agent then runs no exec detector).

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { ensureAgentDeb } from './agent-deb.ts';
import { ensureAgentSea } from './agent-sea.ts';
import { lintian } from './deb.ts';
import { buildExecProbe, stageExecProbeRelease } from './exec-probe.ts';
import { ensureListenPackage } from './listen-package.ts';
import { DIST, ROOT, releaseVersion } from './paths.ts';
import { ensureServerDeb } from './server-deb.ts';
import { ensureWebhooksPackage, WEBHOOKS_STAGE } from './webhooks-package.ts';

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

const force = process.argv.includes('--force');
const t0 = Date.now();
const withProbe = !process.argv.includes('--without-exec-probe');
if (withProbe) buildExecProbe(); // before the .deb, which ships it
const artefacts = [
  await ensureAgentSea(force),
  ...(withProbe ? [await stageExecProbeRelease()] : []),
  await ensureAgentDeb('release', force),
  await ensureServerDeb('release', force),
  await ensureWebhooksPackage(force),
  await ensureListenPackage(force),
];

for (const deb of artefacts.filter((a) => a.endsWith('.deb'))) {
  const tags = lintian(deb);
  const errors = tags.filter((t) => t.startsWith('E:'));
  if (errors.length) throw new Error(`lintian found errors in ${basename(deb)}:\n${errors.join('\n')}`);
  console.log(`lintian ${basename(deb)}: no errors, ${tags.filter((t) => t.startsWith('W:')).length} warnings`);
}
execFileSync(join(ROOT, 'node_modules', '.bin', 'publint'), ['run', WEBHOOKS_STAGE, '--strict'], { stdio: 'inherit' });

const lines: string[] = [];
for (const a of artefacts) lines.push(`${await sha256(a)}  ${basename(a)}`);
await writeFile(join(DIST, 'SHA256SUMS'), `${lines.join('\n')}\n`);

console.log(`\nGuard ${releaseVersion()} in ${DIST} (${((Date.now() - t0) / 1000).toFixed(0)} s):`);
const size = (bytes: number) => (bytes < 1e6 ? `${(bytes / 1e3).toFixed(1)} kB` : `${(bytes / 1e6).toFixed(1)} MB`);
for (const a of artefacts) console.log(`  ${basename(a).padEnd(34)} ${size((await stat(a)).size).padStart(9)}`);
console.log('  SHA256SUMS');
