// The audit log: who read or changed what, and when (docs/security.md).

import type { Kysely } from 'kysely';
import { newId } from '../auth/index.ts';
import type { Database } from '../db/index.ts';

export type AuditAction =
  | 'bundle.list'
  | 'bundle.show'
  | 'bundle.download'
  | 'bundle.insights'
  | 'bundle.lines'
  | 'bundle.delete'
  | 'bundle.expire'
  | 'bundle.diff'
  | 'bundle.analyze'
  | 'bundle.analyzers_test'
  | 'analyzers.update'
  | 'bundle_request.create'
  | 'bundle_request.denied'
  | 'bundle_batch.create'
  | 'tenant.settings'
  | 'collection_schedule.update'
  | 'detection.update'
  | 'agent.revoke'
  | 'user.create'
  | 'user.role'
  | 'user.delete'
  | 'user.password_link'
  | 'user.mfa_reset'
  | 'user.update'
  | 'user.deactivate'
  | 'user.reactivate'
  | 'scim_token.create'
  | 'scim_token.revoke'
  | 'scim_group.create'
  | 'scim_group.update'
  | 'scim_group.delete'
  | 'webhook_endpoint.secret_rotate'
  | 'webhook_endpoint.secret_proof'
  | 'webhook_endpoint.secret_rotation_complete'
  | 'signal.erase'
  | 'webhook_endpoint.failing'
  | 'webhook_endpoint.disabled'
  | 'webhook_endpoint.replay'
  | 'webhook_endpoint.replay_cancel'
  | 'saml.update'
  | 'saml.delete'
  | 'sso.update'
  | 'sso.delete'
  | 'audit.export';

/**
 * Who did it: a user (a principal of the auth capability), or a machine acting for the tenant,
 * named by its own id and a role of its own (`sso` for a sign-in that provisioned or changed a
 * user, `scim` for a SCIM token).
 */
export interface AuditActor {
  userId: string;
  role: string;
}

/**
 * Every support read is written here before the data is returned; so is every agent key
 * revocation, every change an admin makes to the tenant's users or settings, and every bundle
 * request (created, or refused because the tenant does not allow support-initiated collection). `db` may be a
 * transaction: the record then stands or falls with the change it records.
 */
export async function audit(
  deps: { db: Kysely<Database>; now: () => Date },
  who: AuditActor,
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
