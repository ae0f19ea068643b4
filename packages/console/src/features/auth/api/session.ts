// The signed-in session: who the user is and the CSRF token every write carries. Held in the
// query cache under SESSION_KEY; null means signed out (the app then shows the sign-in form
// in place, so the URL — a console_url, say — opens once signed in).

import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, type paths, setCsrfToken, unwrap } from '../../../lib/api-client.ts';

export const SESSION_KEY = ['session'] as const;
/** Set when the server ended the session (a 401 mid-use), so the sign-in form says why. */
export const SESSION_ENDED_KEY = ['session-ended'] as const;

export type Session = paths['/v1/auth/session']['get']['responses'][200]['content']['application/json'];
export type SessionUser = Session['user'];

/**
 * Drops every cached answer but the session's own entry: the layout observes that entry, and
 * a query removed from the cache would no longer reach it.
 */
function forgetAllButSession(client: QueryClient): void {
  client.removeQueries({ predicate: (q) => q.queryKey[0] !== SESSION_KEY[0] });
}

function adopt(session: Session): Session {
  setCsrfToken(session.csrf_token);
  return session;
}

async function fetchSession(): Promise<Session | null> {
  try {
    return adopt(await unwrap(api.GET('/v1/auth/session')));
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      setCsrfToken(undefined);
      return null;
    }
    throw error;
  }
}

export function useSession() {
  return useQuery({ queryKey: SESSION_KEY, queryFn: fetchSession, staleTime: Number.POSITIVE_INFINITY, retry: 1 });
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationKey: ['sign-in'],
    mutationFn: async (body: { email: string; password: string; tenant_id?: string }) =>
      adopt(await unwrap(api.POST('/v1/auth/login', { body }))),
    onSuccess: (session) => {
      forgetAllButSession(client);
      client.setQueryData(SESSION_KEY, session);
    },
  });
}

export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/v1/auth/logout')),
    onSettled: () => {
      setCsrfToken(undefined);
      client.setQueryData(SESSION_KEY, null);
      forgetAllButSession(client);
    },
  });
}

/** Takes a session that a sign-in of another kind (a passkey, a second factor) opened. */
export function adoptSignedIn(client: QueryClient, session: Session): void {
  adopt(session);
  forgetAllButSession(client);
  client.setQueryData(SESSION_KEY, session);
}
