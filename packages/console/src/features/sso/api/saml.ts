import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import type { paths } from '../../../lib/schema.d.ts';

export type SamlView = paths['/v1/tenant/saml']['get']['responses'][200]['content']['application/json'];
export type SamlConnectionChange = paths['/v1/tenant/saml']['put']['requestBody']['content']['application/json'];

const SAML_KEY = ['tenant-saml'] as const;

/** The tenant's SAML connection (null until configured) and the SP facts to give the IdP. */
export function useSamlConnection() {
  return useQuery({ queryKey: SAML_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/saml')) });
}

export function useSaveSaml() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: SamlConnectionChange) => unwrap(api.PUT('/v1/tenant/saml', { body })),
    onSuccess: (data) => client.setQueryData(SAML_KEY, data),
  });
}

export function useRemoveSaml() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/tenant/saml')),
    onSuccess: () => client.invalidateQueries({ queryKey: SAML_KEY }),
  });
}
