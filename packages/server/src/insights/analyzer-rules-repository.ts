// The analyzer rules support staff set (DESIGN §4, "Analyzers as code"), stored vendor-wide
// (migration 0020): the list is replaced as a whole, in one transaction, and read in its order.

import type { AnalyzerRule, RuleSeverity } from '@guard/contract';
import type { Db } from '../db/index.ts';

export interface StoredRules {
  rules: AnalyzerRule[];
  /** When the list was last set, and by whom (null: never set). */
  updated_at: string | null;
  updated_by: string | null;
}

export class AnalyzerRulesRepository {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async list(): Promise<StoredRules> {
    const rows = await this.#db.selectFrom('analyzer_rules').selectAll().orderBy('position').execute();
    return {
      rules: rows.map((r) => ({
        id: r.id,
        title: r.title,
        severity: r.severity as RuleSeverity,
        member: r.member,
        pattern: r.pattern,
        ...(r.min_count === null ? {} : { min_count: r.min_count }),
      })),
      updated_at: rows[0]?.updated_at ?? null,
      updated_by: rows[0]?.updated_by ?? null,
    };
  }

  /** Replaces every rule with `rules` (already checked), in their order. */
  async replace(rules: readonly AnalyzerRule[], by: string, at: string): Promise<void> {
    await this.#db.transaction().execute(async (tx) => {
      await tx.deleteFrom('analyzer_rules').execute();
      if (rules.length === 0) return;
      await tx
        .insertInto('analyzer_rules')
        .values(
          rules.map((r, position) => ({
            id: r.id,
            position,
            title: r.title,
            severity: r.severity,
            member: r.member,
            pattern: r.pattern,
            min_count: r.min_count ?? null,
            updated_at: at,
            updated_by: by,
          })),
        )
        .execute();
    });
  }
}
