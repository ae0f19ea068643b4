// `guard-server setup --data-dir DIR --json` (DESIGN §6 contract — headless bootstrap):
// creates a tenant and its first admin, and prints once, as one JSON object, everything a
// script needs: tenant_id, admin_email, admin_password, admin_token, enroll_token. The first
// setup of a data dir also creates the vendor's support account (support_* fields).

import { hashPassword, hashSecret, newId, newPassword, newSecret } from './auth/secrets.ts';
import type { Db } from './db/index.ts';
import { createEnrollmentToken } from './enrollment/routes.ts';

export interface SetupResult {
  tenant_id: string;
  tenant_name: string;
  admin_email: string;
  admin_password: string;
  admin_token: string;
  enroll_token: string;
  enroll_token_expires_at: string;
  support_email?: string;
  support_password?: string;
  support_token?: string;
}

export async function runSetup(
  db: Db,
  now: () => Date,
  opts: { tenantName?: string; adminEmail?: string } = {},
): Promise<SetupResult> {
  const at = now().toISOString();
  const tenantId = newId('t');
  const tenantName = opts.tenantName ?? `tenant ${tenantId.slice(2, 8)}`;
  const adminEmail = opts.adminEmail ?? `admin+${tenantId.slice(2, 10).toLowerCase()}@guard.local`;
  const adminPassword = newPassword();
  const adminToken = newSecret('userToken');
  const result: Partial<SetupResult> = {};
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('tenants').values({ id: tenantId, name: tenantName, created_at: at }).execute();
    const adminId = newId('u');
    await trx
      .insertInto('users')
      .values({
        id: adminId,
        tenant_id: tenantId,
        email: adminEmail,
        role: 'admin',
        password_hash: await hashPassword(adminPassword),
        created_at: at,
      })
      .execute();
    await trx
      .insertInto('api_tokens')
      .values({
        id: newId('tok'),
        user_id: adminId,
        token_hash: hashSecret(adminToken),
        name: 'setup',
        created_at: at,
        revoked_at: null,
      })
      .execute();
    const support = await trx.selectFrom('users').select('id').where('role', '=', 'support').executeTakeFirst();
    if (!support) {
      const supportId = newId('u');
      const supportPassword = newPassword();
      const supportToken = newSecret('userToken');
      await trx
        .insertInto('users')
        .values({
          id: supportId,
          tenant_id: null,
          email: 'support@guard.local',
          role: 'support',
          password_hash: await hashPassword(supportPassword),
          created_at: at,
        })
        .execute();
      await trx
        .insertInto('api_tokens')
        .values({
          id: newId('tok'),
          user_id: supportId,
          token_hash: hashSecret(supportToken),
          name: 'setup',
          created_at: at,
          revoked_at: null,
        })
        .execute();
      Object.assign(result, {
        support_email: 'support@guard.local',
        support_password: supportPassword,
        support_token: supportToken,
      });
    }
  });
  const { token, row } = await createEnrollmentToken({ db, now }, tenantId);
  return {
    tenant_id: tenantId,
    tenant_name: tenantName,
    admin_email: adminEmail,
    admin_password: adminPassword,
    admin_token: adminToken,
    enroll_token: token,
    enroll_token_expires_at: row.expires_at,
    ...result,
  };
}
