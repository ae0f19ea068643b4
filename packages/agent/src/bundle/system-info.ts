// system.json: kernel, distro, eBPF probe status, recent error count, agent version.
// Each source is read on its own; one that fails becomes a collection error and a null
// field, never a failed bundle (as Datadog's flare does).

import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import type { CollectionError } from '@guard/contract/manifest';
import { describeSystemError } from '../errors.ts';

/** Where the host facts live; tests point these at fixture files. */
export interface SystemSources {
  osRelease: string;
  btfVmlinux: string;
  unprivilegedBpfDisabled: string;
  /** hosts(5) and passwd(5): the host's own names for `collect --obfuscate` (known-names.ts). */
  etcHosts?: string;
  etcPasswd?: string;
}

export const HOST_SOURCES: SystemSources = {
  osRelease: '/etc/os-release',
  btfVmlinux: '/sys/kernel/btf/vmlinux',
  unprivilegedBpfDisabled: '/proc/sys/kernel/unprivileged_bpf_disabled',
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
  errorLines24h: number | null;
  now: Date;
  sources: SystemSources;
}

export interface SystemInfo {
  agent_version: string;
  collected_at: string;
  kernel: { release: string; version: string; machine: string };
  distro: Record<string, string> | null;
  ebpf: {
    btf_present: boolean | null;
    unprivileged_bpf_disabled: number | null;
    probe_status: unknown;
  };
  agent_log: { error_lines_last_24h: number | null };
}

export async function collectSystemInfo(
  input: SystemInfoInput,
): Promise<{ info: SystemInfo; errors: CollectionError[] }> {
  const errors: CollectionError[] = [];
  const attempt = async <T>(source: string, read: () => Promise<T>): Promise<T | null> => {
    try {
      return await read();
    } catch (error) {
      errors.push({ source, message: describeSystemError(error) });
      return null;
    }
  };
  const { sources } = input;
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
  return {
    info: {
      agent_version: input.agentVersion,
      collected_at: input.now.toISOString(),
      kernel: { release: os.release(), version: os.version(), machine: os.machine() },
      distro,
      ebpf: { btf_present: btfPresent, unprivileged_bpf_disabled: unprivileged, probe_status: probeStatus },
      agent_log: { error_lines_last_24h: input.errorLines24h },
    },
    errors,
  };
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
