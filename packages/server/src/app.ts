// The app in registration order (fastify/demo): the Fastify instance, its infrastructure
// (validation, error shape, shutdown, limits, authentication, API docs), then each
// capability's routes. What runs beside the app is wired in server.ts: the database, the
// master key, the object store and its sweeps, the signal outbox, the delivery worker and
// the metrics listener (AppDeps carries them here).

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { agentKeyLookup, agentRoutes } from './agents/index.ts';
import { auditRoutes } from './audit/index.ts';
import { authenticateRequests, authRoutes } from './auth/index.ts';
import { bundleRequestRoutes } from './bundle-requests/index.ts';
import { collectionScheduleRoutes, criticalSignalTrigger } from './collection-schedule/index.ts';
import { consoleRoutes } from './console/index.ts';
import type { AppDeps } from './deps.ts';
import { detectionRoutes } from './detection/index.ts';
import { enrollmentRoutes } from './enrollment/index.ts';
import { healthRoutes } from './health.ts';
import { analyzerRoutes, insightRoutes } from './insights/index.ts';
import { apiDocs } from './kernel/api-docs.ts';
import { errorResponses } from './kernel/error-responses.ts';
import { fastifyOptions } from './kernel/fastify-options.ts';
import { gracefulShutdown } from './kernel/graceful-shutdown.ts';
import { bodyDeadline } from './kernel/http-limits.ts';
import { refuseNulCharacters, requestValidatorCompiler } from './kernel/request-validation.ts';
import { SERVER_VERSION } from './kernel/version.ts';
import { objectRoutes } from './objects/index.ts';
import { scimRoutes } from './scim/index.ts';
import { signalRoutes } from './signals/index.ts';
import { ssoRoutes } from './sso/index.ts';
import { supportRoutes } from './support/index.ts';
import { tenantRoutes } from './tenants/index.ts';
import { userRoutes } from './users/index.ts';
import { webhookRoutes } from './webhooks/index.ts';

export async function buildApp(
  deps: AppDeps,
  options: { logger: FastifyBaseLogger; https?: { cert: Buffer; key: Buffer } },
): Promise<FastifyInstance> {
  // With --tls-cert/--tls-key the same app is served over HTTPS (server.ts reloads the pair).
  const app = (
    Fastify(fastifyOptions(deps.config, options)) as unknown as FastifyInstance
  ).withTypeProvider<TypeBoxTypeProvider>();

  // --- infrastructure ---------------------------------------------------------------
  app.setValidatorCompiler(requestValidatorCompiler()); // strict bodies; coerced query strings and path parameters
  refuseNulCharacters(app); // no U+0000 in any text: PostgreSQL cannot store it, so neither engine takes it
  gracefulShutdown(app); // in-flight requests finish; idle keep-alive connections close
  errorResponses(app); // {"error": {"code", "message"}}; anything unexpected is an opaque 500
  app.addHook('onRequest', async (_req, reply) => {
    reply.header('x-guard-server', SERVER_VERSION);
  });
  bodyDeadline(app, deps.config.limits); // a JSON body arrives within --request-timeout of its headers
  // req.principal from `Authorization: Bearer` or the console's session cookie (then writes
  // are CSRF-checked); routes check it.
  authenticateRequests(app, {
    ...deps,
    csrfKey: deps.masterKey.derive('csrf'),
    agentKeys: agentKeyLookup(deps.db),
  });
  await apiDocs(app); // /openapi.json and /docs, of every route registered below

  // --- capabilities -----------------------------------------------------------------
  await app.register(healthRoutes, deps);
  await app.register(authRoutes, deps);
  await app.register(userRoutes, deps);
  await app.register(auditRoutes, deps);
  await app.register(enrollmentRoutes, deps);
  await app.register(tenantRoutes, deps);
  await app.register(scimRoutes, deps); // SCIM tokens (/v1/tenant/scim-tokens) and SCIM 2.0 at /scim/v2
  await app.register(ssoRoutes, deps); // single sign-on: the tenant's identity providers, the OIDC and SAML round trips
  await app.register(agentRoutes, deps);
  await app.register(bundleRequestRoutes, deps); // console push: requests, and the daemon's long poll
  await app.register(detectionRoutes, {
    detection: deps.detection,
    now: deps.now,
    wakeAgents: (tenantId) => deps.commands.wakeTenant(tenantId),
  }); // the tenant's detection policy, handed to its agents through their command channel
  await app.register(supportRoutes, deps);
  await app.register(insightRoutes, deps); // findings of each bundle, and its evidence lines
  await app.register(analyzerRoutes, deps); // analyzer rules (support staff), re-analysis
  const withWake = { ...deps, wakeDeliveries: deps.webhooks.wake };
  await app.register(collectionScheduleRoutes, deps); // the tenant's collection schedule (weekly, on critical signals)
  const onCriticalSignal = criticalSignalTrigger(deps);
  await app.register(signalRoutes, {
    ...withWake,
    onCriticalSignal: async (signal) => {
      if (signal.agent_id === null) return;
      const r = await onCriticalSignal({ ...signal, agent_id: signal.agent_id });
      if (r.outcome !== 'off')
        app.log.info({ signalId: signal.id, serverId: signal.agent_id, ...r }, 'collection schedule: critical signal');
    },
  });
  await app.register(webhookRoutes, withWake);
  // The embedded store's presigned PUT (an S3 store's PUTs go to the bucket): its own
  // content-type parser for raw streamed bodies.
  if (deps.store.kind === 'fs') await app.register(objectRoutes, deps);
  await app.register(consoleRoutes, deps); // the built SPA at /console/; `/` redirects there
  // /metrics is not here: it has its own listener (metrics-listener.ts, --metrics-listen).
  return app;
}
