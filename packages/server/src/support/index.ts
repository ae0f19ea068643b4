// Support bundles: intake from agents (presign, register) and reads for support staff and
// the tenant's people, every read audited.
export { supportRoutes } from './routes.ts';
