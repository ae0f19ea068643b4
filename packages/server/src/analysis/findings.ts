// The findings of one bundle (contract Finding: code, severity, title, detail, evidence), made
// from what its archive held (read-archive.ts) and what the service knows around it: when it
// was uploaded, the request it answers, the newest agent version of the tenant, and the same
// server's previous bundle. Pure: no IO, no clock. Each code, what triggers it and its
// evidence is listed in docs/guard-server.md ("Bundle insights").

import type { BundleManifest, Evidence, Finding, FindingSeverity } from '@guard/contract';
import { AGENT_LOG_MEMBER, MANIFEST_MEMBER, SYSTEM_MEMBER } from '@guard/contract';
import type { LogStats } from './log-scan.ts';
import type { ArchiveFacts } from './read-archive.ts';
import { compareVersions } from './versions.ts';

/** What the next bundle of the same server is compared with; stored with the insights. */
export interface InsightSummary {
  agent_version: string;
  kernel_release: string | null;
  /** Error message keys (messageKey) of every log member read, with the message as shown. */
  error_messages: Record<string, string>;
}

export interface FindingContext {
  manifest: BundleManifest;
  uploadedAt: string;
  /** For a console_push bundle: when its request was made (a lower bound of generated_at). */
  requestCreatedAt?: string;
  /** The newest agent version among the tenant's servers. */
  newestTenantVersion?: string;
  previous?: { bundleId: string; uploadedAt: string; summary: InsightSummary };
}

export const FREQUENT_ERRORS_SHOWN = 5;
const CRASHES_SHOWN = 5;
const NEW_ERRORS_SHOWN = 5;
const SUMMARY_MESSAGES_KEPT = 500;
/** Clocks may differ this much before it is worth a finding. */
export const CLOCK_SKEW_TOLERANCE_MS = 60_000;
/** probe_status.state values that mean the probe works. */
const PROBE_OK = new Set(['attached', 'running', 'loaded', 'ok', 'ready']);

const SEVERITY_ORDER: Record<FindingSeverity, number> = { error: 0, warning: 1, info: 2 };

