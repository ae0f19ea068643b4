// What other features and the app use of authentication.

export { answerJson, passkeyProblem, passkeySecondFactor } from './api/passkeys.ts';
export {
  SESSION_ENDED_KEY,
  SESSION_KEY,
  type Session,
  type SessionUser,
  useRefreshSession,
  useSession,
  useSignOut,
} from './api/session.ts';
export { AuthCard } from './components/auth-card.tsx';
export { Gate, gated } from './components/gate.tsx';
export { PASSWORD_MIN, passwordProblem } from './password-rules.ts';
export { can, homePath, type Permission, type Role } from './permissions.ts';
export { SetPasswordPage } from './routes/set-password.tsx';
export { SignInPage } from './routes/sign-in.tsx';
export { UserContext, useCan, useUser } from './user-context.ts';
