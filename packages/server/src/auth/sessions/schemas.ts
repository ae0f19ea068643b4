// Request and response schemas of sign-in, sign-out, the session and set-password links.

import { Type } from 'typebox';
import { NewPassword, SessionUser } from '../schemas.ts';

export const LoginRequest = Type.Object(
  {
    email: Type.String({ minLength: 1, maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 256 }),
  },
  { additionalProperties: false },
);

export const SessionInfo = Type.Object({
  user: SessionUser,
  csrf_token: Type.String({ description: 'send as X-CSRF-Token with every cookie-authenticated write' }),
  expires_at: Type.String({ description: 'absolute end of the session (no activity extends it)' }),
  idle_expires_at: Type.String({ description: 'the session ends here unless used before (sliding)' }),
});

export const LinkTokenParams = Type.Object({ token: Type.String({ maxLength: 200 }) });

export const PasswordLinkInfo = Type.Object({ email: Type.String(), expires_at: Type.String() });

export const SetPasswordRequest = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 200 }), password: NewPassword },
  { additionalProperties: false },
);
