// `guard trigger signal_created --url URL --token gut_…`: makes a test signal_created event of
// the tenant that its listen streams receive (no endpoint does), and prints its id.

import { type Command, InvalidArgumentError } from 'commander';
import { ListenError } from '../errors.ts';
import { triggerEvent } from '../server-api.ts';
import { addServerOptions, type ServerFlags, serverOf } from './server-options.ts';

/** The events `guard trigger` can make. */
export const TRIGGERABLE = ['signal_created'] as const;

export interface TriggerFlags extends ServerFlags {
  signalType?: string;
  severity?: number;
  description?: string;
}

function severity(text: string): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 5) throw new InvalidArgumentError('a severity is an integer from 1 to 5');
  return n;
}

export function addTriggerCommand(program: Command): void {
  addServerOptions(
    program
      .command('trigger')
      .summary('make a test event for guard listen (signal_created)')
      .description(
        'Make a test event of the tenant for `guard listen`: a signal_created event with signal_type test_event ' +
          '(unless --signal-type says otherwise). Listen streams receive it; no webhook endpoint does, and no ' +
          'signal list shows it. Prints "triggered <event> <id>".',
      )
      .argument('<event>', `the event to make: ${TRIGGERABLE.join(', ')}`),
  )
    .option('--signal-type <type>', 'the signal_type of the test signal (default test_event)')
    .option('--severity <n>', 'its severity, 1 to 5 (default 1)', severity)
    .option('--description <text>', 'its description')
    .action((event: string, flags: TriggerFlags) => triggerCommand(event, flags));
}

export async function triggerCommand(event: string, flags: TriggerFlags): Promise<void> {
  if (!(TRIGGERABLE as readonly string[]).includes(event))
    throw new ListenError(
      'usage',
      `cannot trigger ${JSON.stringify(event)}: guard trigger makes ${TRIGGERABLE.join(', ')}`,
    );
  const { base, token } = serverOf(flags);
  const made = await triggerEvent({
    base,
    token,
    body: {
      event_type: event,
      ...(flags.signalType !== undefined ? { signal_type: flags.signalType } : {}),
      ...(flags.severity !== undefined ? { severity: flags.severity } : {}),
      ...(flags.description !== undefined ? { description: flags.description } : {}),
    },
  });
  process.stdout.write(`triggered ${made.event_type} ${made.signal_id}\n`);
}
