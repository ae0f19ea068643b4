// Bundle insights (DESIGN §4 contract): what the service found in a stored bundle, each
// finding with its evidence: a member of the archive and, where it has one, the line.
// GET /v1/support/bundles/{id}/insights answers BundleInsights.

import type { Static } from 'typebox';

export const INSIGHT_STATES = ['pending', 'done', 'failed'] as const;
export type InsightState = (typeof INSIGHT_STATES)[number];

export const FINDING_SEVERITIES = ['info', 'warning', 'error'] as const;
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
