// Analyzers as code (DESIGN §4 contract), for support staff (vendor-wide):
//   GET  /v1/support/analyzers           the rules set, and the analyzers built in (read-only)
//   PUT  /v1/support/analyzers           {rules} replaces them all (audited); 400 invalid_pattern
//                                        for a pattern the linear-time engine cannot run
//   POST /v1/support/analyzers/test      {bundle_id, rules?}: what these rules (default: the
//                                        ones set) find in one stored bundle, nothing stored
//   POST /v1/support/bundles/{id}/analyze   analyse one bundle again, with the rules of now
// Bundles analysed after a PUT get the new rules' findings (code `rule.<id>`).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AnalyzerRule, AnalyzerRules, Finding, parseManifest } from '@guard/contract';
import { Type } from 'typebox';
import { BUILT_IN_ANALYZERS, buildFindings, RULES_ANALYZER, ruleSpecs } from '../analysis/index.ts';
import { audit } from '../audit/index.ts';
import { requireUser } from '../auth/index.ts';
import { ApiError, notFound } from '../kernel/errors.ts';
import { ErrorResponses, IdParams } from '../kernel/route-schemas.ts';
import { checkRules } from './analyzer-rules.ts';
import { AnalyzerRulesRepository } from './analyzer-rules-repository.ts';
import { InsightsRepository } from './insights-repository.ts';
import { bundleDeleted, type InsightsDeps } from './routes.ts';

/** A test run reads one bundle while the request waits: it ends with a 504 past this. */
export const ANALYZER_TEST_DEADLINE_MS = 120_000;

const StoredRules = Type.Object({
  rules: Type.Array(Type.Unsafe<AnalyzerRule>(AnalyzerRule)),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  updated_by: Type.Union([Type.String(), Type.Null()], { description: 'the user id who set them' }),
  builtin: Type.Array(
    Type.Object({
      name: Type.String(),
      description: Type.String(),
      codes: Type.Array(Type.String(), { description: 'the finding codes it gives' }),
    }),
    { description: 'the analyzers built into the service, run on every bundle before the rules' },
  ),
});

const TestBody = Type.Object({
  bundle_id: Type.String({ minLength: 1, maxLength: 64 }),
  rules: Type.Optional(Type.Unsafe<AnalyzerRule[]>(AnalyzerRules.properties.rules)),
});

const TestResult = Type.Object({
  bundle_id: Type.String(),
  findings: Type.Array(Type.Unsafe<Finding>(Finding), { description: 'the findings these rules give' }),
  matches: Type.Array(
    Type.Object({
      id: Type.String(),
      count: Type.Integer({ description: 'lines matched, whatever min_count says' }),
      members: Type.Array(Type.String()),
    }),
  ),
  elapsed_ms: Type.Integer(),
});

const Requeued = Type.Object({ bundle_id: Type.String(), state: Type.Literal('pending') });

const builtin = BUILT_IN_ANALYZERS.map((a) => ({ name: a.name, description: a.description, codes: [...a.codes] }));

export const analyzerRoutes: FastifyPluginAsyncTypebox<InsightsDeps> = async (app, deps) => {
  const rules = new AnalyzerRulesRepository(deps.db);
  const insights = new InsightsRepository(deps.db);

  app.get(
    '/v1/support/analyzers',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary: 'The analyzer rules support staff set, and the analyzers built in',
        response: { 200: StoredRules, ...ErrorResponses },
      },
    },
    async (req) => {
      requireUser(req, ['support']);
      return { ...(await rules.list()), builtin };
    },
  );

  app.put(
    '/v1/support/analyzers',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          'Replaces the analyzer rules (audited); every bundle analysed afterwards gets their findings. 400 invalid_pattern: a pattern that cannot run in linear time',
        body: Type.Unsafe<AnalyzerRules>(AnalyzerRules),
        response: { 200: StoredRules, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['support']);
      checkRules(req.body.rules);
      await rules.replace(req.body.rules, user.userId, deps.now().toISOString());
      await audit(deps, user, 'analyzers.update', `${req.body.rules.length} rules`, null);
      return { ...(await rules.list()), builtin };
    },
  );

  app.post(
    '/v1/support/analyzers/test',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          'What analyzer rules (default: the ones set) find in one stored bundle; nothing is stored (the read is audited)',
        body: TestBody,
        response: { 200: TestResult, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireUser(req, ['support']);
      const tried = req.body.rules ?? (await rules.list()).rules;
      checkRules(tried);
      const bundle = await insights.archiveOf(null, req.body.bundle_id);
      if (!bundle) throw notFound('bundle');
      if (bundle.deleted_at != null) throw bundleDeleted();
      const object = await deps.store.open(bundle.object_key);
      if (!object) throw new ApiError(410, 'object_gone', 'the bundle file is no longer in the object store');
      await audit(deps, user, 'bundle.analyzers_test', bundle.id, bundle.tenant_id);
      const manifest = parseManifest(JSON.parse(bundle.manifest));
      const started = Date.now();
      let facts: Awaited<ReturnType<typeof deps.insights.archives.readArchive>>;
      try {
        facts = await deps.insights.archives.readArchive(object.body, manifest, {
          deadlineMs: ANALYZER_TEST_DEADLINE_MS,
          rules: ruleSpecs(tried),
        });
      } catch (error) {
        throw new ApiError(409, 'bundle_unreadable', `the bundle cannot be read: ${(error as Error).message}`);
      }
      const { findings } = buildFindings(facts, { manifest, uploadedAt: bundle.uploaded_at, rules: tried }, [
        RULES_ANALYZER,
      ]);
      return {
        bundle_id: bundle.id,
        findings,
        matches: facts.ruleHits.map(({ id, count, members }) => ({ id, count, members })),
        elapsed_ms: Date.now() - started,
      };
    },
  );

  app.post(
    '/v1/support/bundles/:id/analyze',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          "Analyses one bundle again, with today's analyzers and rules; its insights are pending until then (support staff, or the tenant's admin; audited)",
        params: IdParams,
        response: { 202: Requeued, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['support', 'admin']);
      const found = await insights.find(user.role === 'support' ? null : user.tenantId, req.params.id);
      if (!found) throw notFound('bundle');
      if (found.bundle.deleted_at !== null) throw bundleDeleted();
      if (!(await insights.requeue(found.bundle.id))) throw notFound('bundle');
      await audit(deps, user, 'bundle.analyze', found.bundle.id, found.bundle.tenant_id);
      deps.insights.wake();
      return reply.code(202).send({ bundle_id: found.bundle.id, state: 'pending' as const });
    },
  );
};
