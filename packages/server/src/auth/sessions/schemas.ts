// Request and response schemas of sign-in, sign-out, the session and set-password links.

import { Type } from 'typebox';
import { NewPassword, SessionUser } from '../schemas.ts';

export const LoginRequest = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    tenant_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description:
          'only when the email and password sign in to several tenants (409 tenant_required lists them); "staff" for the vendor\'s staff account',
      }),
    ),
  },
  { additionalProperties: false },
);

/** 409 tenant_required: the tenants the email and password sign in to. */
export const TenantRequiredBody = Type.Object({
  error: Type.Object({
    code: Type.String(),
    message: Type.String(),
    tenants: Type.Optional(Type.Array(Type.Object({ id: Type.String(), name: Type.String() }))),
  }),
});

export const SessionInfo = Type.Object({
  user: SessionUser,
  csrf_token: Type.String({ description: 'send as X-CSRF-Token with every cookie-authenticated write' }),
  expires_at: Type.String({ description: 'absolute end of the session (no activity extends it)' }),
  idle_expires_at: Type.String({ description: 'the session ends here unless used before (sliding)' }),
  method: Type.Union(
    [
      Type.Literal('password'),
      Type.Literal('totp'),
      Type.Literal('recovery_code'),
      Type.Literal('passkey'),
      Type.Literal('oidc'),
      Type.Literal('saml'),
      Type.Null(),
    ],
    { description: 'how this session was signed in (null: before this was recorded)' },
  ),
  mfa_setup_required: Type.Boolean({
    description:
      'the tenant requires two-step sign-in and this session has no second factor: every request but setting one up (/v1/me/mfa, /v1/me/passkeys) and signing out is refused with 403 mfa_setup_required',
  }),
});

const SecondFactorMethod = Type.Union([Type.Literal('totp'), Type.Literal('recovery_code'), Type.Literal('passkey')]);

export const MfaRequired = Type.Object({
  mfa_required: Type.Literal(true),
  mfa_token: Type.String({
    description: 'send with the second factor to POST /v1/auth/login/mfa; single use, 5 minutes',
  }),
  methods: Type.Array(SecondFactorMethod, { description: 'the second factors this user holds' }),
  expires_at: Type.String(),
});

export const MfaLoginRequest = Type.Object(
  {
    mfa_token: Type.String({ minLength: 1, maxLength: 100 }),
    code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 20, description: 'the 6-digit code of the authenticator app' }),
    ),
    recovery_code: Type.Optional(
      Type.String({ minLength: 1, maxLength: 40, description: 'one of the ten recovery codes (used up)' }),
    ),
  },
  { additionalProperties: false },
);

export const LinkTokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });

export const PasswordLinkInfo = Type.Object({ email: Type.String(), expires_at: Type.String() });

export const SetPasswordRequest = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), password: NewPassword },
  { additionalProperties: false },
);
