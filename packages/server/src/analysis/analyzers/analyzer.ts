// What an analyzer is (issue 20, item 4): a named rule that reads a bundle's facts and the
// service's view around it and answers findings — the way troubleshoot's analyzers are. The
// findings of a bundle are those of every analyzer in ANALYZERS (index.ts), in that order,
// then sorted by severity. Pure: no IO, no clock.

import type { AnalyzerRule, BundleManifest, Evidence, Finding, FindingSeverity } from '@guard/contract';
import { AGENT_LOG_MEMBER, MANIFEST_MEMBER, SYSTEM_MEMBER, type SystemFieldValue, systemFields } from '@guard/contract';
import type { LogStats } from '../log-scan.ts';
import type { ArchiveFacts } from '../read-archive.ts';

/** What the next bundle of the same server is compared with; stored with the insights. */
export interface InsightSummary {
  agent_version: string;
  kernel_release: string | null;
  /** Error message keys (messageKey) of every log member read, with the message as shown. */
  error_messages: Record<string, string>;
  /**
   * system.json's compared fields (contract systemFields), for the bundle diff; absent when the
   * bundle has no readable system.json, or was analysed before the summary kept them.
   */
  system?: Record<string, SystemFieldValue>;
}

export interface FindingContext {
  manifest: BundleManifest;
  uploadedAt: string;
  /** For a console_push bundle: when its request was made (a lower bound of generated_at). */
  requestCreatedAt?: string;
  /** The newest agent version among the tenant's servers. */
  newestTenantVersion?: string;
  previous?: { bundleId: string; uploadedAt: string; summary: InsightSummary };
  /** The analyzer rules support staff set, whose matches the archive reading counted (facts.ruleHits). */
  rules?: readonly AnalyzerRule[];
}

/** system.json as far as the analyzers read it. */
export interface SystemFacts {
  kernel?: { release?: unknown };
  ebpf?: { btf_present?: unknown; probe_status?: unknown };
}

/** What every analyzer is handed: the facts, read once into the shapes the rules use. */
export interface AnalyzerInput {
  facts: ArchiveFacts;
  ctx: FindingContext;
  manifest: BundleManifest;
  /** agent.log first, then the rotated segments newest (N = 1) first. */
  logs: LogStats[];
  agentLog: LogStats | undefined;
  system: SystemFacts | undefined;
  /** The kernel release system.json names, or null. */
  kernel: string | null;
  /** The summary of this bundle (what the next one is compared with). */
  summary: InsightSummary;
  /** Where each error message of the summary is first logged. */
  firstLines: Map<string, Evidence>;
  /** Evidence: the manifest's, or system.json's, first line holding `needle`. */
  inManifest(needle: string): Evidence;
  inSystem(needle: string): Evidence;
}

export interface Analyzer {
  /** A short name, for people and for the list's tests. */
  readonly name: string;
  /** What it looks for, in one sentence (GET /v1/support/analyzers lists it). */
  readonly description: string;
  /** The finding codes it may answer (docs/guard-server.md, "Bundle insights"). */
  readonly codes: readonly string[];
  analyze(input: AnalyzerInput): Finding[];
}

export function finding(
  severity: FindingSeverity,
  code: string,
  title: string,
  detail: string,
  evidence: Evidence[],
): Finding {
  return { code, severity, title, detail, evidence };
}

/** The 1-based line of the first line of `text` that contains `needle`, if any. */
export function lineOf(text: string, needle: string): number | undefined {
  const at = text.indexOf(needle);
  if (at === -1) return undefined;
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < at; i = text.indexOf('\n', i + 1)) line++;
  return line;
}

export function evidence(member: string, line?: number): Evidence {
  return line === undefined ? { member } : { member, line };
}

export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;
}

export function duration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  if (s < 172_800) return `${(s / 3600).toFixed(1)} h`;
  return `${(s / 86_400).toFixed(1)} days`;
}

export function quote(message: string): string {
  const flat = message.replace(/\s+/g, ' ').trim();
  return `“${flat.length > 120 ? `${flat.slice(0, 119)}…` : flat}”`;
}

const SUMMARY_MESSAGES_KEPT = 500;

/** agent.log first, then the rotated segments newest (N = 1) first. */
function logOrder(logs: Map<string, LogStats>): LogStats[] {
  const n = (name: string) => (name === AGENT_LOG_MEMBER ? 0 : Number(/\.(\d+)\.gz$/.exec(name)?.[1] ?? 1e9));
  return [...logs.values()].sort((a, b) => n(a.member) - n(b.member));
}

/** The facts read once into what the analyzers are handed. */
export function analyzerInput(facts: ArchiveFacts, ctx: FindingContext): AnalyzerInput {
  const logs = logOrder(facts.logs);
  const system = facts.system?.value as SystemFacts | undefined;
  const systemText = facts.system?.text ?? '';
  const kernel = typeof system?.kernel?.release === 'string' ? system.kernel.release : null;
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
  return {
    facts,
    ctx,
    manifest: ctx.manifest,
    logs,
    agentLog: facts.logs.get(AGENT_LOG_MEMBER),
    system,
    kernel,
    summary: {
      agent_version: ctx.manifest.agent_version,
      kernel_release: kernel,
      error_messages: messages,
      ...(facts.system ? { system: systemFields(facts.system.value) } : {}),
    },
    firstLines,
    inManifest: (needle) => evidence(MANIFEST_MEMBER, lineOf(facts.manifestText, needle)),
    inSystem: (needle) => evidence(SYSTEM_MEMBER, lineOf(systemText, needle)),
  };
}
