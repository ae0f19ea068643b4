// A webhook receiver in a child process of its own (so it shares no event loop with what is
// measured), and the small measuring helpers bench/peers.ts uses: CPU time of a process tree
// from /proc, percentiles, the load average, a text table.
//
// The receiver is startReceiver (lib-tls.ts) in a child forked from this file: it records
// each delivery's data.signal_id and its receipt time (CLOCK_MONOTONIC, comparable across
// processes), counts distinct signals and duplicates, and answers the parent over IPC.

import { type ChildProcess, fork } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type Receipt, startReceiver, type TestPki } from './lib-tls.ts';

const SELF = fileURLToPath(import.meta.url);
const CHILD_FLAG = '--bench-receiver-child';

type ToReceiver =
  | { type: 'start'; certPem: string; keyPem: string }
  | { type: 'reset' }
  | { type: 'wait'; count: number; timeoutMs: number }
  | { type: 'dump' };

type FromReceiver =
  | { type: 'ready'; port: number }
  | { type: 'reset' }
  | { type: 'waited'; distinct: number; duplicates: number; lastUs: number; reached: boolean; meanBytes: number }
  | { type: 'dump'; signalIds: string[]; receivedUs: number[] };

function receiverChild(): void {
  const send = (m: FromReceiver) => process.send?.(m);
  let first = new Map<string, number>();
  let duplicates = 0;
  let lastUs = 0;
  let bytes = 0;
  let waiter: { count: number; timer: NodeJS.Timeout } | undefined;
  const answer = (reached: boolean) => {
    if (!waiter) return;
    clearTimeout(waiter.timer);
    waiter = undefined;
    const meanBytes = bytes / Math.max(1, first.size + duplicates);
    send({ type: 'waited', distinct: first.size, duplicates, lastUs, reached, meanBytes });
  };
  const onReceipt = (r: Receipt) => {
    const us = Number(r.receivedNs / 1000n);
    bytes += r.body.length;
    if (first.has(r.signalId)) duplicates++;
    else {
      first.set(r.signalId, us);
      lastUs = us;
    }
    if (waiter && first.size >= waiter.count) answer(true);
  };
  process.on('message', async (m: ToReceiver) => {
    if (m.type === 'start') {
      const r = await startReceiver({ pki: { certPem: m.certPem, keyPem: m.keyPem }, onReceipt });
      send({ type: 'ready', port: r.port });
    } else if (m.type === 'reset') {
      first = new Map();
      duplicates = 0;
      lastUs = 0;
      bytes = 0;
      send({ type: 'reset' });
    } else if (m.type === 'wait') {
      waiter = { count: m.count, timer: setTimeout(() => answer(false), m.timeoutMs) };
      if (first.size >= m.count) answer(true);
    } else if (m.type === 'dump') {
      send({ type: 'dump', signalIds: [...first.keys()], receivedUs: [...first.values()] });
    }
  });
  process.on('disconnect', () => process.exit(0));
}

/** The receiver child, seen from the parent. */
export class ReceiverProcess {
  readonly child: ChildProcess = fork(SELF, [CHILD_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  port = 0;

  private ask<T extends FromReceiver['type']>(m: ToReceiver, type: T): Promise<Extract<FromReceiver, { type: T }>> {
    return new Promise((resolve, reject) => {
      const onMessage = (r: FromReceiver) => {
        if (r.type !== type) return;
        this.child.off('message', onMessage);
        this.child.off('exit', onExit);
        resolve(r as Extract<FromReceiver, { type: T }>);
      };
      const onExit = () => reject(new Error('the receiver process exited'));
      this.child.on('message', onMessage);
      this.child.once('exit', onExit);
      this.child.send(m);
    });
  }

  async start(pki: TestPki): Promise<void> {
    this.port = (await this.ask({ type: 'start', certPem: pki.certPem, keyPem: pki.keyPem }, 'ready')).port;
  }

  /** Forgets every receipt so far. */
  async reset(): Promise<void> {
    await this.ask({ type: 'reset' }, 'reset');
  }

  /**
   * Waits until `count` distinct signals have arrived since the last reset, or `timeoutMs`
   * passed: how many did (and duplicates), the receipt time (µs) of the last new one, the mean
   * body size.
   */
  waitFor(count: number, timeoutMs: number) {
    return this.ask({ type: 'wait', count, timeoutMs }, 'waited');
  }

  /** Each distinct signal id since the last reset with its first receipt time (µs). */
  dump() {
    return this.ask({ type: 'dump' }, 'dump');
  }

  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
  }
}

// ---------------------------------------------------------------------------------------
// Measuring helpers

const TICKS_PER_S = 100; // USER_HZ on Linux

interface ProcStat {
  ppid: number;
  /** utime + stime + cutime + cstime, in clock ticks. */
  ticks: number;
}

function readStat(pid: number): ProcStat | undefined {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    // After "pid (comm) ": state ppid … utime(11) stime(12) cutime(13) cstime(14).
    return { ppid: Number(f[1]), ticks: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms) used so far by the processes rooted at `roots` and all their descendants. Each
 * process counts its own time and that of its children it has reaped (cutime, cstime), so a
 * PostgreSQL backend that exited between two readings is still counted (in the postmaster's).
 */
export function treeCpuMs(roots: number[]): number {
  const stats = new Map<number, ProcStat>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    const s = readStat(Number(name));
    if (s) stats.set(Number(name), s);
  }
  const children = new Map<number, number[]>();
  for (const [pid, s] of stats) {
    const list = children.get(s.ppid) ?? [];
    list.push(pid);
    children.set(s.ppid, list);
  }
  let ticks = 0;
  const seen = new Set<number>();
  const stack = roots.filter((p) => p > 0);
  while (stack.length > 0) {
    const pid = stack.pop() as number;
    if (seen.has(pid)) continue;
    seen.add(pid);
    ticks += stats.get(pid)?.ticks ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return (ticks * 1000) / TICKS_PER_S;
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export const fmt = (n: number, digits = 0): string =>
  Number.isFinite(n)
    ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
    : '–';

/** The 1-minute load average, two decimals. */
export const load1 = (): string => os.loadavg()[0].toFixed(2);

/** A Markdown table, columns padded. */
export function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (c ?? '').padEnd(widths[i])).join(' | ')} |`;
  return [line(rows[0]), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.slice(1).map(line)].join('\n');
}

if (process.argv[2] === CHILD_FLAG && import.meta.url === pathToFileURL(process.argv[1]).href) receiverChild();
