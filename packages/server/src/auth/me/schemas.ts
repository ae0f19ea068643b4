// Request and response schemas of a user's own sessions, password and API tokens.

import { Type } from 'typebox';
import { NewPassword } from '../schemas.ts';
import { TOKEN_SCOPES } from '../scopes.ts';

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

export const TokenScope = Type.Unsafe<(typeof TOKEN_SCOPES)[number]>(
  Type.String({
    enum: [...TOKEN_SCOPES],
    description: '`read`: every read your role may do; `<area>:read` or `<area>:write` (write implies read)',
  }),
);

/** Days a token may live at most. */
export const MAX_TOKEN_DAYS = 365;

export const CreateToken = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100 }),
    scopes: Type.Optional(
      Type.Array(TokenScope, {
        minItems: 1,
        maxItems: TOKEN_SCOPES.length,
        uniqueItems: true,
        description: 'omitted: full access, everything your role may do',
      }),
    ),
    expires_in_days: Type.Optional(
      Type.Union([Type.Integer({ minimum: 1, maximum: MAX_TOKEN_DAYS }), Type.Null()], {
        description: 'omitted or null: the token never expires',
      }),
    ),
  },
  { additionalProperties: false },
);

export const TokenView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  scopes: Type.Union([Type.Array(TokenScope), Type.Null()], { description: 'null: full access' }),
  expires_at: Type.Union([Type.String(), Type.Null()], { description: 'null: never expires' }),
  last_used_at: Type.Union([Type.String(), Type.Null()], { description: 'written at most once a minute' }),
});

export const CreatedToken = Type.Object({
  ...TokenView.properties,
  token: Type.String({ description: 'gut_…: shown once, never again' }),
});

export const TokenList = Type.Object({ tokens: Type.Array(TokenView) });