/** The 1-based line of the first line of `text` that contains `needle`, if any. */
export function lineOf(text: string, needle: string): number | undefined {
  const at = text.indexOf(needle);
  if (at === -1) return undefined;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

function evidence(member: string, line?: number): Evidence {
  return line === undefined ? { member } : { member, line };
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

function duration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} days`;
}

function quote(message: string): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  return `“${flat.length > 120 ? `${flat.slice(0, 119)}…` : flat}”`;
}

/** agent.log first, then the rotated segments newest (N = 1) first. */
function logOrder(logs: Map<string, LogStats>): LogStats[] {
  const n = (name: string) => (name === AGENT_LOG_MEMBER ? 0 : Number(/\.(\d+)\.gz$/.exec(name)?.[1] ?? 1e9));
  return [...logs.values()].sort((a, b) => n(a.member) - n(b.member));
}

export function buildFindings(
  facts: ArchiveFacts,
  ctx: FindingContext,
): { findings: Finding[]; summary: InsightSummary } {
  const findings: Finding[] = [];
  const add = (severity: FindingSeverity, code: string, title: string, detail: string, ev: Evidence[]) =>
    findings.push({ code, severity, title, detail, evidence: ev });
  const { manifest, manifestText } = { manifest: ctx.manifest, manifestText: facts.manifestText };
  const inManifest = (needle: string) => evidence(MANIFEST_MEMBER, lineOf(manifestText, needle));
  const logs = logOrder(facts.logs);
  const agentLog = facts.logs.get(AGENT_LOG_MEMBER);

  // --- the logs ----------------------------------------------------------------------------
  if (agentLog) {
    const span = agentLog.firstTime && agentLog.lastTime ? ` from ${agentLog.firstTime} to ${agentLog.lastTime}` : '';
    const segments = logs.filter((l) => l.member !== AGENT_LOG_MEMBER);
    const segmentText =
      segments.length === 0
        ? ''
        : ` Rotated segments read: ${segments
            .map(
              (s) =>
                `${s.member} (${plural(s.lines, 'line')}, ${s.errors} ERROR, ${s.warnings} WARN${s.firstTime ? `, ${s.firstTime} to ${s.lastTime ?? '?'}` : ''})`,
            )
            .join('; ')}.`;
    add(
      agentLog.errors > 0 ? 'warning' : 'info',
      'log.levels',
      `agent.log: ${plural(agentLog.errors, 'ERROR line')} and ${plural(agentLog.warnings, 'WARN line')}`,
      `${plural(agentLog.lines, 'line')}${span}.${agentLog.longLines ? ` ${plural(agentLog.longLines, 'line')} longer than 64 KiB were read in part.` : ''}${segmentText}`,
      [evidence(AGENT_LOG_MEMBER)],
    );
    const frequent = [...agentLog.messages.values()].sort((a, b) => b.count - a.count || a.first.line - b.first.line);
    for (const m of frequent.slice(0, FREQUENT_ERRORS_SHOWN)) {
      const when =
        m.count === 1
          ? `once, at line ${m.first.line}${m.first.time ? ` (${m.first.time})` : ''}`
          : `${plural(m.count, 'time')}: first at line ${m.first.line}${m.first.time ? ` (${m.first.time})` : ''}, last at line ${m.last.line}${m.last.time ? ` (${m.last.time})` : ''}`;
      add(
        'warning',
        'log.frequent_error',
        `${quote(m.message)} ×${m.count}`,
        `This error was logged ${when}.`,
        m.count === 1
          ? [evidence(AGENT_LOG_MEMBER, m.first.line)]
          : [evidence(AGENT_LOG_MEMBER, m.first.line), evidence(AGENT_LOG_MEMBER, m.last.line)],
      );
    }
    if (agentLog.otherErrors > 0)
      add(
        'info',
        'log.many_messages',
        'More distinct error messages than are counted one by one',
        `${plural(agentLog.otherErrors, 'ERROR line')} had messages beyond the first 1,000 distinct ones and are counted only in the total.`,
        [evidence(AGENT_LOG_MEMBER)],
      );
  }

  const starts = logs.flatMap((l) => l.starts.map((s) => ({ ...s, member: l.member })));
  const startCount = logs.reduce((n, l) => n + l.startCount, 0);
  if (startCount > 1) {
    const times = starts
      .map((s) => s.time)
      .filter((t): t is string => t !== undefined)
      .sort();
    add(
      'warning',
      'agent.restarts',
      `The agent started ${startCount} times`,
      `The logs read show ${startCount} agent starts${times.length ? `, from ${times[0]} to ${times.at(-1)}` : ''}: it was restarted ${plural(startCount - 1, 'time')} (by an operator, an update, or after a crash).`,
      starts.slice(0, 10).map((s) => evidence(s.member, s.line)),
    );
  }
  const crashes = logs.flatMap((l) => l.crashes.map((c) => ({ ...c, member: l.member })));
  const crashCount = logs.reduce((n, l) => n + l.crashCount, 0);
  for (const c of crashes.slice(0, CRASHES_SHOWN))
    add(
      'error',
      'agent.crash',
      `Crash trace: ${c.text.length > 100 ? `${c.text.slice(0, 99)}…` : c.text}`,
      `A crash trace starts at line ${c.line} of ${c.member}${c.time ? ` (${c.time})` : ''}.${crashCount > CRASHES_SHOWN ? ` ${crashCount} crash traces in all; the first ${CRASHES_SHOWN} are listed.` : ''}`,
      [evidence(c.member, c.line)],
    );
  for (const p of facts.segmentProblems)
    add('warning', 'log.segment_unreadable', `${p.member} could not be read whole`, p.message, [evidence(p.member)]);

  // --- system.json -------------------------------------------------------------------------
  const system = facts.system?.value as
    | {
        kernel?: { release?: unknown };
        ebpf?: { btf_present?: unknown; probe_status?: unknown };
      }
    | undefined;
  const systemText = facts.system?.text ?? '';
  const inSystem = (needle: string) => evidence(SYSTEM_MEMBER, lineOf(systemText, needle));
  const kernel = typeof system?.kernel?.release === 'string' ? system.kernel.release : null;
  if (system?.ebpf?.btf_present === false)
    add(
      'warning',
      'ebpf.btf_missing',
      'The kernel has no BTF: eBPF probes cannot load',
      `/sys/kernel/btf/vmlinux is missing on kernel ${kernel ?? '(unknown)'}: CO-RE eBPF probes need the kernel's BTF (CONFIG_DEBUG_INFO_BTF=y, or a BTF file for this kernel).`,
      [inSystem('"btf_present"')],
    );
  const probe = system?.ebpf?.probe_status;
  if (probe && typeof probe === 'object' && !Array.isArray(probe)) {
    const p = probe as Record<string, unknown>;
    const state = typeof p.state === 'string' ? p.state : undefined;
    const error = [p.error, p.message, p.reason].find((v) => typeof v === 'string') as string | undefined;
    if ((state !== undefined && !PROBE_OK.has(state.toLowerCase())) || error !== undefined)
      add(
        'error',
        'ebpf.probe_failed',
        `eBPF probe ${typeof p.probe === 'string' ? `${p.probe} ` : ''}${state ?? 'failed'}`,
        `The probe's last status is ${state ?? '(no state)'}${error ? `: ${error}` : ''}${typeof p.updated_at === 'string' ? ` (at ${p.updated_at})` : ''}.`,
        [inSystem('"probe_status"')],
      );
  }

  // --- the manifest and the service's view ---------------------------------------------------
  const generated = Date.parse(manifest.generated_at);
  const uploaded = Date.parse(ctx.uploadedAt);
  if (generated - uploaded > CLOCK_SKEW_TOLERANCE_MS)
    add(
      'warning',
      'clock.skew',
      `The server's clock is ${duration(generated - uploaded)} ahead`,
      `The bundle says it was generated at ${manifest.generated_at}, ${duration(generated - uploaded)} after the service received it (${ctx.uploadedAt}): the host's clock runs ahead. Times in its logs are off by as much.`,
      [inManifest('"generated_at"')],
    );
  else if (ctx.requestCreatedAt && Date.parse(ctx.requestCreatedAt) - generated > CLOCK_SKEW_TOLERANCE_MS) {
    const behind = Date.parse(ctx.requestCreatedAt) - generated;
    add(
      'warning',
      'clock.skew',
      `The server's clock is at least ${duration(behind)} behind`,
      `The bundle says it was generated at ${manifest.generated_at}, before it was requested (${ctx.requestCreatedAt}): the host's clock runs behind by at least ${duration(behind)}. Times in its logs are off by as much.`,
      [inManifest('"generated_at"')],
    );
  }
  if (ctx.newestTenantVersion && (compareVersions(manifest.agent_version, ctx.newestTenantVersion) ?? 0) < 0)
    add(
      'warning',
      'agent.outdated',
      `Agent ${manifest.agent_version} is older than ${ctx.newestTenantVersion}`,
      `This server runs guard-agent ${manifest.agent_version}; the newest among the tenant's servers is ${ctx.newestTenantVersion}.`,
      [inManifest('"agent_version"')],
    );
  if (manifest.trimmed_segments.length > 0) {
    add(
      'warning',
      'bundle.trimmed_segments',
      `${plural(manifest.trimmed_segments.length, 'rotated segment')} left out for the size cap`,
      `${manifest.trimmed_segments.join(', ')} did not fit under the 180 MiB cap. ${trimmedSpan(manifest.trimmed_segments, facts.logs)}`,
      [inManifest('"trimmed_segments"')],
    );
  }
  for (const e of manifest.collection_errors)
    add('warning', 'bundle.collection_error', `Not collected: ${e.source}`, `${e.source}: ${e.message}`, [
      inManifest(JSON.stringify(e.source)),
    ]);
  const masked = Object.entries(manifest.redaction.members)
    .filter(([, n]) => n > 0)
    .map(([member, n]) => `${member}: ${n}`);
  add(
    'info',
    'bundle.redaction',
    `${plural(manifest.redaction.values_masked, 'value')} masked`,
    `Values of keys matching ${manifest.redaction.pattern}${manifest.redaction.extra_keys?.length ? ` and ${manifest.redaction.extra_keys.join(', ')}` : ''} were replaced by [REDACTED]${masked.length ? ` (${masked.join(', ')})` : ''}. Nothing else is masked: hostnames, addresses and paths are as logged.`,
    [inManifest('"values_masked"')],
  );

  // --- compared with the previous bundle ------------------------------------------------------
  const messages: Record<string, string> = {};
  const firstLines = new Map<string, Evidence>();
  for (const l of logs)
    for (const [key, m] of l.messages) {
      if (Object.keys(messages).length >= SUMMARY_MESSAGES_KEPT) break;
      if (!(key in messages)) {
        messages[key] = m.message;
        firstLines.set(key, evidence(l.member, m.first.line));
      }
    }
  const summary: InsightSummary = {
    agent_version: manifest.agent_version,
    kernel_release: kernel,
    error_messages: messages,
  };
  const prev = ctx.previous;
  if (prev) {
    const since = `since the previous bundle (${prev.bundleId}, ${prev.uploadedAt})`;
    const fresh = Object.keys(messages).filter((k) => !(k in prev.summary.error_messages));
    if (fresh.length > 0)
      add(
        'warning',
        'change.new_errors',
        `${plural(fresh.length, 'new error message')} ${since}`,
        `Not logged in the previous bundle: ${fresh
          .slice(0, NEW_ERRORS_SHOWN)
          .map((k) => quote(messages[k]))
          .join(', ')}${fresh.length > NEW_ERRORS_SHOWN ? `, and ${fresh.length - NEW_ERRORS_SHOWN} more` : ''}.`,
        fresh.slice(0, NEW_ERRORS_SHOWN).map((k) => firstLines.get(k) as Evidence),
      );
    if (prev.summary.agent_version !== manifest.agent_version)
      add(
        'info',
        'change.agent_version',
        `Agent ${prev.summary.agent_version} → ${manifest.agent_version}`,
        `The agent version changed ${since}.`,
        [inManifest('"agent_version"')],
      );
    if (kernel !== null && prev.summary.kernel_release !== null && prev.summary.kernel_release !== kernel)
      add(
        'info',
        'change.kernel',
        `Kernel ${prev.summary.kernel_release} → ${kernel}`,
        `The kernel changed ${since}.`,
        [inSystem('"release"')],
      );
  }

  findings.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  return { findings, summary };
}

