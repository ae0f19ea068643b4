// `npm run bench:insights`: times the service's analysis of a bundle (bundle insights, issue 12)
// against `zstd -dc | tar -xO | grep -c ERROR` over the same archive, in the same run, and
// prints a report with goals (PASS/MISS).
//
//   1. Builds once, cached under bench/.work/ (gitignored), with the agent's own collect (so
//      the archives are real bundles: redacted, zstd level 3, manifest with every member's
//      SHA-256):
//        insights-180m: agent.log of ~170 MiB and two rotated segments of ~4 MiB of text each,
//                       ~180 MiB of logs: slog text with ~4 % JSON lines, ~3 % ERROR lines over
//                       60 messages, ~5 % WARN, a restart and a crash trace;
//        insights-1g:   one agent.log of 1 GiB (collect's cap raised for it), to show that the
//                       analysis' memory does not grow with a member's size.
//   2. REPS times, alternately:
//        ours:   /usr/bin/time node --max-semi-space-size=4 bench/insights.ts --analyse …
//                (Node as bin/guard-server runs it, MALLOC_ARENA_MAX=2): the archive opened as
//                FsObjectStore.open opens a stored object, then readArchive + buildFindings —
//                the worker's analysis, alone in its process. Its wall time is taken inside
//                the process (open → findings: the worker runs in the long-lived server), and
//                the whole process's too; peak RSS is GNU time's %M;
//        anchor: /usr/bin/time sh -c 'zstd -dc B | tar -xO | grep -c ERROR'.
//      Medians are reported. The load average before and after is printed: the machine may be
//      shared, and wall times mean little on a busy one.
//      With analyzer rules (docs/analyzers.md), on the 180 MiB bundle, also alternately:
//        ours + rules:   the same analysis with the RULES below (8 with a literal to find, 2
//                        without: every line of their members is matched);
//        anchor + rules: `zstd -dc B | tar -xO | grep -c -E -e P1 … -e P10`, the same patterns.
//   3. Goals: the analysis ≤ 2 × the anchor's wall time; peak RSS ≤ 128 MiB; the 1 GiB
//      member's peak RSS within 10 % of the 180 MiB bundle's; with the rules, ≤ 2 × the anchor
//      with the same patterns. Exits 0 whatever the goals say.

import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { parseManifest } from '@guard/contract';
import { collectBundle, HOST_SOURCES } from '../packages/agent/src/bundle/index.ts';
import type { AgentConfig } from '../packages/agent/src/config.ts';
import { SILENT_PROGRESS } from '../packages/agent/src/progress.ts';
import { buildFindings, readArchive, ruleSpecs } from '../packages/server/src/analysis/index.ts';

const MiB = 1024 * 1024;
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const WORK = join(ROOT, 'bench/.work');
const NODE = join(ROOT, 'node_modules/.bin/node');
const GNU_TIME = '/usr/bin/time';
/** Bump when the generated bundles change: a cache with another version is rebuilt. */
const DATA_VERSION = 1;
const REPS = 3;
const GOAL_RATIO = 2;
const GOAL_RSS_MIB = 128;
const GOAL_FLAT = 0.1;

interface Built {
  path: string;
  manifestPath: string;
  size: number;
  logBytes: number;
}

// ---------------------------------------------------------------------------------------
// Child mode: one analysis, as the worker runs it

/** Rules as support staff would write them: patterns the anchor's `grep -E` reads the same way. */
const RULES = [
  { id: 'upload-cause', member: 'agent.log*', pattern: 'operation upload failed: cause [0-9]+' },
  { id: 'ring-buffer', member: 'agent.log*', pattern: 'ring buffer read failed: cause (1|2)[0-9]' },
  { id: 'dns', member: 'agent.log*', pattern: 'dns lookup failed' },
  { id: 'panic', member: 'agent.log*', pattern: 'panic: runtime error: index out of range' },
  { id: 'slow-drain', member: 'agent.log*', pattern: 'slow ring buffer drain.* lag_ms=99[0-9]' },
  { id: 'reload', member: 'agent.log*', pattern: 'config reload failed' },
  { id: 'starting', member: 'agent.log*', pattern: 'msg="guard-agent starting" version=0\\.1\\.0' },
  { id: 'other-host', member: 'agent.log*', pattern: 'host=db-[0-9]+' },
  { id: 'attempt-6', member: 'agent.log', pattern: 'attempt=6$' },
  { id: 'high-pid', member: 'agent.log', pattern: '"pid":6553[0-5],' },
].map((r) => ({ ...r, title: r.id, severity: 'warning' as const }));

