// The findings of one bundle (contract Finding: code, severity, title, detail, evidence), made
// from what its archive held (read-archive.ts) and what the service knows around it: when it
// was uploaded, the request it answers, the newest agent version of the tenant, and the same
// server's previous bundle — by each named analyzer of analyzers/ in turn. Pure: no IO, no
// clock. Each code, what triggers it and its evidence is listed in docs/guard-server.md
// ("Bundle insights").

import type { Finding, FindingSeverity } from '@guard/contract';
import {
  ANALYZERS,
  type Analyzer,
  analyzerInput,
  type FindingContext,
  type InsightSummary,
} from './analyzers/index.ts';
import type { ArchiveFacts } from './read-archive.ts';

export {
  BUILT_IN_ANALYZERS,
  CLOCK_SKEW_TOLERANCE_MS,
  type FindingContext,
  FREQUENT_ERRORS_SHOWN,
  type InsightSummary,
  lineOf,
  RULE_CODE_PREFIX,
  RULES_ANALYZER,
  ruleSpecs,
  trimmedSpan,
} from './analyzers/index.ts';

const SEVERITY_ORDER: Record<FindingSeverity, number> = { critical: 0, error: 1, warning: 2, info: 3 };

export function buildFindings(
  facts: ArchiveFacts,
  ctx: FindingContext,
  analyzers: readonly Analyzer[] = ANALYZERS,
): { findings: Finding[]; summary: InsightSummary } {
  const input = analyzerInput(facts, ctx);
  const findings = analyzers.flatMap((a) => a.analyze(input));
  findings.sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity]);
  return { findings, summary: input.summary };
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
