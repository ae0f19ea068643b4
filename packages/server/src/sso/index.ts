// Single sign-on (DESIGN §6, issue 22): a tenant's OpenID Connect and SAML identity providers,
// the sign-in round trips, and who a sign-in makes of the person vouched for (members.ts).
export { type SsoIdentity, type SsoMember, ssoMember, userDeactivated } from './members.ts';
export { samlRoutes } from './saml/routes.ts';