if (process.argv[2] === '--analyse') {
  const [storePath, manifestPath, withRules] = process.argv.slice(3);
  const rules = withRules === '--rules' ? RULES : [];
  const started = performance.now();
  const manifest = parseManifest(JSON.parse(readFileSync(manifestPath, 'utf8')));
  // Opened as FsObjectStore.open opens a stored object (objects/fs-store.ts): 1 MiB reads.
  const file = await open(storePath, 'r');
  const facts = await readArchive(file.createReadStream({ highWaterMark: MiB }), manifest, {
    deadlineMs: 600_000,
    rules: ruleSpecs(rules),
  });
  const { findings } = buildFindings(facts, { manifest, uploadedAt: new Date().toISOString(), rules });
  const analysisMs = performance.now() - started;
  const log = facts.logs.get('agent.log');
  process.stdout.write(
    `${JSON.stringify({ analysis_ms: Math.round(analysisMs), findings: findings.length, lines: log?.lines, errors: log?.errors, codes: [...new Set(findings.map((f) => f.code))], rule_lines: facts.ruleHits.reduce((n, h) => n + h.count, 0) })}\n`,
  );
  process.exit(0);
}

// ---------------------------------------------------------------------------------------
// The bundles

const MESSAGES = Array.from(
  { length: 60 },
  (_, i) =>
    `operation ${['probe attach', 'upload', 'ring buffer read', 'config reload', 'dns lookup'][i % 5]} failed: cause ${i}`,
);

/** ~`bytes` of agent log text, deterministic in shape; times advance 10 ms a line from `start`. */
async function writeLog(path: string, bytes: number, start: number): Promise<void> {
  const out = createWriteStream(path);
  const blob = randomBytes(48 * 1024).toString('hex');
  let written = 0;
  let n = 0;
  let batch: string[] = [];
  const flush = async () => {
    const text = `${batch.join('\n')}\n`;
    batch = [];
    written += Buffer.byteLength(text);
    if (!out.write(text)) await new Promise<void>((r) => out.once('drain', () => r()));
  };
  while (written < bytes) {
    const t = new Date(start + n * 10).toISOString();
    const r = n % 100;
    const trace = blob.slice((n * 16) % (blob.length - 32), ((n * 16) % (blob.length - 32)) + 32);
    if (n === 5000) batch.push(`time=${t} level=INFO msg="guard-agent starting" version=0.1.0`);
    else if (n === 4990)
      batch.push('panic: runtime error: index out of range [3] with length 3', 'goroutine 1 [running]:');
    else if (r < 3)
      batch.push(`time=${t} level=ERROR msg="${MESSAGES[n % MESSAGES.length]}" trace=${trace} attempt=${n % 7}`);
    else if (r < 8) batch.push(`time=${t} level=WARN msg="slow ring buffer drain" lag_ms=${n % 997} cpu=${n % 2}`);
    else if (r < 12)
      batch.push(
        `{"time":"${t}","level":"INFO","msg":"exec observed","pid":${n % 65536},"comm":"sh","trace":"${trace}"}`,
      );
    else
      batch.push(
        `time=${t} level=INFO msg="heartbeat" host=web-01 ip=10.0.0.5 uptime_s=${n} events=${n % 1000} trace=${trace}`,
      );
    n++;
    if (batch.length >= 2000) await flush();
  }
  await flush();
  out.end();
  await new Promise<void>((ok, fail) => out.on('finish', ok).on('error', fail));
}

