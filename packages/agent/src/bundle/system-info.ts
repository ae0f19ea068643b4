// system.json (contract: packages/contract/src/system-info.ts): kernel, distro, eBPF probe
// status, recent error count, agent version; and what support asks first: uptime, memory, the
// file systems of the log and state directories, time synchronisation, the detectors' status
// and the spool depth. Each source is read on its own; one that fails becomes a collection
// error and a null field, never a failed bundle (as Datadog's flare does).
//
// Time synchronisation is read from state files only (no timedatectl, no D-Bus, no chronyc):
// systemd-timesyncd touches /run/systemd/timesync/synchronized once the clock is synchronised,
// so the file present is `true`, its directory without it `false`. The kernel's own flag
// (adjtimex STA_UNSYNC) has no /proc or /sys file, and chronyd and ntpd keep their state behind
// a socket: when only their pid file is found the answer is "unknown", naming the daemon.

import { readFile, stat, statfs as statFs } from 'node:fs/promises';
import os from 'node:os';
import { dirname, join } from 'node:path';
import type { CollectionError } from '@guard/contract/manifest';
import type { FileSystemUse, SystemDetectorStatus, SystemInfo, TIME_SYNC_SOURCES } from '@guard/contract/system-info';
import { describeSystemError } from '../errors.ts';

/** Where the host facts live; tests point these at fixture files. */
export interface SystemSources {
  osRelease: string;
  btfVmlinux: string;
  unprivilegedBpfDisabled: string;
  /** The sources below default to HOST_SOURCES' (tests point them at fixtures). */
  /** /proc/uptime, /proc/stat (btime), /proc/meminfo. */
  procUptime?: string;
  procStat?: string;
  procMeminfo?: string;
  /** systemd-timesyncd's run directory; `synchronized` inside it once the clock is. */
  timesyncDir?: string;
  /** Pid files of the other time daemons, by name. */
  timeDaemonPidFiles?: { chronyd: string; ntpd: string };
  /** hosts(5) and passwd(5): the host's own names for `collect --obfuscate` (known-names.ts). */
  etcHosts?: string;
  etcPasswd?: string;
}

export const HOST_SOURCES: Required<SystemSources> = {
  osRelease: '/etc/os-release',
  btfVmlinux: '/sys/kernel/btf/vmlinux',
  unprivilegedBpfDisabled: '/proc/sys/kernel/unprivileged_bpf_disabled',
  procUptime: '/proc/uptime',
  procStat: '/proc/stat',
  procMeminfo: '/proc/meminfo',
  timesyncDir: '/run/systemd/timesync',
  timeDaemonPidFiles: { chronyd: '/run/chrony/chronyd.pid', ntpd: '/run/ntpd.pid' },
  etcHosts: '/etc/hosts',
  etcPasswd: '/etc/passwd',
};

/** The agent's eBPF probe writes its last status here, under state_dir. */
export const PROBE_STATUS_FILE = 'probe-status.json';
const SMALL_FILE_MAX_BYTES = 64 * 1024;
/** os-release keys that identify the distro; the rest (URLs, logos) is noise. */
const DISTRO_KEYS = ['ID', 'ID_LIKE', 'NAME', 'VERSION_ID', 'VERSION_CODENAME', 'PRETTY_NAME'];

export interface SystemInfoInput {
  agentVersion: string;
  stateDir: string;
  logPath: string;
  errorLines24h: number | null;
  now: Date;
  sources: SystemSources;
}

/** What this agent writes: every second-round field present (null when its source failed). */
export type CollectedSystemInfo = Required<SystemInfo>;

export async function collectSystemInfo(
  input: SystemInfoInput,
): Promise<{ info: CollectedSystemInfo; errors: CollectionError[] }> {
  const errors: CollectionError[] = [];
  const attempt = async <T>(source: string, read: () => Promise<T>): Promise<T | null> => {
    try {
      return await read();
    } catch (error) {
      errors.push({ source, message: describeSystemError(error) });
      return null;
    }
  };
  const sources: Required<SystemSources> = { ...HOST_SOURCES, ...input.sources };
  const distro = await attempt(sources.osRelease, async () => parseOsRelease(await readSmall(sources.osRelease)));
  const btfPresent = await attempt(sources.btfVmlinux, async () => {
    try {
      await stat(sources.btfVmlinux);
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw error;
    }
  });
  const unprivileged = await attempt(sources.unprivilegedBpfDisabled, async () => {
    const text = (await readSmall(sources.unprivilegedBpfDisabled)).trim();
    if (!/^-?\d+$/.test(text)) throw new Error(`unexpected content ${JSON.stringify(text.slice(0, 40))}`);
    return Number(text);
  });
  const probeFile = join(input.stateDir, PROBE_STATUS_FILE);
  const probeStatus = await attempt(probeFile, async () => {
    let text: string;
    try {
      text = await readSmall(probeFile);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null; // no probe has run yet
      throw error;
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new Error('not valid JSON');
    }
  });
  const uptime = await attempt(sources.procUptime, async () => {
    const seconds = Number.parseFloat((await readSmall(sources.procUptime)).split(/\s/)[0]);
    if (!Number.isFinite(seconds)) throw new Error('unexpected content');
    const btime = await attempt(sources.procStat, async () => {
      const m = /^btime (\d+)$/m.exec(await readProc(sources.procStat));
      if (!m) throw new Error('no btime line');
      return new Date(Number(m[1]) * 1000).toISOString();
    });
    return { seconds: Math.floor(seconds), booted_at: btime };
  });
  const memory = await attempt(sources.procMeminfo, async () => {
    const text = await readSmall(sources.procMeminfo);
    const kib = (key: string) => {
      const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text);
      if (!m) throw new Error(`no ${key} line`);
      return Number(m[1]) * 1024;
    };
    return { total_bytes: kib('MemTotal'), available_bytes: kib('MemAvailable') };
  });
  const logDir = dirname(input.logPath);
  const disk = {
    log_dir: await attempt(logDir, () => fileSystemUse(logDir)),
    state_dir: await attempt(input.stateDir, () => fileSystemUse(input.stateDir)),
  };
  const statusObject = isObject(probeStatus) ? probeStatus : undefined;
  const detectors = Array.isArray(statusObject?.detectors)
    ? {
        updated_at: typeof statusObject.updated_at === 'string' ? statusObject.updated_at : null,
        list: (statusObject.detectors as unknown[]).filter(
          (d): d is SystemDetectorStatus => isObject(d) && typeof d.name === 'string' && typeof d.state === 'string',
        ),
      }
    : null;
  // The daemon's durable spool (detect/store.ts), loaded only here: collect needs no more of detect/.
  const { readSpool, STORE_FILE } = await import('../detect/index.ts');
  const spool = await attempt(join(input.stateDir, STORE_FILE), async () => readSpool(input.stateDir) ?? null);
  return {
    info: {
      agent_version: input.agentVersion,
      collected_at: input.now.toISOString(),
      kernel: { release: os.release(), version: os.version(), machine: os.machine() },
      distro,
      ebpf: { btf_present: btfPresent, unprivileged_bpf_disabled: unprivileged, probe_status: probeStatus },
      agent_log: { error_lines_last_24h: input.errorLines24h },
      uptime,
      memory,
      disk,
      time_sync: await timeSync(sources),
      detectors,
      spool,
    },
    errors,
  };
}

