// Who is calling, and the secrets that prove it (principal.ts, secrets.ts).
export {
  type AgentPrincipal,
  authenticateRequests,
  type Principal,
  requireAgent,
  requireTenantUser,
  requireUser,
  resolvePrincipal,
  type TenantUser,
  type UserPrincipal,
} from './principal.ts';
export { hashPassword, hashSecret, newId, newPassword, newSecret } from './secrets.ts';