async function build(name: string, agentLogBytes: number, segmentBytes: number[], cap: number): Promise<Built> {
  const dir = join(WORK, name);
  const path = join(WORK, `${name}.tar.zst`);
  const manifestPath = join(WORK, `${name}.manifest.json`);
  const stamp = join(WORK, `${name}.version`);
  if (existsSync(path) && existsSync(stamp) && readFileSync(stamp, 'utf8') === String(DATA_VERSION)) {
    const meta = JSON.parse(readFileSync(manifestPath, 'utf8'));
    return { path, manifestPath, size: readFileSync(path).length, logBytes: meta.__logBytes };
  }
  process.stderr.write(`building ${name} (cached in bench/.work) …\n`);
  await rm(dir, { recursive: true, force: true });
  await rm(path, { force: true });
  await mkdir(join(dir, 'log'), { recursive: true });
  await mkdir(join(dir, 'state'), { recursive: true });
  const start = Date.parse('2026-11-20T00:00:00Z');
  await writeLog(join(dir, 'log', 'agent.log'), agentLogBytes, start);
  let logBytes = agentLogBytes;
  for (const [i, bytes] of segmentBytes.entries()) {
    const text = join(dir, `segment-${i}`);
    await writeLog(text, bytes, start - (i + 1) * 86_400_000);
    await writeFile(join(dir, 'log', `agent.log.${i + 1}.gz`), gzipSync(await readFile(text)));
    await rm(text);
    logBytes += bytes;
  }
  const config: AgentConfig = {
    source: undefined,
    effective: { log_path: join(dir, 'log', 'agent.log'), state_dir: join(dir, 'state') },
    logPath: join(dir, 'log', 'agent.log'),
    stateDir: join(dir, 'state'),
    environment: undefined,
    extraKeys: [],
  };
  const result = await collectBundle({
    config,
    out: path,
    cwd: dir,
    agentVersion: '0.1.0',
    trigger: 'console_push',
    requestId: 'brq_bench',
    now: () => new Date(),
    progress: SILENT_PROGRESS,
    sources: HOST_SOURCES,
    capBytes: cap,
  });
  await writeFile(manifestPath, JSON.stringify({ ...result.manifest, __logBytes: logBytes }));
  await writeFile(stamp, String(DATA_VERSION));
  await rm(dir, { recursive: true, force: true });
  return { path, manifestPath, size: result.size, logBytes };
}

// ---------------------------------------------------------------------------------------
// Runs

interface Run {
  wallS: number;
  rssKiB: number;
  /** CPU seconds (user + system) of the process and its children: steadier than wall time on a shared machine. */
  cpuS: number;
  out: string;
}

function timed(argv: string[], env: NodeJS.ProcessEnv = process.env): Run {
  const r = spawnSync(GNU_TIME, ['-f', '%e %M %U %S', ...argv], { encoding: 'utf8', env, maxBuffer: 64 * MiB });
  const last = r.stderr.trim().split('\n').at(-1) ?? '';
  const [wall, rss, user, sys] = last.split(' ').map(Number);
  if (r.status !== 0 || !Number.isFinite(wall)) throw new Error(`${argv.join(' ')} failed (${r.status}): ${r.stderr}`);
  return { wallS: wall, rssKiB: rss, cpuS: user + sys, out: r.stdout.trim() };
}

function ours(bundle: Built, withRules = false): Run {
  return timed(
    [
      NODE,
      '--max-semi-space-size=4',
      fileURLToPath(import.meta.url),
      '--analyse',
      bundle.path,
      bundle.manifestPath,
      ...(withRules ? ['--rules'] : []),
    ],
    { ...process.env, MALLOC_ARENA_MAX: '2', NODE_COMPILE_CACHE: join(ROOT, 'node_modules/.cache/guard-server') },
  );
}

/** The analysis' own wall time, as the child measured it (no process start, no module loading). */
function analysisS(run: Run): number {
  return JSON.parse(run.out).analysis_ms / 1000;
}

function anchor(path: string): Run {
  return timed(['sh', '-c', 'zstd -dc "$0" | tar -xO | grep -c ERROR', path]);
}

