// Whether a user principal resolved earlier still holds: for a request that outlives its
// authentication by hours (a listen stream), checked again now and then. The API token (not
// revoked, not expired) or console session it came through must still be live, and its user must still have one of
// `roles` in the same tenant.

import type { Db, Role } from '../db/index.ts';
import type { UserPrincipal } from './principal.ts';

export async function stillAuthorised(
  db: Db,
  principal: UserPrincipal,
  roles: readonly Role[],
  now: Date,
): Promise<boolean> {
  const user = await db
    .selectFrom('users')
    .select(['role', 'tenant_id'])
    .where('id', '=', principal.userId)
    .executeTakeFirst();
  if (!user || user.tenant_id !== principal.tenantId || !roles.includes(user.role)) return false;
  if (principal.tokenId !== undefined) {
    const token = await db
      .selectFrom('api_tokens')
      .select(['revoked_at', 'expires_at'])
      .where('id', '=', principal.tokenId)
      .where('user_id', '=', principal.userId)
      .executeTakeFirst();
    return (
      token !== undefined &&
      token.revoked_at === null &&
      (!token.expires_at || now.getTime() < Date.parse(token.expires_at))
    );
  }
  if (principal.session !== undefined) {
    const session = await db
      .selectFrom('sessions')
      .select(['revoked_at', 'expires_at'])
      .where('id', '=', principal.session.id)
      .executeTakeFirst();
    // Its idle expiry is not judged: the open stream is the session's use.
    return session !== undefined && session.revoked_at === null && now.getTime() < Date.parse(session.expires_at);
  }
  return false;
}
