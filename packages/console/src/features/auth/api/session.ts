// The signed-in session: who the user is and the CSRF token every write carries. Held in the
// query cache under SESSION_KEY; null means signed out (the app then shows the sign-in form
// in place, so the URL — a console_url, say — opens once signed in).

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, type paths, setCsrfToken, unwrap } from '../../../lib/api-client.ts';
import { can, type Permission } from '../permissions.ts';

export const SESSION_KEY = ['session'] as const;
/** Set when the server ended the session (a 401 mid-use), so the sign-in form says why. */
export const SESSION_ENDED_KEY = ['session-ended'] as const;

export type Session = paths['/v1/auth/session']['get']['responses'][200]['content']['application/json'];
export type SessionUser = Session['user'];

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

/** The signed-in user; only under the app's signed-in routes, where a session exists. */
export function useUser(): SessionUser {
  const { data } = useSession();
  if (!data) throw new Error('useUser outside a signed-in page');
  return data.user;
}

export function useCan(permission: Permission): boolean {
  const { data } = useSession();
  return can(data?.user.role, permission);
}

export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationKey: ['sign-in'],
    mutationFn: async (body: { email: string; password: string }) =>
      adopt(await unwrap(api.POST('/v1/auth/login', { body }))),
    onSuccess: (session) => {
      client.clear();
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
      client.clear();
      client.setQueryData(SESSION_KEY, null);
    },
  });
}
