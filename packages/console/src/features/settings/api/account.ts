// The signed-in user's own account: password, two-step sign-in, personal API tokens, sessions.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import type { paths } from '../../../lib/schema.d.ts';

export type NewApiToken = paths['/v1/me/tokens']['post']['requestBody']['content']['application/json'];
export type TokenScope = NonNullable<NewApiToken['scopes']>[number];

export function useChangePassword() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      unwrap(api.POST('/v1/me/password', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: SESSIONS_KEY }),
  });
}

const TOKENS_KEY = ['me', 'tokens'] as const;

export function useApiTokens() {
  return useQuery({ queryKey: TOKENS_KEY, queryFn: () => unwrap(api.GET('/v1/me/tokens')) });
}

export function useCreateApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: NewApiToken) => unwrap(api.POST('/v1/me/tokens', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

export function useRevokeApiToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/me/tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

const SESSIONS_KEY = ['me', 'sessions'] as const;

export function useSessions() {
  return useQuery({ queryKey: SESSIONS_KEY, queryFn: () => unwrap(api.GET('/v1/me/sessions')) });
}

export function useRevokeSession() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/me/sessions/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: SESSIONS_KEY }),
  });
}

const MFA_KEY = ['me', 'mfa'] as const;

export function useMfaStatus() {
  return useQuery({ queryKey: MFA_KEY, queryFn: () => unwrap(api.GET('/v1/me/mfa')) });
}

/** Every change to the factors may change the session's mfa_setup_required too. */
function useMfaChange<Body, Answer>(call: (body: Body) => Promise<Answer>) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: call,
    onSuccess: () => {
      void client.invalidateQueries({ queryKey: MFA_KEY });
    },
  });
}

export const useStartTotp = () => useMfaChange(() => unwrap(api.POST('/v1/me/mfa/totp')));
export const useConfirmTotp = () =>
  useMfaChange((code: string) => unwrap(api.POST('/v1/me/mfa/totp/confirm', { body: { code } })));
export const useDisableTotp = () =>
  useMfaChange((code: string) => unwrap(api.POST('/v1/me/mfa/totp/disable', { body: { code } })));
export const useRenewRecoveryCodes = () =>
  useMfaChange((code: string) => unwrap(api.POST('/v1/me/mfa/recovery-codes', { body: { code } })));
