import type { CredentialsRepository } from './credentials-repository.ts';
import type { LoginRateLimiter } from './login-rate-limit.ts';
import type { SessionsRepository } from './sessions-repository.ts';
import type { SessionSettings } from './settings.ts';

/** What the sign-in and "me" handlers work with; built once by authRoutes. */
export interface AuthContext {
  sessions: SessionsRepository;
  credentials: CredentialsRepository;
  limiter: LoginRateLimiter;
  lifetimes: SessionSettings;
  csrfKey: Buffer;
  now: () => Date;
  publicUrl: () => string;
}
