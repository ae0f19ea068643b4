// The options every command that talks to the server takes. The token may come from the
// environment instead of the command line, where other users of the machine can read it (ps).

import { type Command, Option } from 'commander';
import { ListenError } from '../errors.ts';
import { parseServerUrl } from '../server-api.ts';

export interface ServerFlags {
  url?: string;
  token?: string;
}

export function addServerOptions(command: Command): Command {
  return command
    .addOption(new Option('--url <url>', 'the Guard server, e.g. https://guard.example.com').env('GUARD_URL'))
    .addOption(
      new Option('--token <token>', 'a user API token (gut_…) of an admin of the tenant; better from GUARD_TOKEN').env(
        'GUARD_TOKEN',
      ),
    );
}

/** The server's base URL and the token, or a usage error naming what is missing. */
export function serverOf(flags: ServerFlags): { base: URL; token: string } {
  if (!flags.url) throw new ListenError('usage', 'give the server with --url (or GUARD_URL)');
  if (!flags.token) throw new ListenError('usage', 'give a user API token with --token (or GUARD_TOKEN)');
  if (!/^[A-Za-z0-9_-]{10,200}$/.test(flags.token))
    throw new ListenError('usage', 'the token is not a Guard API token (gut_ and letters, digits, _ or -)');
  return { base: parseServerUrl(flags.url), token: flags.token };
}
