// Filters live in the URL's query string, so a filtered list can be bookmarked and shared.

import { useCallback, useMemo } from 'react';
import { useSearchParams } from 'react-router';

type FilterValue = string | number | undefined;

export function useUrlFilters<T extends { [K in keyof T]?: FilterValue }>(
  numeric: readonly (keyof T)[] = [],
): [T, (next: T) => void] {
  const [params, setParams] = useSearchParams();
  const value = useMemo(() => {
    const out: Record<string, FilterValue> = {};
    for (const [k, v] of params) out[k] = numeric.includes(k as keyof T) ? Number(v) : v;
    return out as T;
  }, [params, numeric]);
  const set = useCallback(
    (next: T) => {
      const p = new URLSearchParams();
      for (const [k, v] of Object.entries(next)) if (v !== undefined && v !== '') p.set(k, String(v));
      setParams(p);
    },
    [setParams],
  );
  return [value, set];
}
