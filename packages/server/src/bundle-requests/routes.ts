// Console-pushed support bundles (DESIGN §4 contract — bundle requests): people create and
// follow requests (console/routes.ts), for many servers at once too (batches/routes.ts); `guard-agent daemon` heartbeats, long-polls for them
// and reports each step (agent/routes.ts).

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AgentsRepository } from '../agents/index.ts';
import type { Db } from '../db/index.ts';
import type { DetectionPolicies } from '../detection/index.ts';
import { TenantsRepository } from '../tenants/index.ts';
import { agentCommandRoutes } from './agent/routes.ts';
import { batchRoutes } from './batches/routes.ts';
import { BundleRequestsRepository } from './bundle-requests-repository.ts';
import type { CommandHub } from './command-hub.ts';
import { consoleRequestRoutes } from './console/routes.ts';
import type { RequestsContext } from './context.ts';

/** What bundle requests need of the server. */
export interface BundleRequestsDeps {
  db: Db;
  now: () => Date;
  /** Wakes the held command polls of `guard-agent daemon`. */
  commands: CommandHub;
  detection: DetectionPolicies;
  config: { bundleRequestTtlMs: number };
}

export const bundleRequestRoutes: FastifyPluginAsyncTypebox<BundleRequestsDeps> = async (app, deps) => {
  const ctx: RequestsContext = {
    requests: new BundleRequestsRepository(deps.db),
    agents: new AgentsRepository(deps.db),
    tenants: new TenantsRepository(deps.db),
    hub: deps.commands,
    detection: deps.detection,
    db: deps.db,
    now: deps.now,
    ttlMs: deps.config.bundleRequestTtlMs,
  };
  await app.register(consoleRequestRoutes, ctx);
  await app.register(agentCommandRoutes, ctx);
  await app.register(batchRoutes, ctx);
};
