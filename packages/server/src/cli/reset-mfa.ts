// `guard-server reset-mfa --email EMAIL [--tenant-id ID]`: the last way back in for a user who
// lost every second factor and has no admin to reset them (the tenant's only admin, say). Run
// by the operator of the deployment on a host that holds its database: the same reset as
// DELETE /v1/users/{id}/mfa (TOTP, recovery codes and passkeys removed, sessions and tokens
// ended), audited with the actor `operator:cli`. docs/identity.md, "Recovery".

import { type Command, Option } from 'commander';
import type { ExitName } from '../kernel/exit-codes.ts';
import { describeCommand } from './help.ts';
import { failure, type Settle, UsageError } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addResetMfaCommand(program: Command, settle: Settle): void {
  const command = program
    .command('reset-mfa')
    .summary("remove a user's second factors (the operator's recovery)")
    .usage('reset-mfa --email EMAIL [--tenant-id ID] [--data-dir DIR | --database URL] [--config FILE]')
    .description(
      `Removes every second factor of one user (authenticator app, recovery codes, passkeys) and
ends their sessions and API tokens, for a user who lost them all and has no other admin
who can reset them in the console (Settings > Users > Reset two-step). They then sign in
with their password alone and set a factor up again (at once, if the tenant requires one).
An email that is a user of several tenants needs --tenant-id. The reset is audited.`,
    )
    .addOption(new Option('--email <email>', 'the user whose factors are removed'))
    .addOption(new Option('--tenant-id <id>', 'the tenant, when the email is a user of several'));
  addSettingOptions(command, {
    dataDir: { value: 'dir', what: 'the data directory' },
    database: { value: 'url', what: 'postgres://USER@HOST:PORT/DB instead of SQLite' },
  });
  describeCommand(command, {
    synopsis: 'reset-mfa --email EMAIL [--tenant-id ID] [options]',
    docs: 'docs/identity.md',
  }).action(async (flags: { email?: string; tenantId?: string }) => settle(await runResetMfaCommand(command, flags)));
}

async function runResetMfaCommand(command: Command, flags: { email?: string; tenantId?: string }): Promise<ExitName> {
  if (!flags.email) throw new UsageError('reset-mfa needs --email EMAIL');
  const email = flags.email.trim().toLowerCase();
  const config = serverConfigOf(command);
  try {
    const [{ openDatabase }, { resetMfaByOperator }] = await Promise.all([
      import('../db/index.ts'),
      import('../users/index.ts'),
    ]);
    const db = await openDatabase(config, { migrations: 'none' });
    try {
      const result = await resetMfaByOperator(db, () => new Date(), email, flags.tenantId);
      if (result.kind === 'not_found') {
        process.stderr.write(`guard-server: no user ${email}${flags.tenantId ? ` in tenant ${flags.tenantId}` : ''}\n`);
        return 'usage';
      }
      if (result.kind === 'ambiguous') {
        process.stderr.write(
          `guard-server: ${email} is a user of several tenants: add --tenant-id, one of\n${result.tenants
            .map((t) => `  ${t.id}  ${t.name}\n`)
            .join('')}`,
        );
        return 'usage';
      }
      process.stdout.write(
        `The second factors of ${email} (tenant ${result.tenantId}) were removed; their sessions and API tokens ended.\n` +
          'They sign in with their password and set up two-step sign-in again.\n',
      );
    } finally {
      await db.destroy();
    }
  } catch (error) {
    return failure('reset-mfa failed', error, config);
  }
  return 'ok';
}
