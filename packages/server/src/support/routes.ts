// Support bundles (DESIGN §4, §6): intake from agents, then reads for support staff and the
// tenant's people (every read audited). One router per resource:
//   intake/    POST /v1/support/bundle/upload-url, POST /v1/support/bundle/register (agent key)
//   bundles/   GET  /v1/support/bundles[/{id}[/download|/diff]]

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/index.ts';
import { type ObjectStore, UploadsRepository } from '../objects/index.ts';
import { bundleRoutes } from './bundles/routes.ts';
import { BundlesRepository } from './bundles-repository.ts';
import type { SupportContext } from './context.ts';
import { intakeRoutes } from './intake/routes.ts';

/** What bundle intake and the bundle reads need of the server. */
export interface SupportDeps {
  db: Db;
  now: () => Date;
  store: ObjectStore;
  config: { maxBundleBytes: number; limits: { tenantQuotaBytes: number } };
  /** wake(): a bundle was registered, its analysis is queued. */
  insights: { wake: () => void };
}

export const supportRoutes: FastifyPluginAsyncTypebox<SupportDeps> = async (app, deps) => {
  const ctx: SupportContext = {
    bundles: new BundlesRepository(deps.db),
    uploads: new UploadsRepository(deps.db),
    store: deps.store,
    db: deps.db,
    now: deps.now,
    maxBundleBytes: deps.config.maxBundleBytes,
    tenantQuotaBytes: deps.config.limits.tenantQuotaBytes,
    wakeInsights: deps.insights.wake,
  };
  await app.register(intakeRoutes, ctx);
  await app.register(bundleRoutes, ctx);
};
