// Hostile bundles beside the API: `npm run bench:hostile [-- --seconds S --bundles N]`.
// Issue 19, finding 1: a 1 KB bundle whose gzip segment inflated to 15 lines of 1 MiB full of
// `rting` took 35 s to analyse on the server's event loop and held /healthz up to 6.2 s.
//
// One real guard-server (bin/guard-server, SQLite, filesystem store) and, in the same run:
//   (1) baseline: the API's latency with nothing to analyse — GET /v1/servers (an admin
//       token: authentication, a query, JSON) and GET /healthz, paced at 40 requests/s for S s;
//   (2) hostile: the same while an agent has uploaded N bundles whose rotated segment is a
//       gzip bomb of `rting` lines inflating to the 1 GiB a bundle's segments may give (1 MB
//       on the wire), so the analysis threads stay busy for the whole phase; the server's own
//       event-loop delay from /metrics (guard_server_nodejs_eventloop_lag_*), and how long each
//       analysis took;
//   (3) the anchor: the same hostile archive read on an event loop, as the service did before
//       the analysis moved to worker threads — here, in this process, with the loop's delay
//       measured by monitorEventLoopDelay: what every request would have waited.
// Prints p50/p99/max per phase and the ratio hostile/baseline; the goal is an unchanged p99.
// Exits 0 whatever the figures say.

import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { parseArgs } from 'node:util';
import { createGzip, zstdCompressSync } from 'node:zlib';
import tar from 'tar-stream';
import { parseManifest } from '../packages/contract/src/index.ts';
import { readArchive } from '../packages/server/src/analysis/index.ts';
import { insightsThreads } from '../packages/server/src/insights/index.ts';
import { api, enrollAgent, presign, putObject, register } from '../packages/server/test/harness.ts';
import { createTestPki, freePort, guardSetup, sleep, spawnGuard } from './lib-tls.ts';

const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '20' }, bundles: { type: 'string', default: '6' } },
});
const SECONDS = Number(values.seconds);
const BUNDLES = Number(values.bundles);
const RATE = 40;
const MiB = 1024 * 1024;
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function stats(ms: number[]) {
  const s = [...ms].sort((a, b) => a - b);
  const at = (p: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))] ?? Number.NaN;
  return { n: s.length, p50: at(0.5), p99: at(0.99), max: s[s.length - 1] ?? Number.NaN };
}
const f = (ms: number) => (ms < 10 ? ms.toFixed(2) : ms.toFixed(0));
const show = (label: string, s: ReturnType<typeof stats>) =>
  `${label.padEnd(34)} n=${String(s.n).padStart(4)}  p50 ${f(s.p50).padStart(6)} ms  p99 ${f(s.p99).padStart(6)} ms  max ${f(s.max).padStart(6)} ms`;

/** A gzip of `lines` lines of 1 MiB full of `rting`. */
async function rtingBomb(lines: number): Promise<Buffer> {
  const line = Buffer.from(`${'rting'.repeat(209_715)}\n`);
  const gz = createGzip({ level: 9 });
  const out: Buffer[] = [];
  const done = (async () => {
    for await (const c of gz) out.push(c as Buffer);
  })();
  for (let i = 0; i < lines; i++) if (!gz.write(line)) await new Promise((r) => gz.once('drain', r));
  gz.end();
  await done;
  return Buffer.concat(out);
}

async function hostileBundle(): Promise<{ bytes: Buffer; manifest: Record<string, unknown> }> {
  const log = Buffer.from('time=2026-11-27T10:00:00Z level=INFO msg="guard-agent starting"\n');
  const segment = await rtingBomb(1024);
  const members = [
    { name: 'agent.log', body: log },
    { name: 'agent.log.1.gz', body: segment },
  ];
  const manifest = {
    bundle_version: 1,
    agent_version: '0.1.0',
    generated_at: new Date().toISOString(),
    trigger: 'cli',
    contents: members.map((m) => ({ name: m.name, size: m.body.length, sha256: sha256(m.body) })),
    trimmed_segments: [],
    redaction: { pattern: '^(api_key)$', values_masked: 0, members: {} },
    collection_errors: [],
  };
  const pack = tar.pack();
  for (const m of [...members, { name: 'BUNDLE-MANIFEST.json', body: Buffer.from(JSON.stringify(manifest)) }])
    pack.entry({ name: m.name }, m.body);
  pack.finalize();
  const parts: Buffer[] = [];
  for await (const c of pack as unknown as Readable) parts.push(c as Buffer);
  return { bytes: zstdCompressSync(Buffer.concat(parts)), manifest };
}

/** GET `path` at RATE/s for `seconds`, each request timed from just before it is sent. */
async function paced(base: string, path: string, token: string | undefined, seconds: number): Promise<number[]> {
  const times: number[] = [];
  const pending: Promise<void>[] = [];
  const start = performance.now();
  for (let i = 0; i < seconds * RATE; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    pending.push(
      (async () => {
        const t0 = performance.now();
        const r = await api(base, 'GET', path, token ? { token } : {});
        if (r.status !== 200) throw new Error(`GET ${path} answered ${r.status}`);
        times.push(performance.now() - t0);
      })(),
    );
  }
  await Promise.all(pending);
  return times;
}

