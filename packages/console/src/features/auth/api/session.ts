// The signed-in session: who the user is and the CSRF token every write carries. Held in the
// query cache under SESSION_KEY; null means signed out (the app then shows the sign-in form
// in place, so the URL — a console_url, say — opens once signed in).

import { type QueryClient, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, type paths, setCsrfToken, unwrap } from '../../../lib/api-client.ts';

export const SESSION_KEY = ['session'] as const;
/** Set when the server ended the session (a 401 mid-use), so the sign-in form says why. */
export const SESSION_ENDED_KEY = ['session-ended'] as const;

export type Session = paths['/v1/auth/session']['get']['responses'][200]['content']['application/json'];
type LoginAnswer = paths['/v1/auth/login']['post']['responses'][200]['content']['application/json'];
/** The password was right and the user holds a second factor: the sign-in's second step. */
export type MfaChallenge = Extract<LoginAnswer, { mfa_required: true }>;
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

/** Makes a session the console's: every other cached answer was someone else's (or no one's). */
export function useAdoptSession() {
  const client = useQueryClient();
  return (session: Session) => adoptSignedIn(client, session);
}

/** Email and password: a session, or the second step's challenge (no session yet). */
export function useSignIn() {
  const signedIn = useAdoptSession();
  return useMutation({
    mutationKey: ['sign-in'],
    mutationFn: async (body: { email: string; password: string; tenant_id?: string }) =>
      unwrap(api.POST('/v1/auth/login', { body })),
    onSuccess: (answer) => {
      if (!('mfa_required' in answer)) signedIn(answer);
    },
  });
}

/** The second step: the challenge's token with a code of the app or a recovery code. */
export function useCompleteMfa() {
  const signedIn = useAdoptSession();
  return useMutation({
    mutationKey: ['sign-in-mfa'],
    mutationFn: (body: { mfa_token: string; code?: string; recovery_code?: string }) =>
      unwrap(api.POST('/v1/auth/login/mfa', { body })),
    onSuccess: signedIn,
  });
}

/** Asks the server for the session again (after a second factor was set up, say). */
export function useRefreshSession() {
  const client = useQueryClient();
  return () => client.invalidateQueries({ queryKey: SESSION_KEY });
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
