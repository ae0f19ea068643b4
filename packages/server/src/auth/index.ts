// Who is calling, and the secrets that prove it: bearer tokens and console sessions
// (principal.ts, secrets.ts), sign-in and each user's own account (routes.ts), and what the
// users capability needs to hand out set-password links and remove a user's credentials.
export type { AuthContext } from './context.ts';
export { deleteCredentialsOf } from './credentials-repository.ts';
export { AuthFlows, type Flow, type FlowKind } from './flows.ts';
export { resetSecondFactors } from './mfa-repository.ts';
export { type IssuedLink, issuePasswordLink } from './password-links.ts';
export {
  type AgentKeyLookup,
  type AgentPrincipal,
  authenticateRequests,
  type DeclaredRoute,
  declaredRoutes,
  type Principal,
  requireAgent,
  requireTenantUser,
  requireUser,
  resolvePrincipal,
  type TenantUser,
  type UserPrincipal,
} from './principal.ts';
export { stillAuthorised } from './principal-recheck.ts';
export { type AuthRoutesDeps, authRoutes, type SignInDeps, signInContext } from './routes.ts';
export { SCOPE_AREAS, type ScopeArea, TOKEN_SCOPES, type TokenScope } from './scopes.ts';
export { hashPassword, hashSecret, NO_PASSWORD, newId, newPassword, newSecret } from './secrets.ts';
export {
  clearedSsoBindingCookie,
  isSecureUrl,
  newSsoBinding,
  ssoBindingCookie,
  ssoBindingMatches,
} from './session-cookie.ts';
export { normaliseEmail } from './sessions/handlers.ts';
export type { SessionSettings } from './settings.ts';
export {
  openSession,
  type SignedIn,
  type SignInAccount,
  type SignInMethod,
  setSessionCookie,
} from './sign-in.ts';
