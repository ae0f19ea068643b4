// `npm run bench:daemon`: the memory of `guard-agent daemon` (issue 12: the daemon should idle
// small), beside `guard-agent --version` (the smallest agent process) in the same run.
//
//   1. Starts bin/guard-server (child, fresh data dir under bench/.work), runs `setup --json`,
//      builds an agent home (agent.log of LOG_MIB MiB of log lines) and enrols it.
//   2. Starts `guard-agent daemon` (bin/guard-agent: the launcher's V8 flags and compile
//      cache) and lets it idle IDLE_MS: heartbeat sent, command poll held. Reads its RSS
//      (/proc/<pid>/status VmRSS, RssAnon, RssFile).
//   3. An admin asks for a bundle; while it is made the daemon's and its job process's RSS are
//      polled every 50 ms (the job's peak is its own VmHWM, read just before it exits, and the
//      polled maximum). When the request is done the daemon idles IDLE_MS again and its RSS is
//      read: what a request leaves behind in the long-running process.
//   4. Prints the table. Exits 0 whatever the figures; non-zero only when something fails.

import { spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { freePort, guardSetup, ROOT, sleep, spawnGuard } from './lib-tls.ts';

const MiB = 1024 * 1024;
const WORK = join(ROOT, 'bench/.work/daemon');
const AGENT_BIN = join(ROOT, 'packages/agent/bin/guard-agent');
const LOG_MIB = 60;
const IDLE_MS = 8000;

interface Rss {
  rss: number;
  anon: number;
  file: number;
  hwm: number;
}

function rssOf(pid: number): Rss | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kib = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) * 1024;
    return { rss: kib('VmRSS'), anon: kib('RssAnon'), file: kib('RssFile'), hwm: kib('VmHWM') };
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((t) =>
      readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number),
    );
  } catch {
    return [];
  }
}

const mib = (b: number) => (b / MiB).toFixed(1);

async function main(): Promise<void> {
  await rm(WORK, { recursive: true, force: true });
  await mkdir(join(WORK, 'home', 'log'), { recursive: true });
  await mkdir(join(WORK, 'home', 'state'), { recursive: true });
  const dataDir = join(WORK, 'data');
  const setup = guardSetup(dataDir);
  const server = await spawnGuard({ dataDir, port: await freePort(), caPath: '/dev/null' });
  try {
    const home = join(WORK, 'home');
    const config = join(home, 'agent.yaml');
    await writeFile(config, `log_path: ${join(home, 'log', 'agent.log')}\nstate_dir: ${join(home, 'state')}\n`);
    const line = `time=2026-11-21T08:00:28.000Z level=INFO msg="heartbeat" host=web-01 ip=10.0.0.5 uptime_s=240 trace=0123456789abcdef\n`;
    await writeFile(join(home, 'log', 'agent.log'), line.repeat(Math.floor((LOG_MIB * MiB) / line.length)));
    const enrolled = spawnSync(AGENT_BIN, ['--config', config, 'enroll', '--url', server.url, '--token', '-'], {
      input: `${setup.enroll_token}\n`,
      encoding: 'utf8',
    });
    if (enrolled.status !== 0) throw new Error(`enroll failed: ${enrolled.stderr}`);
    const agentId = JSON.parse(readFileSync(join(home, 'state', 'enrollment.json'), 'utf8')).agent_id;

    const versionRun = spawnSync('/usr/bin/time', ['-f', '%M', AGENT_BIN, '--version'], { encoding: 'utf8' });
    const versionPeak = Number(versionRun.stderr.trim().split('\n').at(-1)) * 1024;

    const daemon = spawn(AGENT_BIN, ['--config', config, 'daemon'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    daemon.stderr?.on('data', (c: Buffer) => {
      log += c.toString('utf8');
    });
    const pid = daemon.pid as number;
    await sleep(IDLE_MS);
    const idle = rssOf(pid);
    if (!idle) throw new Error(`the daemon is not running:\n${log}`);

    const asked = await fetch(`${server.url}/v1/servers/${agentId}/bundle-requests`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.admin_token}` },
    });
    const request = (await asked.json()) as { id: string };
    let daemonPeak = 0;
    let jobPeak = 0;
    let state = '';
    const t0 = Date.now();
    while (Date.now() - t0 < 120_000) {
      daemonPeak = Math.max(daemonPeak, rssOf(pid)?.rss ?? 0);
      for (const child of childrenOf(pid)) jobPeak = Math.max(jobPeak, rssOf(child)?.hwm ?? 0);
      const r = await fetch(`${server.url}/v1/bundle-requests/${request.id}`, {
        headers: { authorization: `Bearer ${setup.admin_token}` },
      });
      state = ((await r.json()) as { state: string }).state;
      if (['done', 'failed', 'expired', 'interrupted'].includes(state)) break;
      await sleep(50);
    }
    const requestMs = Date.now() - t0;
    await sleep(IDLE_MS);
    const after = rssOf(pid);
    daemon.kill('SIGTERM');
    await new Promise((r) => daemon.once('exit', r));

    console.log(`bench:daemon — ${new Date().toISOString()}`);
    console.log(
      `machine: ${os.cpus().length} × ${os.cpus()[0]?.model}, Node ${process.versions.node}; load ${os
        .loadavg()
        .map((l) => l.toFixed(2))
        .join(' ')}`,
    );
    console.log(`request: ${state} in ${(requestMs / 1000).toFixed(1)} s (agent.log ${LOG_MIB} MiB)\n`);
    console.log('| process | RSS | of which anonymous | of which file pages |');
    console.log('|---|---|---|---|');
    console.log(`| guard-agent --version (peak) | ${mib(versionPeak)} MiB | | |`);
    console.log(
      `| daemon, idle ${IDLE_MS / 1000} s after start | **${mib(idle.rss)} MiB** | ${mib(idle.anon)} MiB | ${mib(idle.file)} MiB |`,
    );
    console.log(`| daemon, while its request was made (max) | ${mib(daemonPeak)} MiB | | |`);
    console.log(`| job process (collect + upload), peak | ${mib(jobPeak)} MiB | | |`);
    if (after)
      console.log(
        `| daemon, idle ${IDLE_MS / 1000} s after the request | **${mib(after.rss)} MiB** | ${mib(after.anon)} MiB | ${mib(after.file)} MiB |`,
      );
  } finally {
    await server.stop();
  }
}

await main();
