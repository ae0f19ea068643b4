import type { KeysetPager } from '../lib/keyset-pager.ts';

/** Previous/Next over a keyset-paged list; `nextBefore` is the API's cursor (null: last page). */
export function Pager({
  pager,
  nextBefore,
  label,
}: {
  pager: KeysetPager;
  nextBefore: string | null | undefined;
  label: string;
}) {
  if (!pager.hasPrevious && !nextBefore) return null;
  return (
    <nav className="pager" aria-label={`${label} pages`}>
      <span className="hint">Page {pager.page}</span>
      <button type="button" className="button small" disabled={!pager.hasPrevious} onClick={pager.previous}>
        Previous page
      </button>
      <button
        type="button"
        className="button small"
        disabled={!nextBefore}
        onClick={() => nextBefore && pager.next(nextBefore)}
      >
        Next page
      </button>
    </nav>
  );
}
