import { useId } from 'react';
import { TextField } from '../../../../components/text-field.tsx';
import { EVENT_TYPES, type EventType } from '../../api/endpoints.ts';

const EVENT_LABELS: Record<EventType, { label: string; hint: string }> = {
  signal_created: { label: 'Signals', hint: 'every new security signal that passes the filters below' },
  test: { label: 'Test events', hint: 'what Send test event sends' },
  'endpoint.failing': {
    label: 'Endpoint failing',
    hint: 'another endpoint of yours has failed for 50 %, 75 % and 90 % of the time before Guard disables it',
  },
  'endpoint.disabled': { label: 'Endpoint disabled', hint: 'Guard disabled another endpoint of yours' },
  'endpoint.certificate_expiring': {
    label: 'Client certificate expiring',
    hint: 'an endpoint’s client certificate (mTLS) expires in 30, 7 or 1 days',
  },
  'audit.event': {
    label: 'Audit log entries',
    hint: 'every entry of your audit log (who read or changed what), for a SIEM',
  },
};
const SEVERITIES = [
  [1, '1 (info): every signal'],
  [2, '2 and above'],
  [3, '3 and above'],
  [4, '4 and above'],
  [5, '5 (critical) only'],
] as const;

/** The events the endpoint receives, and the filter of its signals: a minimum severity, signal types. */
export function EventFields({
  events,
  minSeverity,
  signalTypes,
  errors,
  onEvent,
  onMinSeverity,
  onSignalTypes,
}: {
  events: readonly EventType[];
  minSeverity: number;
  /** As typed: types separated by commas. */
  signalTypes: string;
  errors: { events?: string; signalTypes?: string };
  onEvent: (type: EventType, chosen: boolean) => void;
  onMinSeverity: (severity: number) => void;
  onSignalTypes: (text: string) => void;
}) {
  const severityId = useId();
  return (
    <fieldset aria-describedby={errors.events ? `${severityId}-events-error` : undefined}>
      <legend>Events</legend>
      <p className="hint">What Guard sends to this endpoint.</p>
      {EVENT_TYPES.map((t) => (
        <div key={t} className="check-row">
          <label className="checkbox">
            <input
              type="checkbox"
              checked={events.includes(t)}
              aria-invalid={errors.events ? true : undefined}
              onChange={(e) => onEvent(t, e.target.checked)}
            />
            {EVENT_LABELS[t].label}
          </label>
          <span className="hint">
            {' '}
            <code>{t}</code>: {EVENT_LABELS[t].hint}
          </span>
        </div>
      ))}
      {errors.events && (
        <p className="error" id={`${severityId}-events-error`}>
          {errors.events}
        </p>
      )}
      <div className="field">
        <label htmlFor={severityId}>Minimum severity</label>
        <select id={severityId} value={minSeverity} onChange={(e) => onMinSeverity(Number(e.target.value))}>
          {SEVERITIES.map(([n, label]) => (
            <option key={n} value={n}>
              {label}
            </option>
          ))}
        </select>
      </div>
      <TextField
        label="Signal types"
        value={signalTypes}
        autoComplete="off"
        spellCheck={false}
        placeholder="sudo_command_executed, ssh_login"
        hint="Only signals of these types, separated by commas. Empty: every type."
        messageLines={2}
        error={errors.signalTypes}
        onChange={(e) => onSignalTypes(e.target.value)}
      />
    </fieldset>
  );
}
