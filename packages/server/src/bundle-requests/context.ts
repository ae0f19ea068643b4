import type { AgentsRepository } from '../agents/index.ts';
import type { Db } from '../db/index.ts';
import type { DetectionPolicies } from '../detection/index.ts';
import type { TenantsRepository } from '../tenants/index.ts';
import type { BundleRequestsRepository } from './bundle-requests-repository.ts';
import type { CommandHub } from './command-hub.ts';

/** What the bundle-request handlers work with; built once by bundleRequestRoutes. */
export interface RequestsContext {
  requests: BundleRequestsRepository;
  agents: AgentsRepository;
  tenants: TenantsRepository;
  hub: CommandHub;
  /** The tenant's detection policy, handed to the agent in every heartbeat and poll answer. */
  detection: DetectionPolicies;
  /** For the audit log and the bundle a done report names. */
  db: Db;
  now: () => Date;
  /** A request not taken by the agent within this expires. */
  ttlMs: number;
}
