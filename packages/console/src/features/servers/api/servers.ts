import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

export function useServers() {
  return useQuery({ queryKey: ['servers'], queryFn: () => unwrap(api.GET('/v1/servers')) });
}

const TOKENS_KEY = ['enrollment-tokens'] as const;

export function useEnrollmentTokens(enabled: boolean) {
  return useQuery({ queryKey: TOKENS_KEY, queryFn: () => unwrap(api.GET('/v1/enrollment-tokens')), enabled });
}

export function useCreateEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { expires_in_seconds: number; max_uses: number }) =>
      unwrap(api.POST('/v1/enrollment-tokens', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

export function useRevokeEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/enrollment-tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}
