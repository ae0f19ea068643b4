import { useEffect, useState } from 'react';
import { formatExact, formatNextRetry } from '../lib/relative-time.ts';
import { useNow } from '../lib/use-now.ts';

/** Under a minute away the countdown moves every second; past it, "due now". */
const CLOSE_MS = 60_000;

/** When a delivery's next attempt is due: "in 3 seconds", "in 5 minutes", or "due now" once it is; the exact UTC time on hover. */
export function NextRetry({ at, empty = '—' }: { at: string | null | undefined; empty?: string }) {
  const shared = useNow();
  const [tick, setTick] = useState(() => Date.now());
  const dueMs = at ? Date.parse(at) : Number.NaN;
  const close = dueMs - Math.max(shared, tick) < CLOSE_MS && dueMs > Math.max(shared, tick) - 1000;
  useEffect(() => {
    if (!close) return;
    const timer = setInterval(() => setTick(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [close]);
  if (!at) return <span>{empty}</span>;
  return (
    <time dateTime={at} title={formatExact(at)}>
      {formatNextRetry(at, Math.max(shared, tick))}
    </time>
  );
}
