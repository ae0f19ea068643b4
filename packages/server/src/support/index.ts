// Support bundles: intake from agents (presign, register), reads for support staff and the
// tenant's people, every read audited; deletion by the tenant's admin and by retention.
export { sweepExpiredBundles } from './retention.ts';
export { supportRoutes } from './routes.ts';