async function fileSystemUse(path: string): Promise<FileSystemUse> {
  const s = await statFs(path);
  const unit = Number((s as { frsize?: number }).frsize || s.bsize);
  return {
    path,
    size_bytes: Number(s.blocks) * unit,
    free_bytes: Number(s.bfree) * unit,
    available_bytes: Number(s.bavail) * unit,
  };
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch {
    return false;
  }
}

type TimeSync = {
  synchronized: boolean | 'unknown';
  source: (typeof TIME_SYNC_SOURCES)[number] | null;
  detail: string;
};

/** Policy in the header comment: a state file's word, else "unknown", honestly. */
async function timeSync(sources: Required<SystemSources>): Promise<TimeSync> {
  if (await exists(join(sources.timesyncDir, 'synchronized')))
    return {
      synchronized: true,
      source: 'systemd-timesyncd',
      detail: `${join(sources.timesyncDir, 'synchronized')} is present`,
    };
  if (await exists(sources.timesyncDir))
    return {
      synchronized: false,
      source: 'systemd-timesyncd',
      detail: `systemd-timesyncd has run (${sources.timesyncDir}) but has not synchronised the clock since boot`,
    };
  for (const [name, pidFile] of Object.entries(sources.timeDaemonPidFiles) as ['chronyd' | 'ntpd', string][])
    if (await exists(pidFile))
      return {
        synchronized: 'unknown',
        source: name,
        detail: `${name} runs (${pidFile}); its synchronisation state is not kept in a file`,
      };
  return {
    synchronized: 'unknown',
    source: null,
    detail: 'no state of systemd-timesyncd, chronyd or ntpd found',
  };
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A /proc file: stat says size 0, so it is read whole, but bounded. */
async function readProc(path: string): Promise<string> {
  const text = (await readFile(path)).toString('utf8');
  if (text.length > 4 * SMALL_FILE_MAX_BYTES) throw new Error('unexpectedly large');
  return text;
}

async function readSmall(path: string): Promise<string> {
  const bytes = await readFile(path);
  if (bytes.length > SMALL_FILE_MAX_BYTES) throw new Error(`larger than ${SMALL_FILE_MAX_BYTES} bytes`);
  return bytes.toString('utf8');
}

/** os-release(5): KEY=value lines, values optionally quoted with shell-style escapes. */
export function parseOsRelease(text: string): Record<string, string> {
  const distro: Record<string, string> = {};
  for (const raw of text.split('\n')) {
    const m = /^([A-Z_][A-Z0-9_]*)=(.*)$/.exec(raw.trim());
    if (!m || !DISTRO_KEYS.includes(m[1])) continue;
    let value = m[2];
    const q = value[0];
    if ((q === '"' || q === "'") && value.endsWith(q) && value.length >= 2) {
      value = value.slice(1, -1);
      if (q === '"') value = value.replace(/\\(["\\$`])/g, '$1');
    }
    distro[m[1]] = value;
  }
  return distro;
}

/**
 * Counts ERROR lines of the last 24 hours. Fed only the lines that contain "ERROR"; a line
 * counts when its level is ERROR (slog text or JSON) and its time is within the window.
 */
export class ErrorLineCounter {
  count = 0;
  private readonly since: number;
  private readonly until: number;
  constructor(now: Date, windowMs = 24 * 60 * 60 * 1000) {
    this.until = now.getTime();
    this.since = this.until - windowMs;
  }

  onLine(line: Buffer): void {
    const text = line.toString('latin1', 0, Math.min(line.length, 4096));
    if (!/(?:^|[ \t])level=ERROR(?:[ \t]|$)|"level"[ \t]*:[ \t]*"ERROR"/.test(text)) return;
    const t = /(?:^|[ \t])time=("?)([0-9T:.+\-Z ]+?)\1(?:[ \t]|$)|"time"[ \t]*:[ \t]*"([^"]+)"/.exec(text);
    const when = t ? Date.parse(t[2] ?? t[3]) : Number.NaN;
    if (when >= this.since && when <= this.until) this.count++;
  }
}
