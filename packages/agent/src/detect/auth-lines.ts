// What a line of the host's authentication log says (DESIGN §3, contract — detection): the
// sudo, sshd and useradd lines the detectors turn into signals. Pure: a line in, an event or
// nothing out. Every pattern is anchored and free of nested repetition, and a line is cut to
// MAX_LINE_CHARS first, so a hostile line costs time linear in its (bounded) length.
//
// Syslog lines come in two header forms (rsyslog's traditional `Nov 27 10:00:00 host prog[pid]: msg`
// and Debian 12's RFC 3339 `2026-11-27T10:00:00.123456+00:00 host prog[pid]: msg`); the
// journal gives the program and message apart (parseAuthMessage).

export const MAX_LINE_CHARS = 8192;

export type AuthEvent =
  | { kind: 'sudo'; user: string; tty: string; pwd: string; runAs: string; command: string; shell: boolean }
  | { kind: 'ssh_failed'; user: string; invalidUser: boolean; method: string; address: string; port: string }
  | { kind: 'ssh_accepted'; user: string; method: string; address: string; port: string }
  | { kind: 'user_created'; user: string; uid: string; home: string; shell: string };

/** sudo's shells: a command that is one of these is an interactive root shell (severity 4). */
const SHELLS = new Set(['sh', 'bash', 'dash', 'zsh', 'su']);

const TRADITIONAL = /^[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} (\S+) ([^\s:[]+)(?:\[\d+\])?: ?(.*)$/s;
const RFC3339 =
  /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2}) (\S+) ([^\s:[]+)(?:\[\d+\])?: ?(.*)$/s;

/** Words that mark a line worth parsing; everything else is skipped on a byte search. */
export const AUTH_HINTS = ['sudo', 'sshd', 'useradd'] as const;

/** A syslog line of the auth log: its program and message, or undefined when it is not one. */
export function splitSyslogLine(line: string): { program: string; message: string } | undefined {
  const text = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
  const m = TRADITIONAL.exec(text) ?? RFC3339.exec(text);
  return m ? { program: m[2], message: m[3] } : undefined;
}

export function parseAuthLine(line: string): AuthEvent | undefined {
  const parts = splitSyslogLine(line);
  return parts ? parseAuthMessage(parts.program, parts.message) : undefined;
}

/** One program's message (syslog identifier and MESSAGE, as the journal has them). */
export function parseAuthMessage(program: string, message: string): AuthEvent | undefined {
  const text = message.length > MAX_LINE_CHARS ? message.slice(0, MAX_LINE_CHARS) : message;
  if (program === 'sudo') return parseSudo(text);
  if (program === 'sshd' || program.startsWith('sshd-')) return parseSshd(text);
  if (program === 'useradd') return parseUseradd(text);
  return undefined;
}

/** `alice : TTY=pts/0 ; PWD=/home/alice ; USER=root ; COMMAND=/usr/bin/id -u` */
function parseSudo(message: string): AuthEvent | undefined {
  const sep = message.indexOf(' : ');
  if (sep < 0) return undefined;
  const user = message.slice(0, sep).trim();
  if (!/^[^\s:;]{1,64}$/.test(user)) return undefined;
  const fields = new Map<string, string>();
  const segments = message.slice(sep + 3).split(' ; ');
  // A command sudo ran starts with TTY= (failures start with "3 incorrect password attempts").
  if (!segments[0]?.startsWith('TTY=')) return undefined;
  for (const [i, segment] of segments.entries()) {
    const eq = segment.indexOf('=');
    if (eq <= 0) return undefined;
    const key = segment.slice(0, eq);
    // COMMAND is last and may itself contain " ; ": it takes the rest of the line.
    if (key === 'COMMAND') {
      fields.set(
        key,
        segments
          .slice(i)
          .join(' ; ')
          .slice(eq + 1),
      );
      break;
    }
    fields.set(key, segment.slice(eq + 1));
  }
  const tty = fields.get('TTY');
  const pwd = fields.get('PWD');
  const runAs = fields.get('USER');
  const command = fields.get('COMMAND');
  if (tty === undefined || pwd === undefined || runAs === undefined || command === undefined || command === '')
    return undefined;
  const program = command.trim().split(/\s/, 1)[0] ?? '';
  const base = program.slice(program.lastIndexOf('/') + 1);
  return { kind: 'sudo', user, tty, pwd, runAs, command, shell: SHELLS.has(base) };
}

const SSH_FAILED = /^Failed (\S+) for (invalid user )?(\S*) from (\S+) port (\d+)/;
const SSH_ACCEPTED = /^Accepted (\S+) for (\S+) from (\S+) port (\d+)/;

function parseSshd(message: string): AuthEvent | undefined {
  let m = SSH_FAILED.exec(message);
  if (m)
    return {
      kind: 'ssh_failed',
      method: m[1],
      invalidUser: m[2] !== undefined,
      user: m[3],
      address: m[4],
      port: m[5],
    };
  m = SSH_ACCEPTED.exec(message);
  if (m) return { kind: 'ssh_accepted', method: m[1], user: m[2], address: m[3], port: m[4] };
  return undefined;
}

/** `new user: name=eve, UID=1001, GID=1001, home=/home/eve, shell=/bin/bash, from=/dev/pts/0` */
function parseUseradd(message: string): AuthEvent | undefined {
  if (!message.startsWith('new user: ')) return undefined;
  const fields = new Map<string, string>();
  for (const part of message.slice('new user: '.length).split(', ')) {
    const eq = part.indexOf('=');
    if (eq > 0) fields.set(part.slice(0, eq), part.slice(eq + 1));
  }
  const user = fields.get('name');
  if (!user) return undefined;
  return {
    kind: 'user_created',
    user,
    uid: fields.get('UID') ?? '',
    home: fields.get('home') ?? '',
    shell: fields.get('shell') ?? '',
  };
}