async function loopLag(metricsUrl: string): Promise<Record<string, number>> {
  const text = await (await fetch(metricsUrl)).text();
  const out: Record<string, number> = {};
  for (const m of text.matchAll(/^guard_server_nodejs_eventloop_lag_(p50|p99|max)_seconds (\S+)$/gm))
    out[m[1]] = Number(m[2]) * 1000;
  return out;
}

async function main(): Promise<void> {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-bench-hostile-'));
  const pki = await createTestPki(dir);
  const caPath = join(dir, 'ca.pem');
  await writeFile(caPath, pki.caPem);
  const dataDir = join(dir, 'data');
  const setup = guardSetup(dataDir);
  const metricsPort = await freePort();
  const guard = await spawnGuard({
    dataDir,
    port: await freePort(),
    caPath,
    args: ['--metrics-listen', `127.0.0.1:${metricsPort}`],
  });
  const metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  try {
    const load = () =>
      os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ');
    console.log(`bench:hostile — ${os.availableParallelism()} cores, load ${load()}`);
    const { bytes, manifest } = await hostileBundle();
    console.log(
      `hostile bundle: ${bytes.length} bytes on the wire; agent.log.1.gz inflates to 1 GiB of \`rting\` lines (1 MiB each)`,
    );
    const agent = await enrollAgent(guard.url, setup.enroll_token);
    const base = guard.url;
    const admin = setup.admin_token;

    // (1) baseline
    const [b1, b2] = await Promise.all([
      paced(base, '/v1/servers', admin, SECONDS),
      paced(base, '/healthz', undefined, SECONDS),
    ]);
    const lagBefore = await loopLag(metricsUrl);

    // (2) hostile bundles queued, the same requests meanwhile
    const ids: string[] = [];
    for (let i = 0; i < BUNDLES; i++) {
      const p = await presign(base, agent.api_key, { size: bytes.length, sha256: sha256(bytes) });
      await putObject(p.json.url, bytes);
      const r = await register(base, agent.api_key, {
        object_key: p.json.object_key,
        sha256: sha256(bytes),
        size: bytes.length,
        manifest,
      });
      if (r.status !== 201) throw new Error(`register answered ${r.status}: ${r.text}`);
      ids.push(r.json.bundle_id);
    }
    const hostileStart = performance.now();
    const [h1, h2] = await Promise.all([
      paced(base, '/v1/servers', admin, SECONDS),
      paced(base, '/healthz', undefined, SECONDS),
    ]);
    const lagDuring = await loopLag(metricsUrl);
    let analysed = 0;
    for (const id of ids) {
      const r = await api(base, 'GET', `/v1/support/bundles/${id}/insights`, { token: admin });
      if (r.json.state === 'done' || r.json.state === 'failed') analysed++;
    }
    const phase = (performance.now() - hostileStart) / 1000;

    // (3) the anchor: the same archive read on an event loop (this one)
    const delay = monitorEventLoopDelay({ resolution: 5 });
    delay.enable();
    const t0 = performance.now();
    const chunks = Readable.from(
      (function* () {
        for (let at = 0; at < bytes.length; at += MiB) yield bytes.subarray(at, at + MiB);
      })(),
    );
    await readArchive(chunks, parseManifest(manifest), { deadlineMs: 600_000 });
    const inLoopMs = performance.now() - t0;
    delay.disable();

    console.log('');
    console.log(show('baseline  GET /v1/servers', stats(b1)));
    console.log(show('baseline  GET /healthz', stats(b2)));
    console.log(show('hostile   GET /v1/servers', stats(h1)));
    console.log(show('hostile   GET /healthz', stats(h2)));
    const ratio = stats(h1).p99 / stats(b1).p99;
    console.log(
      `\np99 while hostile bundles are analysed / baseline p99 (GET /v1/servers): ${ratio.toFixed(2)}×  (goal: unchanged, ≤ 1.5×)`,
    );
    console.log(
      `server event-loop delay (/metrics) p99/max: baseline ${f(lagBefore.p99)}/${f(lagBefore.max)} ms, with hostile bundles ${f(lagDuring.p99)}/${f(lagDuring.max)} ms`,
    );
    console.log(
      `analyses: ${analysed} of ${BUNDLES} hostile bundles done in the ${phase.toFixed(0)} s phase (worker threads: ${insightsThreads(os.availableParallelism())})`,
    );
    console.log(
      `anchor — the same archive read on an event loop: ${inLoopMs.toFixed(0)} ms, the loop held up to ${(delay.max / 1e6).toFixed(0)} ms at a time (p99 ${(delay.percentile(99) / 1e6).toFixed(0)} ms)`,
    );
    console.log(`load at end ${load()}`);
  } finally {
    await guard.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
