// `guard-server setup --data-dir DIR --json` (DESIGN §6 contract — headless bootstrap):
// creates a tenant and its first admin, and prints once, as one JSON object, everything a
// script needs: tenant_id, admin_email, admin_password, admin_token, enroll_token. The first
// setup of a data dir also creates the vendor's support account (support_* fields).

import type { Transaction } from 'kysely';
import { hashPassword, hashSecret, newId, newPassword, newSecret } from './auth/index.ts';
import type { Database, Db, Role } from './db/index.ts';
import { createEnrollmentToken } from './enrollment/index.ts';

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
    await createUserWithToken(trx, {
      tenantId,
      email: adminEmail,
      role: 'admin',
      password: adminPassword,
      token: adminToken,
      at,
    });
    const support = await trx.selectFrom('users').select('id').where('role', '=', 'support').executeTakeFirst();
    if (!support) {
      const supportPassword = newPassword();
      const supportToken = newSecret('userToken');
      const email = 'support@guard.local';
      await createUserWithToken(trx, {
        tenantId: null,
        email,
        role: 'support',
        password: supportPassword,
        token: supportToken,
        at,
      });
      Object.assign(result, { support_email: email, support_password: supportPassword, support_token: supportToken });
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

/** A user with a scrypt password and one API token (stored as its SHA-256). */
async function createUserWithToken(
  trx: Transaction<Database>,
  user: { tenantId: string | null; email: string; role: Role; password: string; token: string; at: string },
): Promise<void> {
  const id = newId('u');
  await trx
    .insertInto('users')
    .values({
      id,
      tenant_id: user.tenantId,
      email: user.email,
      role: user.role,
      password_hash: await hashPassword(user.password),
      created_at: user.at,
    })
    .execute();
  await trx
    .insertInto('api_tokens')
    .values({
      id: newId('tok'),
      user_id: id,
      token_hash: hashSecret(user.token),
      name: 'setup',
      created_at: user.at,
      revoked_at: null,
    })
    .execute();
}
