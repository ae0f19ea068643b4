// Request and response schemas of passkeys (WebAuthn): the account API and both sign-ins.
// The browser's answers (RegistrationResponseJSON, AuthenticationResponseJSON of WebAuthn L3,
// as @simplewebauthn/browser sends them) are bounded field by field; the library checks them.

import { Type } from 'typebox';

/** A base64url field of an authenticator's answer, at most `max` characters. */
const B64 = (max: number) => Type.String({ minLength: 1, maxLength: max, pattern: '^[A-Za-z0-9_-]*={0,2}$' });

/** A credential id is at most 1023 bytes (WebAuthn L3): 1364 base64url characters. */
const CREDENTIAL_ID_CHARS = 1364;

const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 });

/** Extension results the browser reports (credProps…): small, and not used. */
const ClientExtensionResults = Type.Object({}, { additionalProperties: true, maxProperties: 20 });

const AuthenticatorAttachment = Type.Optional(Type.Union([Type.Literal('platform'), Type.Literal('cross-platform')]));

export const RegistrationResponse = Type.Object(
  {
    id: B64(CREDENTIAL_ID_CHARS),
    rawId: B64(CREDENTIAL_ID_CHARS),
    type: Type.Literal('public-key'),
    response: Type.Object({
      clientDataJSON: B64(4096),
      attestationObject: B64(32_768),
      authenticatorData: Type.Optional(B64(16_384)),
      transports: Type.Optional(Transports),
      publicKeyAlgorithm: Type.Optional(Type.Integer()),
      publicKey: Type.Optional(B64(16_384)),
    }),
    authenticatorAttachment: AuthenticatorAttachment,
    clientExtensionResults: ClientExtensionResults,
  },
  { description: "navigator.credentials.create()'s answer, as JSON (startRegistration of @simplewebauthn/browser)" },
);

export const AuthenticationResponse = Type.Object(
  {
    id: B64(CREDENTIAL_ID_CHARS),
    rawId: B64(CREDENTIAL_ID_CHARS),
    type: Type.Literal('public-key'),
    response: Type.Object({
      clientDataJSON: B64(4096),
      authenticatorData: B64(16_384),
      signature: B64(16_384),
      userHandle: Type.Optional(B64(128)),
    }),
    authenticatorAttachment: AuthenticatorAttachment,
    clientExtensionResults: ClientExtensionResults,
  },
  { description: "navigator.credentials.get()'s answer, as JSON (startAuthentication of @simplewebauthn/browser)" },
);

const FlowId = Type.String({ minLength: 1, maxLength: 100, description: 'from the options request' });
const MfaToken = Type.String({ minLength: 1, maxLength: 200, description: 'from the password step' });
const PasskeyName = Type.String({ minLength: 1, maxLength: 100 });

/** WebAuthn's PublicKeyCredentialCreationOptionsJSON: hand it to startRegistration as it is. */
const CreationOptions = Type.Object(
  { challenge: Type.String() },
  { additionalProperties: true, description: 'PublicKeyCredentialCreationOptionsJSON' },
);

/** WebAuthn's PublicKeyCredentialRequestOptionsJSON: hand it to startAuthentication as it is. */
const RequestOptions = Type.Object(
  { challenge: Type.String() },
  { additionalProperties: true, description: 'PublicKeyCredentialRequestOptionsJSON' },
);

export const RegistrationOptions = Type.Object({ flow_id: FlowId, options: CreationOptions });

export const AddPasskey = Type.Object(
  { flow_id: FlowId, name: PasskeyName, response: RegistrationResponse },
  { additionalProperties: false },
);

export const RenamePasskey = Type.Object({ name: PasskeyName }, { additionalProperties: false });

export const PasskeyIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: CREDENTIAL_ID_CHARS }) });

export const PasskeyView = Type.Object({
  id: Type.String({ description: 'the credential id (base64url)' }),
  name: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
  device_type: Type.Union([Type.Literal('singleDevice'), Type.Literal('multiDevice')], {
    description: 'multiDevice: a synced passkey',
  }),
  backed_up: Type.Boolean(),
});

export const PasskeyList = Type.Object({ passkeys: Type.Array(PasskeyView) });

export const SignInOptions = Type.Object({ flow_id: FlowId, options: RequestOptions });

export const PasskeySignIn = Type.Object(
  { flow_id: FlowId, response: AuthenticationResponse },
  { additionalProperties: false },
);

export const SecondFactorOptionsRequest = Type.Object({ mfa_token: MfaToken }, { additionalProperties: false });

export const SecondFactorOptions = Type.Object({ options: RequestOptions });

export const SecondFactorAnswer = Type.Object(
  { mfa_token: MfaToken, response: AuthenticationResponse },
  { additionalProperties: false },
);
