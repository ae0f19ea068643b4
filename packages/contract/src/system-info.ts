// system.json of a support bundle (spec 2.1: kernel version, distro identity, eBPF probe status,
// recent error count, agent version; DESIGN §3). The fields of the first round keep their names
// and shapes (the service's analyzers and bundles already in the field read them); the second
// round adds what support asks first: uptime, memory, the file systems of the log and state
// directories, time synchronisation, the detectors' status and the spool depth. Every added
// field is null when its source could not be read (the reason is in the manifest's
// collection_errors), never missing: a reader tells "not collected" from "an older agent" by
// the key's presence.
// systemFields() flattens one into the named values the service's bundle diff compares.

import type { Static } from 'typebox';

const Nullable = <const T extends object>(schema: T) => ({ anyOf: [schema, { type: 'null' }] }) as const;
const Bytes = { type: 'integer', minimum: 0, description: 'bytes' } as const;

/** A detector's state as the daemon writes it in probe-status.json (detection.ts reports the first three). */
export const SYSTEM_DETECTOR_STATES = ['running', 'failed', 'disabled', 'starting'] as const;

export const SystemDetectorStatus = {
  type: 'object',
  required: ['name', 'state'],
  properties: {
    name: { type: 'string', description: 'auth_log, file_integrity or exec' },
    state: { type: 'string', enum: [...SYSTEM_DETECTOR_STATES] },
    reason: { type: 'string', description: 'why it is failed or disabled' },
    last_event_at: { type: 'string', description: 'when it last made a signal' },
  },
} as const;

export const FileSystemUse = {
  type: 'object',
  required: ['path', 'size_bytes', 'free_bytes', 'available_bytes'],
  properties: {
    path: { type: 'string', description: 'the directory whose file system this is' },
    size_bytes: Bytes,
    free_bytes: { ...Bytes, description: 'free blocks, root reserve included' },
    available_bytes: { ...Bytes, description: 'free to an unprivileged writer' },
  },
} as const;

/** How time synchronisation was judged: which state file said so (docs/support-bundle-collect.md). */
export const TIME_SYNC_SOURCES = ['systemd-timesyncd', 'chronyd', 'ntpd'] as const;

export const SystemInfo = {
  type: 'object',
  description: 'system.json of a support bundle',
  required: ['agent_version', 'collected_at', 'kernel', 'distro', 'ebpf', 'agent_log'],
  properties: {
    agent_version: { type: 'string' },
    collected_at: { type: 'string', description: 'ISO 8601, the agent host clock' },
    kernel: {
      type: 'object',
      required: ['release', 'version', 'machine'],
      properties: {
        release: { type: 'string', description: 'as uname -r prints it' },
        version: { type: 'string' },
        machine: { type: 'string' },
      },
    },
    distro: Nullable({
      type: 'object',
      additionalProperties: { type: 'string' },
      description: 'os-release identity keys (ID, ID_LIKE, NAME, VERSION_ID, VERSION_CODENAME, PRETTY_NAME)',
    }),
    ebpf: {
      type: 'object',
      required: ['btf_present', 'unprivileged_bpf_disabled', 'probe_status'],
      properties: {
        btf_present: Nullable({ type: 'boolean' }),
        unprivileged_bpf_disabled: Nullable({ type: 'integer' }),
        probe_status: { description: "the daemon's probe-status.json as it wrote it, or null" },
      },
    },
    agent_log: {
      type: 'object',
      required: ['error_lines_last_24h'],
      properties: { error_lines_last_24h: Nullable({ type: 'integer', minimum: 0 }) },
    },
    uptime: Nullable({
      type: 'object',
      required: ['seconds', 'booted_at'],
      properties: {
        seconds: { type: 'integer', minimum: 0 },
        booted_at: Nullable({ type: 'string', description: "ISO 8601, from /proc/stat's btime" }),
      },
    }),
    memory: Nullable({
      type: 'object',
      required: ['total_bytes', 'available_bytes'],
      properties: {
        total_bytes: Bytes,
        available_bytes: { ...Bytes, description: "/proc/meminfo's MemAvailable" },
      },
    }),
    disk: {
      type: 'object',
      required: ['log_dir', 'state_dir'],
      properties: { log_dir: Nullable(FileSystemUse), state_dir: Nullable(FileSystemUse) },
    },
    time_sync: {
      type: 'object',
      required: ['synchronized', 'source', 'detail'],
      properties: {
        synchronized: {
          anyOf: [{ type: 'boolean' }, { type: 'string', const: 'unknown' }],
          description: 'true or false only when a state file says so; else "unknown"',
        },
        source: { anyOf: [{ type: 'string', enum: [...TIME_SYNC_SOURCES] }, { type: 'null' }] },
        detail: { type: 'string' },
      },
    },
    detectors: Nullable({
      type: 'object',
      required: ['updated_at', 'list'],
      properties: {
        updated_at: Nullable({ type: 'string', description: 'when the daemon last wrote its status' }),
        list: { type: 'array', items: SystemDetectorStatus },
      },
    }),
    spool: Nullable({
      type: 'object',
      required: ['depth', 'max'],
      properties: {
        depth: { type: 'integer', minimum: 0, description: 'signals waiting for the service' },
        max: { type: 'integer', minimum: 1 },
        dropped: { type: 'integer', minimum: 0, description: 'counted while the spool was full, not yet reported' },
      },
    }),
  },
} as const;
export type SystemInfo = Static<typeof SystemInfo>;
export type SystemDetectorStatus = Static<typeof SystemDetectorStatus>;
export type FileSystemUse = Static<typeof FileSystemUse>;

