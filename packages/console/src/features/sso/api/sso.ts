import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

const OIDC_KEY = ['sso', 'oidc'] as const;

export interface OidcConnectionChange {
  issuer: string;
  client_id: string;
  /** Omitted: the stored secret is kept. */
  client_secret?: string;
  email_domains: string[];
  admin_group: string | null;
}

/** The tenant's OpenID Connect connection (never its secret) and the redirect URI to register. */
export function useOidcConnection() {
  return useQuery({ queryKey: OIDC_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/sso')) });
}

export function useSaveOidcConnection() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: OidcConnectionChange) => unwrap(api.PUT('/v1/tenant/sso', { body })),
    onSuccess: (data) => client.setQueryData(OIDC_KEY, data),
  });
}

export function useRemoveOidcConnection() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/tenant/sso')),
    onSuccess: () => client.invalidateQueries({ queryKey: OIDC_KEY }),
  });
}
