// Signal severity: an integer 1 to 5 on the wire (spec 2.6), a word in the console.

export const SEVERITIES = [
  { value: 1, label: 'info' },
  { value: 2, label: 'low' },
  { value: 3, label: 'medium' },
  { value: 4, label: 'high' },
  { value: 5, label: 'critical' },
] as const;

export function severityLabel(severity: number): string {
  return SEVERITIES.find((s) => s.value === severity)?.label ?? `severity ${severity}`;
}
