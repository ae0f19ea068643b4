// Checking analyzer rules before they are stored or tried (DESIGN §4, "Analyzers as code"):
// the schema has bounded every field; here each pattern must compile for the linear-time engine
// (else 400 invalid_pattern, naming the rule and why), ids must be unique and a member glob
// must be one the matcher reads.

import type { AnalyzerRule } from '@guard/contract';
import { compilePattern, PatternError } from '../analysis/index.ts';
import { ApiError } from '../kernel/errors.ts';
import type { Logger } from '../kernel/logger.ts';

/** Throws the API's 400 for the first rule that cannot be stored. */
export function checkRules(rules: readonly AnalyzerRule[]): void {
  const ids = new Set<string>();
  rules.forEach((rule, i) => {
    const where = `rules[${i}] (${rule.id})`;
    if (ids.has(rule.id)) throw new ApiError(400, 'invalid_rules', `${where}: the id ${rule.id} is used twice`);
    ids.add(rule.id);
    if (rule.member.includes('/'))
      throw new ApiError(
        400,
        'invalid_rules',
        `${where}: member names hold no "/": the glob ${rule.member} matches none`,
      );
    try {
      compilePattern(rule.pattern);
    } catch (error) {
      if (error instanceof PatternError) throw new ApiError(400, 'invalid_pattern', `${where}: ${error.message}`);
      throw error;
    }
  });
}

/**
 * The stored rules that compile here (all of them, unless another Node.js refuses one that was
 * accepted when it was stored: that one is left out and logged, never the analysis failed).
 */
export function runnableRules(rules: readonly AnalyzerRule[], log: Logger): AnalyzerRule[] {
  return rules.filter((rule) => {
    try {
      compilePattern(rule.pattern);
      return true;
    } catch (error) {
      log.warn(
        { rule: rule.id, reason: (error as Error).message },
        'analyzer rule left out: its pattern does not compile',
      );
      return false;
    }
  });
}
