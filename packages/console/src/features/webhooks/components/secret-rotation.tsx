// The endpoint's signing secret: when it was last rotated, the rotation in its grace period
// (until when the old secret stays valid, and the proof), and for admins Rotate secret with a
// grace period, the new secret shown once, the proof step and ending the grace period early.
// The rules are the server's (409 until the proof succeeded); this only shows them.

import { useId, useState } from 'react';
import { CopyField } from '../../../components/copy-field.tsx';
import { DeliveryStatusBadge } from '../../../components/delivery-status.tsx';
import { WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { formatExact } from '../../../lib/relative-time.ts';
import { useCompleteRotation, useProveSecret, useRotateSecret } from '../api/endpoints.ts';

type Endpoint = {
  id: string;
  enabled: boolean;
  secret_rotated_at: string | null;
  rotation: {
    started_at: string;
    grace_ends_at: string;
    proof: { signal_id: string; delivery_id: string | null; status: string | null } | null;
    can_complete: boolean;
  } | null;
};

const GRACE_CHOICES = [
  { seconds: 3600, label: '1 hour' },
  { seconds: 86_400, label: '24 hours' },
  { seconds: 7 * 86_400, label: '7 days' },
  { seconds: 0, label: 'None: the old secret stops working at once' },
] as const;

function NewSecret({ secret, onDone }: { secret: string; onDone: () => void }) {
  return (
    <div className="stack">
      <div className="notice warn">
        <p>
          <strong>The new secret is shown only once.</strong> Add it to your receiver beside the old one: during the
          grace period every delivery is signed with both.
        </p>
      </div>
      <CopyField
        label="New signing secret"
        value={secret}
        hint="Guard-Signature carries one entry per valid secret, the new one first."
      />
      <button type="button" className="button" onClick={onDone}>
        I have stored the new secret
      </button>
    </div>
  );
}

export function SecretRotation({ endpoint: e, canWrite }: { endpoint: Endpoint; canWrite: boolean }) {
  const graceId = useId();
  const [grace, setGrace] = useState(86_400);
  const [secret, setSecret] = useState<string>();
  const rotate = useRotateSecret(e.id, setSecret);
  const prove = useProveSecret(e.id);
  const complete = useCompleteRotation(e.id);
  const r = e.rotation;
  return (
    <section className="card" aria-labelledby="secret-rotation-heading">
      <h2 id="secret-rotation-heading">Secret rotation</h2>
      <dl className="details">
        <dt>Current secret</dt>
        <dd>
          {e.secret_rotated_at ? (
            <>
              rotated <RelativeTime at={e.secret_rotated_at} />
            </>
          ) : (
            'the one made with the endpoint'
          )}
        </dd>
        <dt>Rotation</dt>
        <dd>
          {r ? (
            <>
              <span className="badge warn">in grace period</span> the old secret stays valid until{' '}
              <time dateTime={r.grace_ends_at}>{formatExact(r.grace_ends_at)}</time>
            </>
          ) : (
            'none in progress'
          )}
        </dd>
        {r && (
          <>
            <dt>Proof of the new secret</dt>
            <dd>
              {r.proof ? (
                <>
                  <DeliveryStatusBadge status={r.proof.status ?? 'pending'} />{' '}
                  {r.can_complete
                    ? 'your receiver accepted a delivery signed with the new secret alone'
                    : 'a test event signed with the new secret alone'}
                </>
              ) : (
                'not sent yet'
              )}
            </dd>
          </>
        )}
      </dl>
      {secret && <NewSecret secret={secret} onDone={() => setSecret(undefined)} />}
      <WriteError error={rotate.error ?? prove.error ?? complete.error} />
      {canWrite && !r && !secret && (
        <div className="inline-form">
          <div className="field">
            <label htmlFor={graceId}>Grace period</label>
            <select id={graceId} value={grace} onChange={(ev) => setGrace(Number(ev.target.value))}>
              {GRACE_CHOICES.map((c) => (
                <option key={c.seconds} value={c.seconds}>
                  {c.label}
                </option>
              ))}
            </select>
          </div>
          <button type="button" className="button" disabled={rotate.isPending} onClick={() => rotate.mutate(grace)}>
            Rotate secret
          </button>
        </div>
      )}
      {canWrite && r && (
        <div className="stack">
          <p className="hint">
            Prove the new secret first: Guard sends a test event signed with the new secret only. Once your receiver
            answers it with a 2xx, you can end the grace period early.
          </p>
          <div className="actions">
            <button
              type="button"
              className="button"
              disabled={prove.isPending || !e.enabled}
              onClick={() => prove.mutate()}
            >
              Send proof event
            </button>
            <button
              type="button"
              className="button primary"
              disabled={complete.isPending || !r.can_complete}
              onClick={() => complete.mutate()}
            >
              End grace period now
            </button>
          </div>
        </div>
      )}
      {complete.isSuccess && !r && (
        <p className="notice ok" role="status">
          Grace period ended: the old secret is erased, deliveries are signed with the new one only.
        </p>
      )}
    </section>
  );
}
