// From what a detector saw to the body of POST /v1/signals (DESIGN §3, contract — detection:
// the seven signal types, their severities and identities; the description names the evidence).

import {
  DETECTION_SIGNAL_TYPE_NAMES,
  DETECTION_SIGNAL_TYPES,
  type DetectionSignalType,
} from '@guard/contract/detection';
import type { AuthEvent } from './auth-lines.ts';

/** The seven types (DESIGN §3), from the contract the service checks the policy with. */
export const DETECTION_TYPES = DETECTION_SIGNAL_TYPE_NAMES;
export type DetectionType = DetectionSignalType;

/** Each type's default severity (DESIGN §3; sudo_command_executed is 4 for a shell). */
export const DEFAULT_SEVERITY = Object.fromEntries(
  DETECTION_SIGNAL_TYPES.map((t) => [t.signal_type, t.default_severity]),
) as Record<DetectionType, number>;

/** The body of POST /v1/signals an agent sends (the server fills in the server and its environment). */
export interface SignalBody {
  signal_type: DetectionType;
  severity: number;
  description: string;
  identity_id: string;
  identity_name: string;
  created_at: string;
}

/** Descriptions are bounded by the API (4096); evidence quoted from a log is cut well before. */
const EVIDENCE_MAX = 512;

/** A value from the host, quoted, control characters escaped, cut to a bound. */
export function quote(text: string, max = EVIDENCE_MAX): string {
  const cut = text.length > max ? `${text.slice(0, max)}…` : text;
  return JSON.stringify(cut);
}

/** Resolves a user name to its uid (from /etc/passwd), when the host knows it. */
export type UidOf = (name: string) => number | undefined;

function identity(name: string, uidOf: UidOf): { identity_id: string; identity_name: string } {
  const uid = uidOf(name);
  return { identity_id: uid === undefined ? name.slice(0, 200) : String(uid), identity_name: name.slice(0, 200) };
}

export function authSignal(event: AuthEvent, at: Date, uidOf: UidOf): SignalBody {
  const created_at = at.toISOString();
  switch (event.kind) {
    case 'sudo':
      return {
        signal_type: 'sudo_command_executed',
        severity: event.shell ? 4 : 3,
        description:
          `${event.user} ran ${quote(event.command)} as ${event.runAs} through sudo ` +
          `(tty ${event.tty}, in ${quote(event.pwd, 200)})${event.shell ? ': a shell' : ''}`,
        ...identity(event.user, uidOf),
        created_at,
      };
    case 'ssh_failed':
      return {
        signal_type: 'ssh_login_failed',
        severity: 2,
        description:
          `failed SSH ${event.method} login for ${event.invalidUser ? 'invalid user ' : ''}${quote(event.user, 64)} ` +
          `from ${event.address} port ${event.port}`,
        ...identity(event.user, event.invalidUser ? () => undefined : uidOf),
        created_at,
      };
    case 'ssh_accepted':
      return {
        signal_type: 'ssh_login_succeeded',
        severity: 1,
        description: `SSH ${event.method} login of ${event.user} from ${event.address} port ${event.port}`,
        ...identity(event.user, uidOf),
        created_at,
      };
    case 'user_created':
      return {
        signal_type: 'user_created',
        severity: 3,
        description:
          `user ${event.user} created (UID ${event.uid || '?'}, home ${quote(event.home, 200)}, ` +
          `shell ${quote(event.shell, 200)})`,
        identity_id: event.uid || event.user,
        identity_name: event.user.slice(0, 200),
        created_at,
      };
  }
}

export function bruteforceSignal(
  address: string,
  failures: number,
  windowSeconds: number,
  lastUser: string,
  at: Date,
  uidOf: UidOf,
): SignalBody {
  return {
    signal_type: 'ssh_bruteforce',
    severity: 4,
    description: `${failures} failed SSH logins from ${address} within ${windowSeconds} s (the last for ${quote(lastUser, 64)})`,
    ...identity(lastUser, uidOf),
    created_at: at.toISOString(),
  };
}

export type FileChange = 'modified' | 'created' | 'deleted';

export function fileSignal(
  path: string,
  change: FileChange,
  before: string | null,
  after: string | null,
  owner: { uid: number; name: string } | undefined,
  at: Date,
): SignalBody {
  const short = (h: string | null) => (h ? `${h.slice(0, 12)}…` : 'none');
  const what =
    change === 'modified'
      ? `changed (sha256 ${short(before)} → ${short(after)})`
      : change === 'created'
        ? `appeared (sha256 ${short(after)})`
        : `disappeared (it had sha256 ${short(before)})`;
  return {
    signal_type: 'critical_file_modified',
    severity: 4,
    description: `watched file ${quote(path, 1024)} ${what}`,
    identity_id: owner ? String(owner.uid) : '',
    identity_name: owner?.name ?? '',
    created_at: at.toISOString(),
  };
}

export interface ExecFacts {
  pid: number;
  ppid: number;
  uid: number;
  comm: string;
  filename: string;
  argv: string[];
}

export function execSignal(event: ExecFacts, user: string | undefined, at: Date): SignalBody {
  const args = event.argv.length > 0 ? `: ${quote(event.argv.join(' '))}` : '';
  return {
    signal_type: 'exec_from_writable_dir',
    severity: 4,
    description:
      `${quote(event.filename, 1024)} was executed from a world-writable directory by uid ${event.uid}` +
      `${user ? ` (${user})` : ''}, pid ${event.pid}, parent pid ${event.ppid}, comm ${quote(event.comm, 32)}${args}`,
    identity_id: String(event.uid),
    identity_name: (user ?? String(event.uid)).slice(0, 200),
    created_at: at.toISOString(),
  };
}
