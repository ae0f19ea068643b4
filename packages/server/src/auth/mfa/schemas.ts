// Request and response schemas of the user's own second factors (/v1/me/mfa).

import { Type } from 'typebox';

export const MfaStatus = Type.Object({
  totp_enabled: Type.Boolean(),
  totp_enabled_at: Type.Union([Type.String(), Type.Null()]),
  recovery_codes_left: Type.Integer({ description: 'unused recovery codes (of 10)' }),
  passkeys: Type.Integer(),
  required_by_tenant: Type.Boolean({ description: "the tenant's require_mfa" }),
});

export const TotpSetup = Type.Object({
  secret: Type.String({ description: 'base32, for typing into an app that cannot scan the QR code' }),
  otpauth_url: Type.String({ description: 'otpauth://totp/… for the QR code' }),
});

export const CodeBody = Type.Object(
  {
    code: Type.String({
      minLength: 1,
      maxLength: 40,
      description: 'a code of the authenticator app (or, to turn it off or renew the codes, a recovery code)',
    }),
  },
  { additionalProperties: false },
);

export const RecoveryCodes = Type.Object({
  recovery_codes: Type.Array(Type.String(), { description: 'ten single-use codes, shown this once' }),
});
