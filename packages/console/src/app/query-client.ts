// One QueryClient: client errors (4xx) are not retried, and a 401 on any call means the
// session ended, so the session entry is cleared and the sign-in form takes the page's place.

import { MutationCache, QueryCache, QueryClient } from '@tanstack/react-query';
import { SESSION_ENDED_KEY, SESSION_KEY } from '../features/auth/index.ts';
import { ApiError, setCsrfToken } from '../lib/api-client.ts';

export function createQueryClient(): QueryClient {
  const onError = (error: unknown, key?: readonly unknown[]) => {
    if (!(error instanceof ApiError) || error.status !== 401) return;
    if (key && key[0] === SESSION_KEY[0]) return;
    setCsrfToken(undefined);
    client.setQueryData(SESSION_ENDED_KEY, true);
    client.setQueryData(SESSION_KEY, null);
  };
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({ onError: (error, query) => onError(error, query.queryKey) }),
    mutationCache: new MutationCache({
      onError: (error, _v, _c, mutation) => {
        // A failed sign-in is a wrong password, not an ended session.
        if (mutation.options.mutationKey?.[0] !== 'sign-in') onError(error);
      },
    }),
    defaultOptions: {
      queries: {
        staleTime: 10_000,
        retry: (count, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && count < 2,
      },
    },
  });
  return client;
}
