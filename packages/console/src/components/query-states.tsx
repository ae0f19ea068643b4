// What a page shows while its data loads, when loading failed, and when there is nothing yet:
// each says what to do next. Skeletons take the space the data will, so nothing shifts.

import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { ApiError } from '../lib/api-client.ts';

export function TableSkeleton({ columns, rows = 5, label }: { columns: number; rows?: number; label: string }) {
  return (
    <div className="table-wrap" aria-busy="true">
      <table>
        <caption className="visually-hidden">{label}</caption>
        <tbody>
          {Array.from({ length: rows }, (_, r) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: placeholder rows have no identity
            <tr className="skeleton" key={r}>
              {Array.from({ length: columns }, (_, c) => (
                // biome-ignore lint/suspicious/noArrayIndexKey: placeholder cells have no identity
                <td key={c}>
                  <span />
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <p className="visually-hidden" role="status">
        Loading {label}…
      </p>
    </div>
  );
}

export function BlockSkeleton({ height, label }: { height: string; label: string }) {
  return (
    <div className="skeleton-block" style={{ height }} aria-busy="true">
      <span className="visually-hidden" role="status">
        Loading {label}…
      </span>
    </div>
  );
}

/** What went wrong in words a user can act on, with a retry when it may help. */
export function ErrorNotice({ error, what, onRetry }: { error: unknown; what: string; onRetry?: () => void }) {
  const message = error instanceof Error ? error.message : String(error);
  let advice = 'Try again; if it keeps failing, check that guard-server is running and look at its log.';
  if (error instanceof ApiError) {
    if (error.status === 403) advice = 'Your role does not allow this. Ask an admin of your organisation.';
    else if (error.status === 404) advice = 'It may have been deleted. Go back to the list and pick another.';
    else if (error.status === 0) advice = 'Check your connection and that guard-server is running, then try again.';
  }
  return (
    <div className="notice error" role="alert">
      <p>
        <strong>Could not load {what}.</strong> {message}
      </p>
      <p>{advice}</p>
      {onRetry && (
        <button type="button" className="button small" onClick={onRetry}>
          Try again
        </button>
      )}
    </div>
  );
}

/** An error returned by a write, shown beside the form or button that made it. */
export function WriteError({ error }: { error: unknown }) {
  if (!error) return null;
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div className="notice error" role="alert">
      <p>{message}</p>
    </div>
  );
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="card state">
      <h2>{title}</h2>
      {children}
    </div>
  );
}

/** What a query shows until it has its data: `pending` (a skeleton), or an ErrorNotice with a retry. */
export function QueryStatus({
  query,
  pending,
  what,
}: {
  query: UseQueryResult<unknown>;
  pending: ReactNode;
  what: string;
}) {
  if (query.isError) return <ErrorNotice error={query.error} what={what} onRetry={() => query.refetch()} />;
  return pending;
}

/** A query's data once it has come; until then its QueryStatus. `what` names the data ("the signals"). */
export function QueryView<T>({
  query,
  pending,
  what,
  children,
}: {
  query: UseQueryResult<T>;
  pending: ReactNode;
  what: string;
  children: (data: T) => ReactNode;
}) {
  if (query.isSuccess) return children(query.data);
  return <QueryStatus query={query} pending={pending} what={what} />;
}
