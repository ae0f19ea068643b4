import type { Db } from '../db/index.ts';
import type { MasterKey } from '../kernel/master-key.ts';
import { CredentialsRepository } from './credentials-repository.ts';
import { AuthFlows } from './flows.ts';
import { LoginRateLimiter } from './login-rate-limit.ts';
import { SessionsRepository } from './sessions-repository.ts';
import type { SessionSettings } from './settings.ts';

/** What the sign-in and "me" handlers work with; built once by authRoutes. */
export interface AuthContext {
  sessions: SessionsRepository;
  credentials: CredentialsRepository;
  limiter: LoginRateLimiter;
  /** Sign-in state between two requests, shared by every replica (flows.ts). */
  flows: AuthFlows;
  /** Seals what sign-in keeps secret at rest (TOTP secrets): derive a key per purpose. */
  masterKey: MasterKey;
  lifetimes: SessionSettings;
  csrfKey: Buffer;
  now: () => Date;
  publicUrl: () => string;
}

/** What a sign-in needs of the server, for a capability that signs people in (sso/). */
export interface SignInDeps {
  db: Db;
  now: () => Date;
  publicUrl: () => string;
  masterKey: MasterKey;
  config: { sessions: SessionSettings };
}

/**
 * The context of a sign-in for a capability outside auth/ (single sign-on), so that it opens
 * its sessions through openSession like every other way in.
 */
export function signInContext(deps: SignInDeps): AuthContext {
  return {
    sessions: new SessionsRepository(deps.db),
    credentials: new CredentialsRepository(deps.db),
    limiter: new LoginRateLimiter(deps.db),
    flows: new AuthFlows(deps.db, deps.now),
    masterKey: deps.masterKey,
    lifetimes: deps.config.sessions,
    csrfKey: deps.masterKey.derive('csrf'),
    now: deps.now,
    publicUrl: deps.publicUrl,
  };
}
