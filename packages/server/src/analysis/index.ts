// Reading a support bundle for what it says, untrusted, in worker threads (archive-pool.ts): the archive streamed once (zstd → a
// strict tar reader → each member checked against the registered manifest, the logs scanned in
// one pass) into facts, the facts into findings with their evidence, and the lines around a
// piece of evidence. No IO but the stream handed in; no database. Used by insights/ (the
// worker and the routes) and by bench/insights.ts, which runs the analysis alone.
export { ArchivePool, type ArchivePoolOptions } from './archive-pool.ts';
export {
  BUILT_IN_ANALYZERS,
  buildFindings,
  couldNotAnalyse,
  type InsightSummary,
  RULE_CODE_PREFIX,
  RULES_ANALYZER,
  ruleSpecs,
} from './findings.ts';
export { MAX_CONTEXT_LINES, type MemberLines, memberLines } from './member-lines.ts';
export { type ArchiveFacts, readArchive, Unanalysable } from './read-archive.ts';
export { compilePattern, PatternError } from './rule-pattern.ts';
export { memberMatches, type RuleHit, type RuleSpec } from './rule-scan.ts';
export { newestVersion } from './versions.ts';
