import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

const USERS_KEY = ['users'] as const;
export type UserRole = 'admin' | 'member';

export function useUsers() {
  return useQuery({ queryKey: USERS_KEY, queryFn: () => unwrap(api.GET('/v1/users')) });
}

export function useAddUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { email: string; role: UserRole }) => unwrap(api.POST('/v1/users', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
}

export function useChangeRole() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, role }: { id: string; role: UserRole }) =>
      unwrap(api.PATCH('/v1/users/{id}', { params: { path: { id } }, body: { role } })),
    onSettled: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
}

export function useRemoveUser() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/users/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
}

export function useNewPasswordLink() {
  return useMutation({
    mutationFn: (id: string) => unwrap(api.POST('/v1/users/{id}/password-link', { params: { path: { id } } })),
  });
}

/** Removes a user's second factors (they lost their phone): their sessions and tokens end too. */
export function useResetMfa() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/users/{id}/mfa', { params: { path: { id } } })),
    onSettled: () => client.invalidateQueries({ queryKey: USERS_KEY }),
  });
}

// The tenant's settings (the same query and key the retention page reads).
const SETTINGS_KEY = ['tenant-settings'] as const;

export function useTenantSettings() {
  return useQuery({ queryKey: SETTINGS_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/settings')) });
}

export function useSignInPolicy() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { require_mfa?: boolean; sso_only?: boolean }) =>
      unwrap(api.PATCH('/v1/tenant/settings', { body })),
    onSuccess: (data) => client.setQueryData(SETTINGS_KEY, data),
  });
}
