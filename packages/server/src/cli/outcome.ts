// What a command ends with, for main.ts to turn into an exit code (exit-codes.ts): an exit
// name, or, for serve, the promise of one once the service has stopped. Commands never end the
// process themselves.

import type { ServerConfig } from '../config.ts';
import type { ExitName } from '../kernel/exit-codes.ts';

export type Outcome = ExitName | { running: Promise<ExitName> };

/** How a command hands its outcome to main.ts. */
export type Settle = (outcome: Outcome) => void;

/** A command-line mistake: printed with the hint to the command's --help, exit 2. */
export class UsageError extends Error {}

/** One line for the operator; the stack too when the log level asks for detail. */
export function failure(what: string, error: unknown, config: ServerConfig | undefined): ExitName {
  process.stderr.write(`guard-server: ${what}: ${(error as Error)?.message ?? String(error)}\n`);
  if (config && (config.logLevel === 'debug' || config.logLevel === 'trace'))
    process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  return 'failure';
}
