import { TextField } from '../../../../components/text-field.tsx';

/** The optional rate limit, as typed (empty: none). */
export function RateLimitField({
  value,
  error,
  onChange,
}: {
  value: string;
  error: string | undefined;
  onChange: (text: string) => void;
}) {
  return (
    <TextField
      label="Rate limit (deliveries per second)"
      value={value}
      inputMode="decimal"
      autoComplete="off"
      placeholder="no limit"
      hint="Deliveries beyond it wait their turn; none fails because of it. Empty: no limit."
      messageLines={2}
      error={error}
      onChange={(e) => onChange(e.target.value)}
    />
  );
}
