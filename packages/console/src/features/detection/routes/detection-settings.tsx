// Settings > Detection: which of the seven host detection signal types the tenant's agents raise,
// and with what severity. Admins edit and confirm what changed before it is saved (audited);
// members read. The agents get a saved policy through their command channel within seconds.

import { useState } from 'react';
import { Link } from 'react-router';
import { Page } from '../../../components/page.tsx';
import { ErrorNotice, TableSkeleton, WriteError } from '../../../components/query-states.tsx';
import { RelativeTime } from '../../../components/relative-time.tsx';
import { Gate, useCan } from '../../auth/index.ts';
import { useDetectionPolicy, useUpdateDetectionPolicy } from '../api/policy.ts';
import { PolicyTable } from '../components/policy-table.tsx';
import { changesOf, type Draft } from '../policy-draft.ts';

function DetectionPolicy() {
  const editable = useCan('manageDetection');
  const auditLog = useCan('readAudit');
  const policy = useDetectionPolicy();
  const update = useUpdateDetectionPolicy();
  const [draft, setDraft] = useState<Draft>({});
  const [confirming, setConfirming] = useState(false);
  const [saved, setSaved] = useState<string[]>();
  if (policy.isPending) return <TableSkeleton columns={3} rows={7} label="the detection policy" />;
  if (policy.isError)
    return <ErrorNotice error={policy.error} what="the detection policy" onRetry={() => policy.refetch()} />;
  const p = policy.data;
  const { body, lines } = changesOf(p.signal_types, draft);
  const change = (signalType: string, c: { enabled?: boolean; severity?: number | null }) => {
    setDraft((d) => ({ ...d, [signalType]: { ...d[signalType], ...c } }));
    setConfirming(false);
    setSaved(undefined);
  };
  const save = () =>
    update.mutate(body, {
      onSuccess: () => {
        setSaved(lines);
        setDraft({});
        setConfirming(false);
      },
    });
  return (
    <>
      {!editable && (
        <p className="notice info">Only your organisation's admins change the detection policy; you can read it.</p>
      )}
      <PolicyTable entries={p.signal_types} draft={draft} editable={editable} onChange={change} />
      <p className="hint">
        {p.updated_at ? (
          <>
            Last changed <RelativeTime at={p.updated_at} />.
          </>
        ) : (
          'Never changed: every type is on, with its default severity.'
        )}{' '}
        A type turned off is neither raised by the agents nor accepted from them.
      </p>
      {editable && !confirming && (
        <div className="actions">
          <button
            type="button"
            className="button primary"
            disabled={lines.length === 0}
            onClick={() => setConfirming(true)}
          >
            Save changes
          </button>
          {lines.length > 0 && (
            <button type="button" className="button" onClick={() => setDraft({})}>
              Discard changes
            </button>
          )}
        </div>
      )}
      {editable && confirming && (
        <fieldset className="notice warn confirm">
          <legend className="visually-hidden">Confirm the detection policy change</legend>
          <p>
            Save {lines.length === 1 ? 'this change' : `these ${lines.length} changes`}? Your agents apply it within
            seconds.
          </p>
          <ul>
            {lines.map((l) => (
              <li key={l} className="mono">
                {l}
              </li>
            ))}
          </ul>
          <div className="actions">
            <button type="button" className="button primary" disabled={update.isPending} onClick={save}>
              Save detection policy
            </button>
            <button type="button" className="button" onClick={() => setConfirming(false)}>
              Cancel
            </button>
          </div>
        </fieldset>
      )}
      <WriteError error={update.error} />
      {saved && (
        <div className="notice ok" role="status">
          <p>
            Saved: {saved.join('; ')}. Your agents get it within seconds.{' '}
            {auditLog ? (
              <>
                The change is in the <Link to="/support/audit">audit log</Link>.
              </>
            ) : (
              'The change is in the audit log.'
            )}
          </p>
        </div>
      )}
    </>
  );
}

export function DetectionSettingsPage() {
  return (
    <Gate permission="readDetection">
      <Page
        title="Detection"
        description="Which host events your servers' agents turn into signals, and how severe each one is."
      >
        <DetectionPolicy />
      </Page>
    </Gate>
  );
}

export default DetectionSettingsPage;
