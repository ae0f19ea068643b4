// The analyzer of the rules support staff write (DESIGN §4, "Analyzers as code"): each rule that
// matched at least its min_count lines (default 1) in the members its glob names gives one
// finding, code `rule.<id>`, with the rule's title and severity and the first lines matched as
// evidence. The matching itself happened while the archive was read (rule-scan.ts).

import type { AnalyzerRule } from '@guard/contract';
import { RULE_EVIDENCE_KEPT } from '../rule-scan.ts';
import { type Analyzer, finding, plural } from './analyzer.ts';

export const RULE_CODE_PREFIX = 'rule.';

export const analyzerRules: Analyzer = {
  name: 'analyzer rules',
  description:
    'The rules set by support staff (PUT /v1/support/analyzers): one finding per rule that matched enough lines.',
  codes: [`${RULE_CODE_PREFIX}<id>`],
  analyze({ ctx, facts }) {
    const hits = new Map(facts.ruleHits.map((h) => [h.id, h]));
    return (ctx.rules ?? []).flatMap((rule) => {
      const hit = hits.get(rule.id);
      const needed = rule.min_count ?? 1;
      if (!hit || hit.count < needed) return [];
      const shown = hit.evidence.length < hit.count ? ` The first ${RULE_EVIDENCE_KEPT} are the evidence.` : '';
      return [
        finding(
          rule.severity,
          `${RULE_CODE_PREFIX}${rule.id}`,
          rule.title,
          `${plural(hit.count, 'line')} of ${hit.members.join(', ')} match /${rule.pattern}/${needed > 1 ? ` (the rule needs ${needed.toLocaleString('en-US')})` : ''}.${shown}`,
          hit.evidence,
        ),
      ];
    });
  },
};

/** The rules as the archive reader takes them. */
export function ruleSpecs(rules: readonly AnalyzerRule[]): { id: string; member: string; pattern: string }[] {
  return rules.map(({ id, member, pattern }) => ({ id, member, pattern }));
}
