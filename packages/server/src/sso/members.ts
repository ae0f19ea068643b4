// Who a single sign-on makes of the person the identity provider vouched for, the same for
// OpenID Connect and SAML (DESIGN §6): the tenant's user of that email, or a new member
// created just in time; with an admin group configured and the provider sending groups, the
// role follows the provider at every sign-in (admin in the group, member outside it), except
// that the tenant's last admin is never demoted (the tenant would have no admin left). A
// deactivated user (SCIM) is refused. Each creation and role change is audited, its actor the
// connection (`sso:oidc` / `sso:saml`, role `sso`).

import { type AuditActor, audit } from '../audit/index.ts';
import { NO_PASSWORD, newId, normaliseEmail } from '../auth/index.ts';
import type { Db, Role, SsoProtocol } from '../db/index.ts';
import { ApiError, isUniqueViolation } from '../kernel/errors.ts';
import { activeAdmins, lockTenant } from '../users/index.ts';

/** What the provider vouched for. */
export interface SsoIdentity {
  /** A verified email of one of the connection's domains (the caller checked both). */
  email: string;
  /** The provider's groups, when it sent them (undefined: the role is left as it is). */
  groups?: readonly string[];
}

export interface SsoMember {
  id: string;
  email: string;
  role: Role;
  tenant_id: string;
  /** True when this sign-in created the user. */
  created: boolean;
}

export const userDeactivated = () =>
  new ApiError(403, 'user_deactivated', 'this user was deactivated by the tenant: ask its admins');

/** The user the sign-in is for, created or promoted or demoted as the provider says. */
export async function ssoMember(
  deps: { db: Db; now: () => Date },
  connection: { tenantId: string; protocol: SsoProtocol; adminGroup: string | null },
  identity: SsoIdentity,
): Promise<SsoMember> {
  const email = normaliseEmail(identity.email);
  const actor: AuditActor = { userId: `sso:${connection.protocol}`, role: 'sso' };
  const wanted =
    connection.adminGroup !== null && identity.groups !== undefined
      ? identity.groups.includes(connection.adminGroup)
        ? 'admin'
        : 'member'
      : undefined;
  for (let attempt = 0; ; attempt++) {
    try {
      return await deps.db.transaction().execute(async (trx) => {
        await lockTenant(trx, connection.tenantId);
        const now = deps.now();
        const user = await trx
          .selectFrom('users')
          .select(['id', 'email', 'role', 'deactivated_at'])
          .where('tenant_id', '=', connection.tenantId)
          .where('email', '=', email)
          .executeTakeFirst();
        if (user?.deactivated_at != null) throw userDeactivated();
        if (!user) {
          const row = {
            id: newId('u'),
            tenant_id: connection.tenantId,
            email,
            role: wanted ?? 'member',
            password_hash: NO_PASSWORD,
            created_at: now.toISOString(),
            last_login_at: null,
          } as const;
          await trx.insertInto('users').values(row).execute();
          await audit({ db: trx, now: () => now }, actor, 'user.create', row.id, connection.tenantId);
          return { id: row.id, email, role: row.role, tenant_id: connection.tenantId, created: true };
        }
        let role = user.role;
        if (wanted !== undefined && wanted !== role && role !== 'support') {
          if (wanted === 'admin' || (await activeAdmins(trx, connection.tenantId)) > 1) {
            await trx.updateTable('users').set({ role: wanted }).where('id', '=', user.id).execute();
            await audit({ db: trx, now: () => now }, actor, 'user.role', user.id, connection.tenantId);
            role = wanted;
          }
        }
        return { id: user.id, email: user.email, role, tenant_id: connection.tenantId, created: false };
      });
    } catch (error) {
      // Two first sign-ins of one new user at once: the second finds the first's row.
      if (attempt === 0 && isUniqueViolation(error)) continue;
      throw error;
    }
  }
}
