// The tenant's own settings (GET/PATCH /v1/tenant/settings): today whether vendor support
// staff may request support bundles from its servers.
export { tenantRoutes } from './routes.ts';
export { type TenantSettings, TenantsRepository } from './tenants-repository.ts';
