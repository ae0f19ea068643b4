// One-time set-password links (<public_url>/console/set-password#<token>): the token stays in
// the URL fragment, so it never reaches a server log or a Referer.

import { useMutation, useQuery } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

export function usePasswordLink(token: string) {
  return useQuery({
    queryKey: ['password-link', token],
    queryFn: () => unwrap(api.GET('/v1/auth/password-links/{token}', { params: { path: { token } } })),
    enabled: token !== '',
    retry: false,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useSetPassword() {
  return useMutation({
    mutationFn: (body: { token: string; password: string }) => unwrap(api.POST('/v1/auth/set-password', { body })),
  });
}
