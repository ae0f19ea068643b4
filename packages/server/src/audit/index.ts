// The audit log: written by the capabilities that read or change what must be accounted for
// (audit.ts), read by support staff and admins (GET /v1/audit).
export { type AuditAction, type AuditActor, audit } from './audit.ts';
export { auditRoutes } from './routes.ts';
