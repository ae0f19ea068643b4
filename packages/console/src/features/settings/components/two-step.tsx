// Two-step sign-in in Settings > Account (DESIGN §6): set up an authenticator app by scanning
// a QR code (or typing the setup key), confirm with its first code, then save the ten
// recovery codes shown once. When it is on: how many codes are left, new codes, turning it
// off — each with a current code (or a recovery code). The same component is the whole page
// when the tenant requires a second factor and the session has none (require_mfa).

import { type FormEvent, useState } from 'react';
import { CopyField } from '../../../components/copy-field.tsx';
import { BlockSkeleton, QueryView, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { TextField } from '../../../components/text-field.tsx';
import { ApiError } from '../../../lib/api-client.ts';
import { useConfirmTotp, useDisableTotp, useMfaStatus, useRenewRecoveryCodes, useStartTotp } from '../api/account.ts';
import { QrCode } from './qr-code.tsx';

/** The setup key in groups of four, as authenticator apps show and take it. */
const grouped = (secret: string) => secret.replace(/(.{4})(?=.)/g, '$1 ');

function codeError(error: unknown): string | undefined {
  if (error instanceof ApiError && error.code === 'invalid_code')
    return 'That code is not right. Enter the code the app shows now (it changes every 30 seconds).';
  return undefined;
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  const text = codes.join('\n');
  const download = () => {
    const url = URL.createObjectURL(new Blob([`Guard recovery codes\n\n${text}\n`], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = 'guard-recovery-codes.txt';
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <div className="form">
      <div className="notice warn" role="status">
        <p>
          Save these recovery codes somewhere safe, such as a password manager. Each signs you in once if you lose your
          phone. They are shown only now.
        </p>
      </div>
      <CopyField label="Recovery codes" value={text} multiline copyLabel="Copy recovery codes" />
      <div className="actions">
        <button type="button" className="button" onClick={download}>
          Download
        </button>
        <button type="button" className="button primary" onClick={onDone}>
          I saved my recovery codes
        </button>
      </div>
    </div>
  );
}

interface Setup {
  secret: string;
  otpauth_url: string;
}

function SetUp({
  setup,
  onCodes,
  onCancel,
}: {
  setup: Setup;
  onCodes: (codes: string[]) => void;
  onCancel: () => void;
}) {
  const confirm = useConfirmTotp();
  const [code, setCode] = useState('');
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    confirm.mutate(code, { onSuccess: (r) => onCodes(r.recovery_codes), onError: () => setCode('') });
  };
  return (
    <form className="form" onSubmit={onSubmit}>
      <ol className="steps">
        <li>
          <p>
            Scan this QR code with an authenticator app (1Password, Google Authenticator, Authy, Microsoft
            Authenticator…).
          </p>
          <QrCode text={setup.otpauth_url} label="QR code for your authenticator app" />
          <CopyField
            label="Setup key"
            value={grouped(setup.secret)}
            hint="If you cannot scan the code, type this key into the app (time-based)."
            copyLabel="Copy setup key"
          />
        </li>
        <li>
          <p>Enter the 6-digit code the app now shows for Guard.</p>
          {!codeError(confirm.error) && <WriteError error={confirm.error} />}
          <TextField
            label="Authentication code"
            inputMode="numeric"
            autoComplete="one-time-code"
            maxLength={7}
            required
            value={code}
            error={codeError(confirm.error)}
            onChange={(e) => setCode(e.target.value)}
          />
        </li>
      </ol>
      <div className="actions">
        <button type="submit" className="button primary" disabled={confirm.isPending}>
          Turn on
        </button>
        <button type="button" className="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}

function Manage({ onCodes, required }: { onCodes: (codes: string[]) => void; required: boolean }) {
  const renew = useRenewRecoveryCodes();
  const disable = useDisableTotp();
  const [code, setCode] = useState('');
  const error = renew.error ?? disable.error;
  const act = (which: 'renew' | 'disable') => (e?: FormEvent) => {
    e?.preventDefault();
    if (which === 'renew') renew.mutate(code, { onSuccess: (r) => onCodes(r.recovery_codes) });
    else disable.mutate(code, { onSuccess: () => setCode('') });
  };
  return (
    <form className="form" onSubmit={act('renew')}>
      {!codeError(error) && <WriteError error={error} />}
      <TextField
        label="Code from the app or a recovery code"
        autoComplete="one-time-code"
        required
        value={code}
        error={codeError(error) && 'That code is not right, or it was already used.'}
        hint={required ? 'Your organisation requires two-step sign-in.' : undefined}
        onChange={(e) => setCode(e.target.value)}
      />
      <div className="actions">
        <button type="submit" className="button" disabled={renew.isPending}>
          New recovery codes
        </button>
        <button type="button" className="button danger" disabled={disable.isPending} onClick={() => act('disable')()}>
          Turn off
        </button>
      </div>
    </form>
  );
}

export function TwoStepSignIn({ onChanged }: { onChanged?: () => void }) {
  const status = useMfaStatus();
  const start = useStartTotp();
  const [codes, setCodes] = useState<string[]>();
  return (
    <section className="card" aria-labelledby="two-step-heading">
      <h2 id="two-step-heading">Two-step sign-in</h2>
      <QueryView query={status} what="your two-step sign-in" pending={<BlockSkeleton height="4rem" label="status" />}>
        {(s) =>
          codes ? (
            <RecoveryCodes
              codes={codes}
              onDone={() => {
                setCodes(undefined);
                start.reset();
                onChanged?.();
              }}
            />
          ) : s.totp_enabled ? (
            <>
              <p>
                <span className="badge ok">On</span> Signing in asks for a code of your authenticator app
                {s.totp_enabled_at && (
                  <>
                    {' '}
                    (set up <RelativeTime at={s.totp_enabled_at} />)
                  </>
                )}
                . {s.recovery_codes_left} of 10 recovery codes left.
              </p>
              {s.recovery_codes_left <= 3 && (
                <div className="notice warn" role="status">
                  <p>Few recovery codes are left: make new ones.</p>
                </div>
              )}
              <Manage onCodes={setCodes} required={s.required_by_tenant && s.passkeys === 0} />
            </>
          ) : start.data ? (
            <SetUp setup={start.data} onCodes={setCodes} onCancel={() => start.reset()} />
          ) : (
            <>
              <p>
                <span className="badge">Off</span> Add a second step to signing in: a code from an authenticator app on
                your phone, so a stolen password is not enough.
              </p>
              <WriteError error={start.error} />
              <div>
                <button
                  type="button"
                  className="button primary"
                  disabled={start.isPending}
                  onClick={() => start.mutate(undefined)}
                >
                  Set up authenticator app
                </button>
              </div>
            </>
          )
        }
      </QueryView>
    </section>
  );
}
