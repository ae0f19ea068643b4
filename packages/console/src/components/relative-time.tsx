import { formatExact, formatRelative } from '../lib/relative-time.ts';
import { useNow } from '../lib/use-now.ts';

/** "3 minutes ago", with the exact UTC time on hover (title) and in the datetime attribute. */
export function RelativeTime({ at, empty = '—' }: { at: string | null | undefined; empty?: string }) {
  const now = useNow();
  if (!at) return <span>{empty}</span>;
  return (
    <time dateTime={at} title={formatExact(at)}>
      {formatRelative(at, now)}
    </time>
  );
}