export type SystemFieldValue = string | number | boolean | null;

/** Two boot times within this are the same boot (btime moves with clock steps). */
export const BOOT_TIME_TOLERANCE_MS = 60_000;

/**
 * The fields of a system.json the bundle diff compares, by dotted name. Read defensively: an
 * older agent's system.json (or any JSON) gives what it has; a field it lacks is absent.
 * Uptime is compared as the boot time (a change is a reboot), not as seconds.
 */
export function systemFields(value: unknown): Record<string, SystemFieldValue> {
  const out: Record<string, SystemFieldValue> = {};
  if (!isObject(value)) return out;
  const put = (name: string, v: unknown) => {
    if (v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)))
      out[name] = v;
  };
  put('agent_version', value.agent_version);
  if (isObject(value.kernel)) put('kernel.release', value.kernel.release);
  if (isObject(value.distro)) put('distro', value.distro.PRETTY_NAME ?? value.distro.NAME ?? value.distro.ID);
  else if ('distro' in value) put('distro', null);
  if (isObject(value.ebpf)) {
    put('ebpf.btf_present', value.ebpf.btf_present);
    put('ebpf.unprivileged_bpf_disabled', value.ebpf.unprivileged_bpf_disabled);
  }
  if (isObject(value.agent_log)) put('agent_log.error_lines_last_24h', value.agent_log.error_lines_last_24h);
  if ('uptime' in value) put('uptime.booted_at', isObject(value.uptime) ? value.uptime.booted_at : null);
  if ('memory' in value) {
    const m = isObject(value.memory) ? value.memory : {};
    put('memory.total_bytes', m.total_bytes ?? null);
    put('memory.available_bytes', m.available_bytes ?? null);
  }
  if (isObject(value.disk))
    for (const dir of ['log_dir', 'state_dir'] as const) {
      const d = isObject(value.disk[dir]) ? value.disk[dir] : {};
      put(`disk.${dir}.size_bytes`, d.size_bytes ?? null);
      put(`disk.${dir}.available_bytes`, d.available_bytes ?? null);
    }
  if (isObject(value.time_sync)) {
    put('time_sync.synchronized', value.time_sync.synchronized);
    put('time_sync.source', value.time_sync.source);
  }
  if (isObject(value.detectors) && Array.isArray(value.detectors.list)) {
    for (const d of value.detectors.list)
      if (isObject(d) && typeof d.name === 'string' && typeof d.state === 'string')
        put(`detectors.${d.name}`, typeof d.reason === 'string' ? `${d.state}: ${d.reason}` : d.state);
  } else if ('detectors' in value) put('detectors', null);
  if ('spool' in value) put('spool.depth', isObject(value.spool) ? value.spool.depth : null);
  return out;
}

/**
 * Free memory and free disk move all the time: they count as changed only when they moved by
 * more than this share of the larger value (57.5 → 57.4 GiB is the same; 10 → 1 GiB is not).
 */
export const AVAILABLE_BYTES_TOLERANCE = 0.1;

/**
 * Whether two values of one field differ: the boot time within BOOT_TIME_TOLERANCE_MS is the
 * same boot, an `available_bytes` within AVAILABLE_BYTES_TOLERANCE the same level.
 */
export function systemFieldChanged(field: string, before: SystemFieldValue, after: SystemFieldValue): boolean {
  if (before === after) return false;
  if (field.endsWith('available_bytes') && typeof before === 'number' && typeof after === 'number')
    return Math.abs(before - after) > AVAILABLE_BYTES_TOLERANCE * Math.max(before, after);
  if (field === 'uptime.booted_at' && typeof before === 'string' && typeof after === 'string') {
    const gap = Math.abs(Date.parse(before) - Date.parse(after));
    return !(gap <= BOOT_TIME_TOLERANCE_MS);
  }
  return true;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
