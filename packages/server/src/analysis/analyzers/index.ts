// The analyzers of a bundle, in the order their findings are listed before the sort by
// severity (each code, what triggers it and its evidence: docs/guard-server.md, "Bundle
// insights"). A new rule is an Analyzer added here, with its tests in analyzers.test.ts.

import type { Analyzer } from './analyzer.ts';
import { agentVersionChanged, kernelChanged, newErrors } from './changes.ts';
import { crashes, frequentErrors, logLevels, manyMessages, restarts, unreadableSegments } from './logs.ts';
import { clockSkew, collectionErrors, outdatedAgent, redaction, trimmedSegments } from './manifest.ts';
import { analyzerRules } from './rules.ts';
import { btfMissing, probeFailed } from './system.ts';

export {
  type Analyzer,
  type AnalyzerInput,
  analyzerInput,
  type FindingContext,
  type InsightSummary,
  lineOf,
} from './analyzer.ts';
export { FREQUENT_ERRORS_SHOWN } from './logs.ts';
export { CLOCK_SKEW_TOLERANCE_MS, trimmedSpan } from './manifest.ts';
export { analyzerRules as RULES_ANALYZER, RULE_CODE_PREFIX, ruleSpecs } from './rules.ts';

export const ANALYZERS: readonly Analyzer[] = [
  logLevels,
  frequentErrors,
  manyMessages,
  restarts,
  crashes,
  unreadableSegments,
  btfMissing,
  probeFailed,
  clockSkew,
  outdatedAgent,
  trimmedSegments,
  collectionErrors,
  redaction,
  newErrors,
  agentVersionChanged,
  kernelChanged,
  analyzerRules,
];

/** The analyzers written in code (every one but the rules support staff set). */
export const BUILT_IN_ANALYZERS: readonly Analyzer[] = ANALYZERS.filter((a) => a !== analyzerRules);
