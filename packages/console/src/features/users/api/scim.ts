import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

const SCIM_TOKENS_KEY = ['scim-tokens'] as const;

/** The SCIM base URL and the tenant's live SCIM tokens (never a token itself). */
export function useScimTokens() {
  return useQuery({ queryKey: SCIM_TOKENS_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/scim-tokens')) });
}

export function useCreateScimToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { name: string }) => unwrap(api.POST('/v1/tenant/scim-tokens', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: SCIM_TOKENS_KEY }),
  });
}

export function useRevokeScimToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/tenant/scim-tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: SCIM_TOKENS_KEY }),
  });
}
