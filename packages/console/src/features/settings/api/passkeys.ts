// The signed-in user's passkeys: list, add (the browser makes the credential with the server's
// registration options), rename, remove.

import { type PublicKeyCredentialCreationOptionsJSON, startRegistration } from '@simplewebauthn/browser';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import { answerJson } from '../../auth/index.ts';

const PASSKEYS_KEY = ['me', 'passkeys'] as const;

export function usePasskeys() {
  return useQuery({ queryKey: PASSKEYS_KEY, queryFn: () => unwrap(api.GET('/v1/me/passkeys')) });
}

export function useAddPasskey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (name: string) => {
      const { flow_id, options } = await unwrap(api.POST('/v1/me/passkeys/options'));
      const optionsJSON = options as unknown as PublicKeyCredentialCreationOptionsJSON;
      const response = answerJson(await startRegistration({ optionsJSON }));
      return unwrap(api.POST('/v1/me/passkeys', { body: { flow_id, name, response } }));
    },
    onSettled: () => client.invalidateQueries({ queryKey: PASSKEYS_KEY }),
  });
}

export function useRenamePasskey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, name }: { id: string; name: string }) =>
      unwrap(api.PATCH('/v1/me/passkeys/{id}', { params: { path: { id } }, body: { name } })),
    onSuccess: () => client.invalidateQueries({ queryKey: PASSKEYS_KEY }),
  });
}

export function useRemovePasskey() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/me/passkeys/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: PASSKEYS_KEY }),
  });
}
