import type { Db } from '../db/index.ts';
import type { ObjectStore, UploadsRepository } from '../objects/index.ts';
import type { BundlesRepository } from './bundles-repository.ts';

/** What the support handlers work with; built once by supportRoutes. */
export interface SupportContext {
  bundles: BundlesRepository;
  uploads: UploadsRepository;
  store: ObjectStore;
  /** For the audit log (audit.ts). */
  db: Db;
  now: () => Date;
  maxBundleBytes: number;
  /** 0: no quota. */
  tenantQuotaBytes: number;
  /** Tells the insights worker a bundle was queued for analysis. */
  wakeInsights: () => void;
}
