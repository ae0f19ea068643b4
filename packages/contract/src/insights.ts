// Bundle insights (DESIGN §4 contract): what the service found in a stored bundle, each
// finding with its evidence: a member of the archive and, where it has one, the line.
// GET /v1/support/bundles/{id}/insights answers BundleInsights.

import type { Static } from 'typebox';

export const INSIGHT_STATES = ['pending', 'done', 'failed'] as const;
export type InsightState = (typeof INSIGHT_STATES)[number];

/** `critical` is given only by analyzer rules that say so; the built-in analyzers use the other three. */
export const FINDING_SEVERITIES = ['info', 'warning', 'error', 'critical'] as const;
export type FindingSeverity = (typeof FINDING_SEVERITIES)[number];

export const Evidence = {
  type: 'object',
  required: ['member'],
  properties: {
    member: { type: 'string', description: 'archive member, e.g. agent.log or BUNDLE-MANIFEST.json' },
    line: { type: 'integer', minimum: 1, description: '1-based line number in the (decompressed) member' },
  },
} as const;
export type Evidence = Static<typeof Evidence>;

export const Finding = {
  type: 'object',
  required: ['code', 'severity', 'title', 'detail', 'evidence'],
  properties: {
    code: { type: 'string', description: 'stable dotted code, e.g. log.frequent_error' },
    severity: { type: 'string', enum: [...FINDING_SEVERITIES] },
    title: { type: 'string', description: 'one line' },
    detail: { type: 'string' },
    evidence: { type: 'array', items: Evidence },
  },
} as const;
export type Finding = Static<typeof Finding>;

export const BundleInsights = {
  type: 'object',
  required: ['state', 'findings'],
  properties: {
    state: { type: 'string', enum: [...INSIGHT_STATES] },
    findings: { type: 'array', items: Finding },
    analysed_at: { anyOf: [{ type: 'string', format: 'date-time' }, { type: 'null' }] },
  },
} as const;
export type BundleInsights = Static<typeof BundleInsights>;

/** Analyzer rules (DESIGN §4 "Analyzers as code"): vendor-wide, set by support staff. */
export const RULE_SEVERITIES = ['info', 'warning', 'critical'] as const;
export type RuleSeverity = (typeof RULE_SEVERITIES)[number];
export const RULE_ID_PATTERN = '^[a-z0-9][a-z0-9_.-]{0,62}$';
export const RULES_MAX = 200;

export const AnalyzerRule = {
  type: 'object',
  required: ['id', 'title', 'severity', 'member', 'pattern'],
  additionalProperties: false,
  properties: {
    id: {
      type: 'string',
      pattern: RULE_ID_PATTERN,
      description: 'lower case letters, digits, `_`, `.` and `-`; the finding code is `rule.<id>`',
    },
    title: { type: 'string', minLength: 1, maxLength: 200, description: "the finding's title" },
    severity: { type: 'string', enum: [...RULE_SEVERITIES] },
    member: {
      type: 'string',
      minLength: 1,
      maxLength: 255,
      description: 'a glob over member names, e.g. `agent.log*` (a rotated segment is read once gunzipped)',
    },
    pattern: {
      type: 'string',
      minLength: 1,
      maxLength: 1000,
      description: 'a regular expression (JavaScript syntax) matched against each line, run in linear time',
    },
    min_count: {
      type: 'integer',
      minimum: 1,
      maximum: 1_000_000_000,
      description: 'lines that must match for the finding (default 1)',
    },
  },
} as const;
export type AnalyzerRule = Static<typeof AnalyzerRule>;

export const AnalyzerRules = {
  type: 'object',
  required: ['rules'],
  additionalProperties: false,
  properties: { rules: { type: 'array', maxItems: RULES_MAX, items: AnalyzerRule } },
} as const;
export type AnalyzerRules = Static<typeof AnalyzerRules>;
