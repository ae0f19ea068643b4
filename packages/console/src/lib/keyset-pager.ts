// Keyset paging state: the API pages newest first with an opaque `before` cursor and answers
// `next_before` (null on the last page). Going back pops the cursors already visited, so no
// page is ever fetched by offset.

import { useCallback, useState } from 'react';

export interface KeysetPager {
  /** The cursor of the page shown (undefined: the first page). */
  before: string | undefined;
  page: number;
  hasPrevious: boolean;
  next(nextBefore: string): void;
  previous(): void;
  reset(): void;
}

export function useKeysetPager(): KeysetPager {
  const [cursors, setCursors] = useState<string[]>([]);
  const next = useCallback((nextBefore: string) => setCursors((c) => [...c, nextBefore]), []);
  const previous = useCallback(() => setCursors((c) => c.slice(0, -1)), []);
  const reset = useCallback(() => setCursors([]), []);
  return {
    before: cursors.at(-1),
    page: cursors.length + 1,
    hasPrevious: cursors.length > 0,
    next,
    previous,
    reset,
  };
}
