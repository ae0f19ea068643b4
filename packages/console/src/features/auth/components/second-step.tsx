// The sign-in's second step (DESIGN §6): the password was right and the user holds a second
// factor. A code of the authenticator app (field "Authentication code"), one of the recovery
// codes, or a passkey; a wrong code says so, and after five the password is asked again.

import { type FormEvent, useState } from 'react';
import { WriteError } from '../../../components/query-states.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { passkeyProblem, usePasskeySecondFactor } from '../api/passkeys.ts';
import { type MfaChallenge, useCompleteMfa } from '../api/session.ts';

function stepMessage(error: unknown): string | undefined {
  if (!(error instanceof ApiError)) return error instanceof Error ? error.message : undefined;
  if (error.code === 'invalid_code')
    return 'That code is not right, or it was already used. Try the code the app shows now.';
  if (error.code === 'mfa_expired') return 'This sign-in expired. Start over with your email and password.';
  if (error.status === 429) return `${error.message} Wait a few minutes before trying again.`;
  return error.message;
}

export function SecondStep({ challenge, onStartOver }: { challenge: MfaChallenge; onStartOver: () => void }) {
  const complete = useCompleteMfa();
  const passkey = usePasskeySecondFactor(challenge.mfa_token);
  const hasTotp = challenge.methods.includes('totp');
  const [recovery, setRecovery] = useState(!hasTotp && challenge.methods.includes('recovery_code'));
  const [code, setCode] = useState('');
  const expired = complete.error instanceof ApiError && complete.error.code === 'mfa_expired';
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    complete.mutate(
      recovery ? { mfa_token: challenge.mfa_token, recovery_code: code } : { mfa_token: challenge.mfa_token, code },
      { onError: () => setCode('') },
    );
  };
  const message = stepMessage(complete.error);
  return (
    <div className="form">
      {message && <WriteError error={new Error(message)} />}
      {expired ? (
        <button type="button" className="button primary" onClick={onStartOver}>
          Start over
        </button>
      ) : (
        <>
          {hasTotp && (
            <form className="form" onSubmit={onSubmit}>
              <p className="muted">
                {recovery
                  ? 'Enter one of the recovery codes you saved when you set up two-step sign-in. Each works once.'
                  : 'Open your authenticator app and enter the 6-digit code it shows for Guard.'}
              </p>
              {recovery ? (
                <TextField
                  key="recovery"
                  label="Recovery code"
                  name="recovery-code"
                  autoComplete="off"
                  spellCheck={false}
                  required
                  autoFocus
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                />
              ) : (
                <TextField
                  key="code"
                  label="Authentication code"
                  name="code"
                  inputMode="numeric"
                  autoComplete="one-time-code"
                  pattern="[0-9 ]*"
                  maxLength={7}
                  required
                  autoFocus
                  value={code}
                  onChange={(e) => setCode(e.target.value)}
                />
              )}
              <div className="actions">
                <button type="submit" className="button primary" disabled={complete.isPending}>
                  Verify
                </button>
                <button
                  type="button"
                  className="button"
                  onClick={() => {
                    setRecovery(!recovery);
                    setCode('');
                    complete.reset();
                  }}
                >
                  {recovery ? 'Use the authenticator app' : 'Use a recovery code'}
                </button>
              </div>
            </form>
          )}
          {challenge.methods.includes('passkey') && (
            <div className="form">
              {passkey.error && <WriteError error={new Error(passkeyProblem(passkey.error))} />}
              <button
                type="button"
                className={hasTotp ? 'button' : 'button primary'}
                disabled={passkey.isPending}
                onClick={() => passkey.mutate()}
              >
                Use a passkey
              </button>
            </div>
          )}
          <button type="button" className="button" onClick={onStartOver}>
            Sign in as someone else
          </button>
        </>
      )}
    </div>
  );
}
