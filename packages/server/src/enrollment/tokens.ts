// Enrolment tokens: created by a tenant's admins (or `guard-server setup`), each good for a
// limited number of enrolments until it expires or is revoked.

import { hashSecret, newId, newSecret } from '../auth/index.ts';
import type { Db } from '../db/index.ts';
import { EnrollmentTokensRepository } from './tokens-repository.ts';

export const DEFAULT_ENROLL_TOKEN_TTL_SECONDS = 7 * 24 * 3600;
export const DEFAULT_ENROLL_TOKEN_MAX_USES = 100;

/** Creates an enrolment token for a tenant; used by the API and by `guard-server setup`. */
export async function createEnrollmentToken(
  deps: { db: Db; now: () => Date },
  tenantId: string,
  opts: { expiresInSeconds?: number; maxUses?: number } = {},
) {
  const now = deps.now();
  const token = newSecret('enrollToken');
  const row = {
    id: newId('et'),
    token_hash: hashSecret(token),
    expires_at: new Date(
      now.getTime() + (opts.expiresInSeconds ?? DEFAULT_ENROLL_TOKEN_TTL_SECONDS) * 1000,
    ).toISOString(),
    max_uses: opts.maxUses ?? DEFAULT_ENROLL_TOKEN_MAX_USES,
    uses: 0,
    revoked_at: null,
    created_at: now.toISOString(),
  };
  await new EnrollmentTokensRepository(deps.db).insert(tenantId, row);
  return { token, row };
}
