// Passkeys at sign-in (WebAuthn through @simplewebauthn/browser): a password-less sign-in with
// any passkey of this site, and a passkey as the second factor of a password sign-in. The
// server hands out the options (its challenge) and checks the browser's answer; the session is
// then adopted like a password sign-in's.

import {
  type PublicKeyCredentialRequestOptionsJSON,
  startAuthentication,
  WebAuthnError,
} from '@simplewebauthn/browser';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { ApiError, api, unwrap } from '../../../lib/api-client.ts';
import { adoptSignedIn, type Session } from './session.ts';

/** What a person is told when the browser's passkey prompt did not give an answer. */
export function passkeyProblem(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'passkey_not_accepted')
      return 'That passkey was not accepted. Try again, or use another way in.';
    return error.message;
  }
  const name = error instanceof Error ? error.name : '';
  if (name === 'NotAllowedError' || (error instanceof WebAuthnError && error.code === 'ERROR_CEREMONY_ABORTED'))
    return 'No passkey was used: the request was cancelled or timed out.';
  if (error instanceof WebAuthnError && error.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED')
    return 'This passkey is already added to your account.';
  if (error instanceof WebAuthnError && error.code === 'ERROR_INVALID_DOMAIN')
    return 'Passkeys need the console to be opened at its domain name over HTTPS (or at localhost).';
  return error instanceof Error ? error.message : String(error);
}

/** The browser's answer as the API types it (extension results: any JSON object). */
export function answerJson<T extends { clientExtensionResults: object }>(response: T) {
  return { ...response, clientExtensionResults: response.clientExtensionResults as Record<string, unknown> };
}

/** The server's options as the browser library takes them (the server sends WebAuthn's JSON). */
const requestOptions = (options: { challenge: string }) => options as unknown as PublicKeyCredentialRequestOptionsJSON;

/** Runs the second-factor ceremony of a password step (its mfa_token) and returns the session. */
export async function passkeySecondFactor(mfaToken: string): Promise<Session> {
  const { options } = await unwrap(api.POST('/v1/auth/login/mfa/passkey/options', { body: { mfa_token: mfaToken } }));
  const response = answerJson(await startAuthentication({ optionsJSON: requestOptions(options) }));
  return unwrap(api.POST('/v1/auth/login/mfa/passkey', { body: { mfa_token: mfaToken, response } }));
}

/** Signs in with a passkey alone (a discoverable credential, the user verified by the device). */
export function usePasskeySignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationKey: ['sign-in', 'passkey'],
    mutationFn: async () => {
      const { flow_id, options } = await unwrap(api.POST('/v1/auth/passkey/options'));
      const response = answerJson(await startAuthentication({ optionsJSON: requestOptions(options) }));
      return unwrap(api.POST('/v1/auth/passkey', { body: { flow_id, response } }));
    },
    onSuccess: (session) => adoptSignedIn(client, session),
  });
}

/** The second step answered with a passkey (the user holds one): the session opens like a code's. */
export function usePasskeySecondFactor(mfaToken: string) {
  const client = useQueryClient();
  return useMutation({
    mutationKey: ['sign-in-mfa', 'passkey'],
    mutationFn: () => passkeySecondFactor(mfaToken),
    onSuccess: (session) => adoptSignedIn(client, session),
  });
}
