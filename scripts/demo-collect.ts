// `npm start`: the quick-start job. Runs the real guard-agent binary's `support-bundle
// collect` on the sample agent home shipped in examples/agent-home (its bundles land under
// examples/agent-home/state/support/, the default path for that config), then shows where
// the bundle is and what is inside it.

import { spawnSync } from 'node:child_process';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifyBundle } from '../packages/agent/src/bundle/index.ts';
import { formatBytes } from '../packages/agent/src/progress.ts';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const home = join(root, 'examples/agent-home');
const bin = join(root, 'packages/agent/bin/guard-agent');

const run = spawnSync(bin, ['--config', join(home, 'agent.yaml'), 'support-bundle', 'collect'], {
  cwd: home,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
if (run.status !== 0) {
  console.error(`guard-agent exited with ${run.status ?? run.signal}`);
  process.exit(1);
}
const bundle = run.stdout.trim();
const manifest = await verifyBundle(bundle);

console.log(`\nBundle written: ${relative(process.cwd(), bundle) || bundle}`);
console.log(
  `Verified against its manifest (bundle_version ${manifest.bundle_version}, agent ${manifest.agent_version}).\n`,
);
const masked = manifest.redaction.members;
const rows = manifest.contents.map((m) => [
  m.name,
  formatBytes(m.size),
  m.name in masked ? String(masked[m.name]) : '-',
  m.sha256.slice(0, 12),
]);
const head = ['member', 'size', 'masked', 'sha256'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
const line = (cells: string[]) =>
  cells.map((c, i) => (i === 1 || i === 2 ? c.padStart(widths[i]) : c.padEnd(widths[i]))).join('  ');
console.log(line(head));
console.log(widths.map((w) => '─'.repeat(w)).join('  '));
for (const r of rows) console.log(line(r));
console.log(`\n${manifest.redaction.values_masked} values masked (keys matching ${manifest.redaction.pattern}).`);
if (manifest.trimmed_segments.length > 0)
  console.log(`Left out by the 180 MiB cap: ${manifest.trimmed_segments.join(', ')}`);
for (const e of manifest.collection_errors) console.log(`Not collected: ${e.source}: ${e.message}`);
console.log(`\nLook inside:  tar --zstd -tvf ${bundle}`);
console.log('Try it on a host:  guard-agent support-bundle collect   (see docs/support-bundle-collect.md)');
