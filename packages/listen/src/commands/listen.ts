// `guard listen --url URL --token gut_… [--forward-to URL] [--events a,b] [--secret whsec_…]`:
// its flags, checked before anything is sent, and the session (listen-session.ts), which runs
// until Ctrl-C (or SIGTERM) and then ends with success.

import { randomUUID } from 'node:crypto';
import { EVENT_TYPES } from '@guard/contract/endpoint-rules';
import { type Command, Option } from 'commander';
import { newSessionSecret, secretProblem } from '../delivery.ts';
import { ListenError } from '../errors.ts';
import { runListen } from '../listen-session.ts';
import { parseForwardUrl } from '../server-api.ts';
import { addServerOptions, type ServerFlags, serverOf } from './server-options.ts';

export interface ListenFlags extends ServerFlags {
  forwardTo?: string;
  events?: string;
  secret?: string;
}

export function addListenCommand(program: Command): void {
  addServerOptions(
    program
      .command('listen')
      .summary("forward the tenant's new events to a local URL, signed as deliveries")
      .description(
        "Receive the tenant's new events on this machine: opens a stream to the server (nothing connects to this " +
          'machine) and POSTs each event to --forward-to as a delivery would, with the same headers, signed with a ' +
          'secret made for this session and printed at start. Prints one line per event: time, event type, id, ' +
          "the local receiver's status, latency. Comes back by itself when the stream drops, resuming where it " +
          'left off. Ctrl-C stops it.',
      ),
  )
    .option('--forward-to <url>', 'POST each event here, e.g. http://localhost:3000/webhook (default: print only)')
    .option('--events <list>', `comma-separated event types to receive, of ${EVENT_TYPES.join(', ')} (default: all)`)
    .addOption(
      new Option('--secret <whsec>', 'sign with this secret instead of a new one (keep one across sessions)').env(
        'GUARD_LISTEN_SECRET',
      ),
    )
    .addHelpText(
      'after',
      `
Examples:
  GUARD_TOKEN=gut_… guard listen --url https://guard.example.com --forward-to http://localhost:3000/webhook
  guard listen --url https://guard.example.com --events signal_created,endpoint.failing --forward-to http://localhost:3000/webhook

Exit codes: 0 stopped (Ctrl-C), 1 error, 2 usage (a flag, URL or event type), 3 token refused (401/403),
4 server unreachable. Once connected, a dropped stream is reconnected, not an exit.`,
    )
    .action((flags: ListenFlags) => listenCommand(flags));
}

export function parseEvents(text: string | undefined): string[] | undefined {
  if (text === undefined) return undefined;
  const named = text
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '');
  const unknown = named.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw new ListenError(
      'usage',
      `--events: unknown event type ${unknown.join(', ')} (known: ${EVENT_TYPES.join(', ')})`,
    );
  if (named.length === 0)
    throw new ListenError('usage', `--events names no event type (known: ${EVENT_TYPES.join(', ')})`);
  return named;
}

export async function listenCommand(flags: ListenFlags): Promise<void> {
  const { base, token } = serverOf(flags);
  const forwardTo = flags.forwardTo === undefined ? undefined : parseForwardUrl(flags.forwardTo);
  const events = parseEvents(flags.events);
  if (flags.secret !== undefined) {
    const problem = secretProblem(flags.secret);
    if (problem) throw new ListenError('usage', `--secret: ${problem}`);
  }
  const secret = flags.secret ?? newSessionSecret();
  // Ctrl-C and SIGTERM end the session; it then returns and the process exits 0.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  try {
    await runListen(
      { base, token, forwardTo, events, secret, signal: stop.signal },
      {
        out: (line) => process.stdout.write(`${line}\n`),
        err: (line) => process.stderr.write(`${line}\n`),
        now: () => new Date(),
        newDeliveryId: randomUUID,
        random: Math.random,
      },
    );
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
