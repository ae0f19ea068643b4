// A tenant's people, managed by its admins (DESIGN §7: the users API).
export { userRoutes } from './routes.ts';
export { activeAdmins, lockTenant, type OperatorReset, resetMfaByOperator } from './users-repository.ts';
