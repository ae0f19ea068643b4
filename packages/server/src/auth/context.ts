import type { MasterKey } from '../kernel/master-key.ts';
import type { CredentialsRepository } from './credentials-repository.ts';
import type { AuthFlows } from './flows.ts';
import type { LoginRateLimiter } from './login-rate-limit.ts';
import type { MfaRepository } from './mfa-repository.ts';
import type { SessionsRepository } from './sessions-repository.ts';
import type { SessionSettings } from './settings.ts';

/** What the sign-in and "me" handlers work with; built once by authRoutes. */
export interface AuthContext {
  sessions: SessionsRepository;
  credentials: CredentialsRepository;
  limiter: LoginRateLimiter;
  /** Sign-in state between two requests, shared by every replica (flows.ts). */
  flows: AuthFlows;
  /** Second factors and the tenant's sign-in policy. */
  mfa: MfaRepository;
  /** Seals what sign-in keeps secret at rest (TOTP secrets): derive a key per purpose. */
  masterKey: MasterKey;
  lifetimes: SessionSettings;
  csrfKey: Buffer;
  now: () => Date;
  publicUrl: () => string;
}