/** The same patterns through grep -E (rotated segments read as tar stores them: the rules' anchor reads less). */
function anchorRules(path: string): Run {
  const args = RULES.flatMap((r) => ['-e', r.pattern]);
  return timed(['sh', '-c', 'zstd -dc "$0" | tar -xO | grep -c -E "$@"', path, ...args]);
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const load = () =>
  os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');
const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS');

async function main(): Promise<void> {
  await mkdir(WORK, { recursive: true });
  const b180 = await build('insights-180m', 170 * MiB, [4 * MiB, 4 * MiB], 180 * MiB);
  const b1g = await build('insights-1g', 1024 * MiB, [], 1100 * MiB);
  // Warm the page cache and the compile cache: no timed run pays for either.
  anchor(b180.path);
  anchor(b1g.path);
  ours(b180);
  ours(b1g);
  const loadBefore = load();
  ours(b180, true);
  const runs = {
    ours: [] as Run[],
    anchor: [] as Run[],
    ours1g: [] as Run[],
    anchor1g: [] as Run[],
    oursRules: [] as Run[],
    anchorRules: [] as Run[],
  };
  for (let i = 0; i < REPS; i++) {
    runs.ours.push(ours(b180));
    runs.anchor.push(anchor(b180.path));
    runs.ours1g.push(ours(b1g));
    runs.anchor1g.push(anchor(b1g.path));
    runs.oursRules.push(ours(b180, true));
    runs.anchorRules.push(anchorRules(b180.path));
  }
  const loadAfter = load();
  const med = (rs: Run[], f: (r: Run) => number) => median(rs.map(f));
  const wall = (r: Run) => r.wallS;
  const rssMiB = (r: Run) => r.rssKiB / 1024;
  const row = (label: string, ourRuns: Run[], anchorRuns: Run[]) => {
    const a = med(anchorRuns, wall);
    const analysis = med(ourRuns, analysisS);
    return `| ${label} | ${analysis.toFixed(2)} s | ${med(ourRuns, wall).toFixed(2)} s | ${a.toFixed(2)} s | **${(analysis / a).toFixed(2)}** | **${med(ourRuns, rssMiB).toFixed(1)} MiB** | ${med(anchorRuns, rssMiB).toFixed(1)} MiB |`;
  };
  const ratio = med(runs.ours, analysisS) / med(runs.anchor, wall);
  const ratioProcess = med(runs.ours, wall) / med(runs.anchor, wall);
  const rss180 = med(runs.ours, rssMiB);
  const rss1g = med(runs.ours1g, rssMiB);
  const cpus = os.cpus();
  console.log(`bench:insights — ${new Date().toISOString()}`);
  console.log(
    `machine: ${cpus.length} × ${cpus[0]?.model ?? '?'}, ${(os.totalmem() / 1024 ** 3).toFixed(0)} GiB, Node ${process.versions.node}`,
  );
  console.log(`load average (1, 5, 15 min) before: ${loadBefore}; after: ${loadAfter}`);
  console.log(`what ours found (180 MiB): ${runs.ours[0].out}`);
  console.log(`the anchor's count: ${runs.anchor[0].out}\n`);
  console.log('| bundle | ours: analysis | ours: process | anchor | ratio | ours peak RSS | anchor peak RSS |');
  console.log('|---|---|---|---|---|---|---|');
  console.log(
    row(
      `${(b180.logBytes / MiB).toFixed(0)} MiB of logs (${(b180.size / MiB).toFixed(1)} MiB file)`,
      runs.ours,
      runs.anchor,
    ),
  );
  console.log(row(`1 GiB agent.log (${(b1g.size / MiB).toFixed(1)} MiB file)`, runs.ours1g, runs.anchor1g));
  console.log(
    row(
      `180 MiB, with ${RULES.length} analyzer rules (anchor: grep -E, the same patterns)`,
      runs.oursRules,
      runs.anchorRules,
    ),
  );
  console.log(
    `what ours found with the rules: ${runs.oursRules[0].out}; the anchor's count: ${runs.anchorRules[0].out}`,
  );
  const ratioRules = med(runs.oursRules, analysisS) / med(runs.anchorRules, wall);
  const cpuOf = (rs: Run[]) => med(rs, (r) => r.cpuS);
  console.log(
    `CPU (user + system of the whole process, median): ours ${cpuOf(runs.ours).toFixed(2)} s, with the rules ` +
      `${cpuOf(runs.oursRules).toFixed(2)} s (the rules: ${(cpuOf(runs.oursRules) - cpuOf(runs.ours)).toFixed(2)} s); ` +
      `anchor ${cpuOf(runs.anchor).toFixed(2)} s, grep -E with the patterns ${cpuOf(runs.anchorRules).toFixed(2)} s`,
  );
  console.log(
    `\nmedian of ${REPS}, alternating. ours: analysis = open → findings, timed inside the process (the worker runs in the`,
  );
  console.log('long-lived server); process = the whole `node` run with its start and module loading.');
  console.log(
    `goal: analysis ≤ ${GOAL_RATIO} × anchor — ${verdict(ratio <= GOAL_RATIO)} (${ratio.toFixed(2)}; whole process ${ratioProcess.toFixed(2)})`,
  );
  console.log(
    `goal: peak RSS ≤ ${GOAL_RSS_MIB} MiB — ${verdict(rss180 <= GOAL_RSS_MIB && rss1g <= GOAL_RSS_MIB)} (${rss180.toFixed(1)}, ${rss1g.toFixed(1)})`,
  );
  console.log(
    `goal: with rules, analysis ≤ ${GOAL_RATIO} × grep -E — ${verdict(ratioRules <= GOAL_RATIO)} (${ratioRules.toFixed(2)}; the rules cost ${(med(runs.oursRules, analysisS) - med(runs.ours, analysisS)).toFixed(2)} s over the plain analysis)`,
  );
  console.log(
    `goal: RSS flat for a 1 GiB member (within ${GOAL_FLAT * 100} %) — ${verdict(Math.abs(rss1g - rss180) / rss180 <= GOAL_FLAT)} (${(((rss1g - rss180) / rss180) * 100).toFixed(1)} %)`,
  );
}

await main();
