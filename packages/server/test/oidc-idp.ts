// A real OpenID Connect provider on loopback for the tests (panva's oidc-provider): one
// confidential client (Guard) with the code flow, the people it knows by login (their claims,
// a groups claim among them), its own login form (devInteractions), and Guard's grant given
// without a consent page (a first-party client). The server's API tests and the console's
// Chromium test both run against it.

import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Provider } from 'oidc-provider';

export interface OidcIdp {
  issuer: string;
  close(): Promise<void>;
}

export async function startOidcIdp(options: {
  /** 127.0.0.1, or localhost: another site than a console served on 127.0.0.1. */
  host: '127.0.0.1' | 'localhost';
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** Claims by login (the name typed on the provider's form). */
  people: Record<string, Record<string, unknown>>;
}): Promise<OidcIdp> {
  const server = http.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const issuer = `http://${options.host}:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub, ...options.people[sub] }) }),
    async loadExistingGrant(ctx) {
      const grantId = ctx.oidc.session?.grantIdFor(ctx.oidc.client?.clientId ?? '');
      if (grantId) return ctx.oidc.provider.Grant.find(grantId);
      const grant = new ctx.oidc.provider.Grant({
        clientId: ctx.oidc.client?.clientId,
        accountId: ctx.oidc.session?.accountId,
      });
      grant.addOIDCScope('openid email profile groups');
      await grant.save();
      return grant;
    },
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ['oidc-test-cookie-key-0123456789'] },
  });
  server.on('request', provider.callback());
  return {
    issuer,
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
}
