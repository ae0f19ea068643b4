// Request and response schemas of the enrolment-token routes, and the view of a token.
// The agent's exchange (EnrollRequest, EnrollResponse) is a wire contract: @guard/contract.

import { type Static, Type } from 'typebox';
import type { EnrollmentTokenTable } from '../db/index.ts';

export const CreateTokenRequest = Type.Object(
  {
    expires_in_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 365 * 24 * 3600 })),
    max_uses: Type.Optional(Type.Integer({ minimum: 1, maximum: 100000 })),
  },
  { additionalProperties: false },
);
export type CreateTokenRequest = Static<typeof CreateTokenRequest>;

export const TokenView = Type.Object({
  id: Type.String(),
  expires_at: Type.String(),
  max_uses: Type.Integer(),
  uses: Type.Integer(),
  revoked: Type.Boolean(),
  created_at: Type.String(),
});

export const CreatedToken = Type.Object({
  ...TokenView.properties,
  token: Type.String({ description: 'shown once' }),
  enroll_command: Type.String({
    description: 'the command to run on a server, with the token given on its standard input (never in argv)',
    examples: ['guard-agent enroll --url https://guard.example.com --token -'],
  }),
});

export const TokenList = Type.Object({ tokens: Type.Array(TokenView) });

/** What an admin sees of a token: never the token or its hash. */
export function tokenView(row: Omit<EnrollmentTokenTable, 'tenant_id' | 'token_hash'>): Static<typeof TokenView> {
  return {
    id: row.id,
    expires_at: row.expires_at,
    max_uses: row.max_uses,
    uses: row.uses,
    revoked: row.revoked_at !== null,
    created_at: row.created_at,
  };
}
