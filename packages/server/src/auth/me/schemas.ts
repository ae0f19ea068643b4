// Request and response schemas of a user's own sessions, password and API tokens.

import { Type } from 'typebox';
import { NewPassword } from '../schemas.ts';

export const SessionView = Type.Object({
  id: Type.String(),
  created_at: Type.String(),
  last_seen_at: Type.String({ description: 'written at most once a minute' }),
  idle_expires_at: Type.String(),
  expires_at: Type.String(),
  ip: Type.String(),
  user_agent: Type.String(),
  current: Type.Boolean({ description: 'the session this request came through' }),
});

export const SessionList = Type.Object({ sessions: Type.Array(SessionView) });

export const ChangePassword = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 256 }), new_password: NewPassword },
  { additionalProperties: false },
);

export const CreateToken = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 100 }) },
  { additionalProperties: false },
);

export const TokenView = Type.Object({ id: Type.String(), name: Type.String(), created_at: Type.String() });

export const CreatedToken = Type.Object({
  ...TokenView.properties,
  token: Type.String({ description: 'gut_…: shown once, never again' }),
});

export const TokenList = Type.Object({ tokens: Type.Array(TokenView) });
