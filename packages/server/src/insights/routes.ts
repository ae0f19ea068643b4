// Bundle insights for people (DESIGN §4 contract), read like the bundle itself — support staff
// any tenant's, a tenant's admins and members their own — and audited like every bundle read:
//   GET /v1/support/bundles/{id}/insights   {state: pending|done|failed, findings, analysed_at}
//   GET /v1/support/bundles/{id}/lines?member=&line=&context=
//        the lines around one piece of evidence, for reading it in context

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BundleInsights, type Finding, parseManifest } from '@guard/contract';
import { Type } from 'typebox';
import { type ArchivePool, MAX_CONTEXT_LINES, type MemberLines } from '../analysis/index.ts';
import { audit } from '../audit/index.ts';
import { requireUser, type UserPrincipal } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import type { ObjectStore } from '../objects/index.ts';
import { InsightsRepository } from './insights-repository.ts';

const READERS = ['support', 'admin', 'member'] as const;

const LinesQuery = Type.Object({
  member: Type.String({ minLength: 1, maxLength: 255, description: 'an archive member, e.g. agent.log' }),
  line: Type.Integer({ minimum: 1, description: 'the line of the evidence (1-based)' }),
  context: Type.Optional(
    Type.Integer({ minimum: 0, maximum: MAX_CONTEXT_LINES, default: 5, description: 'lines shown before and after' }),
  ),
});

const Lines = Type.Object({
  member: Type.String(),
  line: Type.Integer({ description: 'the line asked for' }),
  first_line: Type.Integer({ description: 'the number of lines[0]' }),
  lines: Type.Array(Type.String(), { description: 'each cut at 2000 characters' }),
});

/** A deleted bundle's findings and lines are gone with it (support/deletion.ts). */
export const bundleDeleted = () =>
  new ApiError(410, 'bundle_deleted', 'the bundle was deleted: its file and findings are gone');

const scopeOf = (user: UserPrincipal): string | null => (user.role === 'support' ? null : user.tenantId);

/** What the insight reads need of the server. */
export interface InsightsDeps {
  db: Db;
  now: () => Date;
  store: ObjectStore;
  /** Runs untrusted archive work (evidence lines, rule tests) in worker threads; wake(): a bundle was queued. */
  insights: { archives: ArchivePool; wake: () => void };
}

export const insightRoutes: FastifyPluginAsyncTypebox<InsightsDeps> = async (app, deps) => {
  const insights = new InsightsRepository(deps.db);

  app.get(
    '/v1/support/bundles/:id/insights',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          'What the service found in a bundle, each finding with its evidence (member and line); pending until it is analysed (audited)',
        params: IdParams,
        response: { 200: BundleInsights, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, READERS);
      const found = await insights.find(scopeOf(user), req.params.id);
      if (!found) throw notFound('bundle');
      if (found.bundle.deleted_at !== null) throw bundleDeleted();
      await audit(deps, user, 'bundle.insights', found.bundle.id, found.bundle.tenant_id);
      const row = found.insights;
      if (!row || row.state === 'pending' || row.state === 'running')
        return { state: 'pending' as const, findings: [], analysed_at: null };
      return {
        state: row.state,
        findings: JSON.parse(row.findings ?? '[]') as Finding[],
        analysed_at: row.finished_at,
      };
    },
  );

  app.get(
    '/v1/support/bundles/:id/lines',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary: 'The lines around a line of a bundle member, to read evidence in context (audited)',
        params: IdParams,
        querystring: LinesQuery,
        response: { 200: Lines, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, READERS);
      const { member, line } = req.query;
      const context = req.query.context ?? 5;
      const bundle = await insights.archiveOf(scopeOf(user), req.params.id);
      if (!bundle) throw notFound('bundle');
      if (bundle.deleted_at != null) throw bundleDeleted();
      const manifest = parseManifest(JSON.parse(bundle.manifest));
      if (member !== 'BUNDLE-MANIFEST.json' && !manifest.contents.some((m) => m.name === member))
        throw notFound('member');
      const object = await deps.store.open(bundle.object_key);
      if (!object) throw new ApiError(410, 'object_gone', 'the bundle file is no longer in the object store');
      await audit(deps, user, 'bundle.lines', bundle.id, bundle.tenant_id);
      const from = Math.max(1, line - context);
      let result: MemberLines | undefined;
      try {
        result = await deps.insights.archives.memberLines(object.body, member, from, line + context);
      } catch (error) {
        throw new ApiError(409, 'bundle_unreadable', `the bundle cannot be read: ${(error as Error).message}`);
      }
      if (!result) throw new ApiError(409, 'bundle_unreadable', `the archive holds no member ${member}`);
      return { member, line, first_line: result.first_line, lines: result.lines };
    },
  );
};
