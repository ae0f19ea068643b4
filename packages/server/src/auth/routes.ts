// Sign-in, sessions and each user's own account (docs/console.md). One router per resource:
//   sessions/   /v1/auth/login, logout, session, password-links/{token}, set-password
//   me/         /v1/me/sessions, /v1/me/password, /v1/me/tokens
//   mfa/        /v1/me/mfa: the authenticator app (TOTP) and recovery codes
//   passkeys/   /v1/me/passkeys, /v1/auth/passkey, /v1/auth/login/mfa/passkey

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Db } from '../db/index.ts';
import type { MasterKey } from '../kernel/master-key.ts';
import type { AuthContext } from './context.ts';
import { CredentialsRepository } from './credentials-repository.ts';
import { AuthFlows } from './flows.ts';
import { LoginRateLimiter } from './login-rate-limit.ts';
import { meRoutes } from './me/routes.ts';
import { mfaRoutes } from './mfa/routes.ts';
import { MfaRepository } from './mfa-repository.ts';
import { PasskeysRepository } from './passkeys/repository.ts';
import { passkeyRoutes } from './passkeys/routes.ts';
import { sessionRoutes } from './sessions/routes.ts';
import { SessionsRepository } from './sessions-repository.ts';
import type { SessionSettings } from './settings.ts';

/** What sign-in and the "me" routes need of the server. */
export interface AuthRoutesDeps {
  db: Db;
  now: () => Date;
  /** Base of set-password links. */
  publicUrl: () => string;
  /** The CSRF key is derived from it. */
  masterKey: MasterKey;
  config: { sessions: SessionSettings };
}

/** What a sign-in needs of the server, for a capability that signs people in too (sso/). */
export type SignInDeps = AuthRoutesDeps;

/**
 * What opening a session needs (openSession), for the sign-in routes here and for single
 * sign-on's (sso/), which end their round trips with a session too.
 */
export function signInContext(deps: AuthRoutesDeps): AuthContext {
  return {
    sessions: new SessionsRepository(deps.db),
    credentials: new CredentialsRepository(deps.db),
    limiter: new LoginRateLimiter(deps.db),
    flows: new AuthFlows(deps.db, deps.now),
    mfa: new MfaRepository(deps.db),
    masterKey: deps.masterKey,
    lifetimes: deps.config.sessions,
    csrfKey: deps.masterKey.derive('csrf'),
    now: deps.now,
    publicUrl: deps.publicUrl,
  };
}

export const authRoutes: FastifyPluginAsyncTypebox<AuthRoutesDeps> = async (app, deps) => {
  const ctx = signInContext(deps);
  await app.register(sessionRoutes, ctx);
  await app.register(meRoutes, ctx);
  await app.register(mfaRoutes, ctx);
  await app.register(passkeyRoutes, { ...ctx, passkeys: new PasskeysRepository(deps.db) });
};
