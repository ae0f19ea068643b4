// Single sign-on (DESIGN §6, issue 22): a tenant's OpenID Connect and SAML identity providers
// (connections.ts), the sign-in round trips (oidc/, saml/), the dispatcher by email domain
// (routes.ts), and who a sign-in makes of the person vouched for (members.ts).
export { type SsoConnection, SsoConnections } from './connections.ts';
export { type SsoIdentity, type SsoMember, ssoMember, userDeactivated } from './members.ts';
export { type SsoDeps, ssoRoutes } from './routes.ts';
