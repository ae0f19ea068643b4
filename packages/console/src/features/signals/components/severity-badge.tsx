import { severityLabel } from '../../../lib/severity.ts';

export function SeverityBadge({ severity }: { severity: number }) {
  return (
    <span className={`badge sev-${severity}`} title={`Severity ${severity} of 5`}>
      {severityLabel(severity)}
    </span>
  );
}
