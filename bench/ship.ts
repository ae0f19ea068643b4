// `npm run bench:ship`: the single executable (dist/guard-agent-linux-x64, built when stale)
// beside the launcher (packages/agent/bin/guard-agent on the pinned Node, compile cache warm),
// in the same run: wall time and peak RSS of `--version` and of `support-bundle collect`, on
// the sample agent home (examples/agent-home: start-up dominates) and on a 64 MiB log with
// three rotated segments (streaming dominates). Runs alternate, REPS each, under GNU time
// (`%e %M %U %S`: wall s, peak RSS KiB, CPU s); medians are printed with the ratio
// executable / launcher. A busy machine moves wall times: read the CPU column beside them.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { ensureAgentSea } from '../packaging/build/agent-sea.ts';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const LAUNCHER = join(ROOT, 'packages/agent/bin/guard-agent');
const WORK = join(ROOT, 'bench/.work/ship');
const GNU_TIME = '/usr/bin/time';
const REPS = Number(process.env.BENCH_REPS ?? 7);
const MiB = 1024 * 1024;

interface Sample {
  wall: number;
  rssKiB: number;
  cpu: number;
}

function measure(argv: string[]): Sample {
  const r = spawnSync(GNU_TIME, ['-f', '%e %M %U %S', ...argv], { encoding: 'utf8', maxBuffer: 64 * MiB });
  if (r.status !== 0) throw new Error(`${argv.join(' ')} failed (${r.status}):\n${r.stderr}`);
  const [wall, rss, user, sys] = r.stderr.trim().split('\n').at(-1)?.split(' ').map(Number) ?? [];
  return { wall, rssKiB: rss, cpu: user + sys };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** The sample home copied (its relative paths kept), and a home with a 64 MiB log and three segments. */
async function homes(): Promise<{ sample: string; big: string }> {
  const sample = join(WORK, 'sample');
  await rm(sample, { recursive: true, force: true });
  await cp(join(ROOT, 'examples/agent-home'), sample, { recursive: true });
  const big = join(WORK, 'big');
  if (!existsSync(join(big, 'agent.yaml'))) {
    await mkdir(join(big, 'log'), { recursive: true });
    const line = (i: number) =>
      `time=2026-11-21T08:00:${String(i % 60).padStart(2, '0')}.000Z level=INFO msg="request done" host=web-01 ip=10.0.0.${i % 250} user=deploy trace=${(i * 2654435761).toString(16).padStart(12, '0')}${i % 97 === 0 ? ` api_key=k${i}` : ''}\n`;
    const block = Array.from({ length: 8192 }, (_, i) => line(i)).join('');
    const text = block.repeat(Math.ceil((64 * MiB) / block.length)).slice(0, 64 * MiB);
    await writeFile(join(big, 'log/agent.log'), text);
    const segment = gzipSync(text.slice(0, 16 * MiB), { level: 6 });
    for (const n of [1, 2, 3]) await writeFile(join(big, `log/agent.log.${n}.gz`), segment);
    await writeFile(join(big, 'agent.yaml'), 'log_path: log/agent.log\nstate_dir: state\n');
  }
  return { sample, big };
}

const exe = await ensureAgentSea();
const { sample, big } = await homes();
const out = join(WORK, 'out');
const cases: { name: string; args: (run: number) => string[] }[] = [
  { name: '--version', args: () => ['--version'] },
  {
    name: 'collect, sample home',
    args: (i) => [
      '--config',
      join(sample, 'agent.yaml'),
      'support-bundle',
      'collect',
      '--out',
      join(out, `s${i}.tar.zst`),
    ],
  },
  {
    name: 'collect, 64 MiB log + 3 segments',
    args: (i) => [
      '--config',
      join(big, 'agent.yaml'),
      'support-bundle',
      'collect',
      '--out',
      join(out, `b${i}.tar.zst`),
    ],
  },
];
const programs = { launcher: LAUNCHER, executable: exe };
measure([LAUNCHER, '--version']); // the compile cache is warm before the first timed run

console.log(`guard-agent: single executable vs launcher, ${REPS} runs each, medians (GNU time)\n`);
const head = [
  'case',
  'launcher wall',
  'exe wall',
  'ratio',
  'launcher RSS',
  'exe RSS',
  'ratio',
  'launcher CPU',
  'exe CPU',
];
const rows: string[][] = [];
for (const c of cases) {
  const samples: Record<string, Sample[]> = { launcher: [], executable: [] };
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  for (let i = 0; i < REPS; i++)
    for (const [name, bin] of Object.entries(programs))
      samples[name].push(measure([bin, ...c.args(i * 2 + (name === 'launcher' ? 0 : 1))]));
  const m = (who: string, k: keyof Sample) => median(samples[who].map((s) => s[k]));
  rows.push([
    c.name,
    `${(m('launcher', 'wall') * 1000).toFixed(0)} ms`,
    `${(m('executable', 'wall') * 1000).toFixed(0)} ms`,
    (m('executable', 'wall') / m('launcher', 'wall')).toFixed(2),
    `${(m('launcher', 'rssKiB') / 1024).toFixed(1)} MiB`,
    `${(m('executable', 'rssKiB') / 1024).toFixed(1)} MiB`,
    (m('executable', 'rssKiB') / m('launcher', 'rssKiB')).toFixed(2),
    `${m('launcher', 'cpu').toFixed(2)} s`,
    `${m('executable', 'cpu').toFixed(2)} s`,
  ]);
}
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
for (const r of [head, ...rows])
  console.log(r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '));
console.log(
  `\nload average: ${(await import('node:os'))
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
await rm(out, { recursive: true, force: true });