/**
 * The time a set of trimmed segments covered, from the segments around them that were read:
 * segment N lies between N+1 (older) and N-1 (newer; agent.log for N = 1).
 */
export function trimmedSpan(trimmed: string[], logs: Map<string, LogStats>): string {
  const numberOf = (name: string) => Number(/\.(\d+)\.gz$/.exec(name)?.[1]);
  const read = [...logs.values()]
    .map((l) => ({ n: l.member === AGENT_LOG_MEMBER ? 0 : numberOf(l.member), log: l }))
    .filter((x) => Number.isFinite(x.n))
    .sort((a, b) => a.n - b.n);
  // Trimmed segments between the same two segments read share one span.
  const spans = new Map<string, { names: string[]; from?: string; to?: string }>();
  for (const name of trimmed) {
    const n = numberOf(name);
    if (!Number.isFinite(n)) continue;
    const newer = [...read].reverse().find((x) => x.n < n)?.log;
    const older = read.find((x) => x.n > n)?.log;
    const key = `${newer?.member}|${older?.member}`;
    const span = spans.get(key) ?? { names: [], from: older?.lastTime, to: newer?.firstTime };
    span.names.push(name);
    spans.set(key, span);
  }
  const parts: string[] = [];
  for (const { names, from, to } of spans.values()) {
    const which = names.length === 1 ? names[0] : `${names[0]} … ${names.at(-1)} (${names.length})`;
    if (from && to) parts.push(`${which} covered about ${from} to ${to}`);
    else if (to) parts.push(`${which} covered the time before ${to}`);
  }
  if (parts.length === 0) return 'The time they covered is not known: no segment around them carries times.';
  return `By the segments read around them: ${parts.join('; ')}. Nothing from then is in this bundle.`;
}

/** The one finding of a bundle that could not be analysed. */
export function couldNotAnalyse(reason: string, member?: string): Finding {
  return {
    code: 'analysis.failed',
    severity: 'error',
    title: 'Could not analyse this bundle',
    detail: `${reason}. Nothing in it was used; download it only with care.`,
    evidence: member ? [{ member }] : [],
  };
}
