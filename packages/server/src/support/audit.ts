import { newId, type UserPrincipal } from '../auth/index.ts';
import type { AppDeps } from '../deps.ts';

export type AuditAction = 'bundle.list' | 'bundle.show' | 'bundle.download' | 'agent.revoke';

/** Every support read is written here before the data is returned; so is every agent key revocation. */
export async function audit(
  deps: Pick<AppDeps, 'db' | 'now'>,
  who: UserPrincipal,
  action: AuditAction,
  target: string,
  tenantId: string | null,
): Promise<void> {
  await deps.db
    .insertInto('audit_log')
    .values({
      id: newId('au'),
      at: deps.now().toISOString(),
      actor_id: who.userId,
      actor_role: who.role,
      tenant_id: tenantId,
      action,
      target,
    })
    .execute();
}
