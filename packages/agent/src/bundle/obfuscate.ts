// Obfuscation of a bundle (DESIGN §4, contract — bundles, second round): `collect --obfuscate`
// replaces host names, IP addresses, user names and email addresses in every log member and
// system.json with tokens (`host-1`, `ip-1`, `user-1`, `email-1`, …); one Obfuscator serves a
// whole collect, so the same value is the same token in every member. The private map
// (token → original) is written beside the bundle, never inside it; `reveal` puts the
// originals back.
//
// What is found (docs/support-bundle-collect.md, "Obfuscation", says the same with its limits):
//   - IPv4 addresses (four dotted octets 0–255) and IPv6 addresses (a run of hex digits,
//     colons and dots that node:net's isIPv6 accepts); loopback and unspecified addresses
//     (127.0.0.0/8, 0.0.0.0, ::1, ::) identify nothing and are kept;
//   - email addresses: local@domain with a dotted domain;
//   - the host's own names (hostname, its FQDN, the names in /etc/hosts but localhost and
//     the ip6- aliases), in any case, as whole words;
//   - the host's own user names (/etc/passwd entries with uid ≥ 1000 but nobody), as whole
//     words;
//   - values of keys that name a host (`host=`, `hostname=`, `"host": "…"`, …) or a user
//     (`user=`, `username=`, `"user": "…"`, …), and the user of sshd/PAM phrases: `for <user>
//     from`, `for invalid user <user> from`, `Invalid user <user> from`, `for user <user>`,
//     `from user <user>`. `root` and a few placeholders (see KEPT_USERS) are kept.
//
// Text is handled as latin1 strings (one char per byte) as in redact.ts; every pattern is
// ASCII, and a non-ASCII value is stored in the map as the UTF-8 text it was. Each kind is a
// search of its own (one combined regular expression ran at a tenth of the speed): `@`, `=`
// and `":` are found with indexOf and the value is read around them by hand; addresses,
// phrases and the known names are regular expressions that can start only where a run of
// their characters starts (a lookbehind) and are bounded by their longest form. Every search
// is linear in the text.

import { isIP, isIPv6 } from 'node:net';
import { Transform, type TransformCallback } from 'node:stream';
import { OBFUSCATION_KINDS, type ObfuscationKind } from '@guard/contract/bundle';

export { OBFUSCATION_KINDS, type ObfuscationKind };

/** A token as the map holds it and reveal finds it: `<kind>-<n>`, n ≥ 1. */
export const TOKEN_PATTERN = /^(?:host|ip|user|email)-[1-9][0-9]*$/;

/** Host names that identify no host. */
const KEPT_HOSTS: ReadonlySet<string> = new Set([
  'localhost',
  'localhost.localdomain',
  'localdomain',
  'ip6-localhost',
  'ip6-loopback',
  'ip6-localnet',
  'ip6-mcastprefix',
  'ip6-allnodes',
  'ip6-allrouters',
]);
/** User names that identify no person: the superuser and words the patterns catch by mistake. */
export const KEPT_USERS: ReadonlySet<string> = new Set(['root', 'nobody', 'invalid', 'user', 'unknown', 'none']);

/** Keys whose value is a host name or address (slog `key=value`, JSON `"key": "value"`). */
const HOST_KEYS = ['host', 'hostname', 'host_name', 'fqdn', 'nodename', 'node_name', 'server_name', 'remote_host'];
/** Keys whose value is a user name. */
const USER_KEYS = ['user', 'username', 'user_name', 'login', 'account', 'remote_user', 'ruser', 'uname'];

/** The host's own names and users, read by readKnownNames (known-names.ts) or given by tests. */
export interface KnownNames {
  hosts: readonly string[];
  users: readonly string[];
}

export const NO_KNOWN_NAMES: KnownNames = { hosts: [], users: [] };

const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])';
const NAME = 'A-Za-z0-9_.\\-';

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** `web01` → `[wW][eE][bB]01`: a case-insensitive literal inside a case-sensitive pattern. */
function anyCase(s: string): string {
  let out = '';
  for (const c of s) {
    const lower = c.toLowerCase();
    const upper = c.toUpperCase();
    out += lower !== upper ? `[${lower}${upper}]` : escapeRegExp(c);
  }
  return out;
}

/** The patterns of one Obfuscator: separate searches, each with a literal or class V8 finds fast. */
interface Patterns {
  ipv4: RegExp;
  /**
   * Where an IPv6 address may be: `::`, or four colons with groups of hex digits between them
   * (an address without `::` has seven colons, or six before an IPv4 tail); a time of day
   * (`08:12:34`), with two colons, is no hint.
   */
  ipv6Hint: RegExp;
  phrase: RegExp;
  /** The host's own host and user names, as whole words; undefined when there are none. */
  known: RegExp | undefined;
}

function buildPatterns(known: KnownNames): Patterns {
  const byLength = (a: string, b: string) => b.length - a.length;
  const hosts = [...new Set(known.hosts.map((h) => h.toLowerCase()))];
  const names = [
    ...hosts.map((h) => ({ text: h, re: anyCase(h) })),
    ...known.users.map((u) => ({ text: u, re: escapeRegExp(u) })),
  ]
    .sort((a, b) => byLength(a.text, b.text))
    .map((n) => n.re);
  return {
    ipv4: new RegExp(`(?<![A-Za-z0-9.])${OCTET}(?:\\.${OCTET}){3}(?![0-9]|\\.[0-9])`, 'g'),
    ipv6Hint: /::|:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:[0-9A-Fa-f]{1,4}:/g,
    phrase:
      /(?<![A-Za-z0-9_])(?:for (?:invalid user )?(?<a>[A-Za-z_\x80-\xff][A-Za-z0-9._\x80-\xff-]*)(?= from )|(?:for|from|[Ii]nvalid) user (?<b>[A-Za-z_\x80-\xff][A-Za-z0-9._\x80-\xff-]*))/g,
    known: names.length > 0 ? new RegExp(`(?<![${NAME}])(?:${names.join('|')})(?![A-Za-z0-9_\\-])`, 'g') : undefined,
  };
}

const HOST_KEY_SET: ReadonlySet<string> = new Set(HOST_KEYS);
const USER_KEY_SET: ReadonlySet<string> = new Set(USER_KEYS);

/** A set of ASCII chars as a lookup table (char classes tested per char, without a regex). */
function charClass(extra: string, alnum = true): Uint8Array {
  const table = new Uint8Array(256);
  const chars = `${alnum ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789' : ''}${extra}`;
  for (const c of chars) table[c.charCodeAt(0)] = 1;
  return table;
}
function isClass(text: string, i: number, table: Uint8Array): boolean {
  return table[text.charCodeAt(i) & 0xff] === 1 && text.charCodeAt(i) < 256;
}
const HEX_COLON_DOT = charClass('0123456789ABCDEFabcdef:.', false);
const ALNUM = charClass('');
/**
 * A host or user key followed by `=` (slog) or `":` (JSON), starting a key or the last
 * segment of a dotted one (`peer.user=`); a literal alternation V8 scans for quickly.
 */
const KEYED = new RegExp(
  `(?<![A-Za-z0-9_-])(?:${[...HOST_KEYS, ...USER_KEYS].sort((a, b) => b.length - a.length).join('|')})(?==|":)`,
  'g',
);
const EMAIL_LOCAL_CHAR = charClass('._%+-');
const DOMAIN_CHAR = charClass('.-');
const HOST_VALUE_CHAR = charClass('._-');
/** A user name may be UTF-8 (bytes 0x80–0xff in latin1 text); an address or host name may not. */
const USER_VALUE_CHAR = charClass(`._@+%-${String.fromCharCode(...Array.from({ length: 128 }, (_, i) => 128 + i))}`);
/** The longest IPv6 address (45 chars, IPv4 tail included) with a few trailing `:` or `.`. */
const MAX_IPV6_CANDIDATE = 48;
const EMAIL = /^[^@]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+$/;

/** A value found before tokens are given: where, and what it is. */
interface Candidate {
  start: number;
  end: number;
  kind: ObfuscationKind;
}

/** One value found in a text: where, of what kind, and the token that replaces it. */
export interface Found {
  start: number;
  end: number;
  kind: ObfuscationKind;
  token: string;
}

function isKeptIp(address: string): boolean {
  if (address.includes(':')) {
    const a = address.toLowerCase();
    return a === '::' || a === '::1' || /^(?:0{1,4}:){7}0{0,3}1$/.test(a) || /^(?:0{1,4}:){7}0{1,4}$/.test(a);
  }
  return address.startsWith('127.') || address === '0.0.0.0';
}

/**
 * A string that shares no memory with the text it was cut from: V8 makes a slice of 13 chars
 * or more a view of its parent, which would keep a whole 64 KiB piece alive in the map.
 */
function copyString(s: string): string {
  return Buffer.from(s, 'utf8').toString('utf8');
}

/** latin1 (one char per byte) → the text its bytes spell in UTF-8. */
function fromLatin1(s: string): string {
  return /[\x80-\xff]/.test(s) ? Buffer.from(s, 'latin1').toString('utf8') : s;
}

/**
 * The tokens of one collect. `obfuscate` replaces every value found in a text; the map
 * (token → original) grows as new values are seen. Values are compared per kind: host names
 * and email addresses without regard to case, IPv6 addresses as written in lowercase, user
 * names exactly.
 */
export class Obfuscator {
  private readonly patterns: Patterns;
  private readonly knownHosts: ReadonlySet<string>;
  /** Per kind: the value as compared → its token. */
  private readonly tokens: Record<ObfuscationKind, Map<string, string>> = {
    host: new Map(),
    ip: new Map(),
    user: new Map(),
    email: new Map(),
  };
  private readonly originals = new Map<string, string>();
  private readonly counters: Record<ObfuscationKind, number> = { host: 0, ip: 0, user: 0, email: 0 };
  /** Occurrences replaced, all kinds together. */
  replaced = 0;

  constructor(known: KnownNames = NO_KNOWN_NAMES) {
    const users = known.users.filter((u) => u.length > 0 && !KEPT_USERS.has(u));
    const hosts = known.hosts.filter((h) => h.length > 0 && !KEPT_HOSTS.has(h.toLowerCase()) && isIP(h) === 0);
    this.knownHosts = new Set(hosts.map((h) => h.toLowerCase()));
    this.patterns = buildPatterns({ hosts, users });
  }

  /** Distinct values replaced so far (the size of the map). */
  get values(): number {
    return this.originals.size;
  }

  /** The private map, `{token: original}`. */
  map(): Record<string, string> {
    return Object.fromEntries(this.originals);
  }

  /** The token of `value` (latin1) of this kind, a new one when it was not seen before. */
  tokenFor(kind: ObfuscationKind, value: string): string {
    const tokens = this.tokens[kind];
    // IPv4 has no case; the other kinds but user names compare without it.
    const norm = kind === 'user' || (kind === 'ip' && !value.includes(':')) ? value : value.toLowerCase();
    let token = tokens.get(norm);
    if (token === undefined) {
      token = `${kind}-${++this.counters[kind]}`;
      // Copies: a slice of the scanned text would keep the whole text alive as long as the map.
      tokens.set(copyString(norm), token);
      this.originals.set(token, copyString(fromLatin1(value)));
    }
    return token;
  }

  /**
   * Every value in `text` (latin1), in order, none overlapping; tokens are given in that
   * order. Where two finds overlap, the one that starts first wins, and of two that start
   * together the longer (`alice@example.com` is an email, not the user `alice`).
   */
  find(text: string): Found[] {
    const candidates: Candidate[] = [];
    this.findEmails(text, candidates);
    this.findIpv4(text, candidates);
    this.findIpv6(text, candidates);
    this.findKeyed(text, candidates);
    this.findPhrases(text, candidates);
    this.findKnown(text, candidates);
    if (candidates.length === 0) return [];
    candidates.sort((a, b) => a.start - b.start || b.end - a.end);
    const found: Found[] = [];
    let end = 0;
    for (const c of candidates) {
      if (c.start < end) continue;
      const f = c as Found;
      f.token = this.tokenFor(c.kind, text.slice(c.start, c.end));
      found.push(f);
      end = c.end;
    }
    return found;
  }

  /** `text` with every value found replaced by its token. */
  obfuscate(text: string): string {
    const found = this.find(text);
    if (found.length === 0) return text;
    let out = '';
    let copied = 0;
    for (const f of found) {
      out += text.slice(copied, f.start) + f.token;
      copied = f.end;
    }
    this.replaced += found.length;
    return out + text.slice(copied);
  }

  /** local@domain around each `@`: found with indexOf, read outwards by hand. */
  private findEmails(text: string, out: Candidate[]): void {
    for (let at = text.indexOf('@'); at >= 0; at = text.indexOf('@', at + 1)) {
      let start = at;
      while (start > 0 && isClass(text, start - 1, EMAIL_LOCAL_CHAR)) start--;
      let end = at + 1;
      while (end < text.length && isClass(text, end, DOMAIN_CHAR)) end++;
      while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--; // `mail a@b.com.`
      if (start === at || !EMAIL.test(text.slice(start, end))) continue;
      out.push({ start, end, kind: 'email' });
      at = end - 1;
    }
  }

  private findIpv4(text: string, out: Candidate[]): void {
    const re = this.patterns.ipv4;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text))
      if (!isKeptIp(m[0])) out.push({ start: m.index, end: m.index + m[0].length, kind: 'ip' });
  }

  /** Around each `:…:`, the run of hex digits, colons and dots, if isIPv6 takes it. */
  private findIpv6(text: string, out: Candidate[]): void {
    const re = this.patterns.ipv6Hint;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      let start = m.index;
      while (start > 0 && isClass(text, start - 1, HEX_COLON_DOT)) start--;
      let end = m.index + m[0].length;
      while (end < text.length && isClass(text, end, HEX_COLON_DOT)) end++;
      re.lastIndex = end;
      if (start > 0 && isClass(text, start - 1, ALNUM)) continue; // inside a word: `T12:34:56`
      if (end - start > MAX_IPV6_CANDIDATE) continue; // longer than any address and its punctuation
      // A trailing `:` or `.` is punctuation: `from 2001:db8::1: refused`.
      let candidate = text.slice(start, end);
      while (candidate.length > 2 && !isIPv6(candidate) && /[:.]$/.test(candidate)) candidate = candidate.slice(0, -1);
      if (!isIPv6(candidate) || isKeptIp(candidate)) continue;
      out.push({ start, end: start + candidate.length, kind: 'ip' });
    }
  }

  /**
   * Values of host and user keys, found from each `=` (slog) and `":` (JSON) by reading the
   * key back; a dotted key counts by its last segment (`peer.user=`). An address is an `ip`,
   * an email address an `email`.
   */
  private findKeyed(text: string, out: Candidate[]): void {
    const re = KEYED;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const key = m[0];
      const e = m.index + key.length;
      if (text.charCodeAt(e) === 0x3d) {
        this.keyedValue(text, key, e + 1 + (text.charCodeAt(e + 1) === 0x22 ? 1 : 0), false, out);
      } else {
        let start = e + 2; // after `":`
        while (text[start] === ' ' || text[start] === '\t') start++;
        if (text.charCodeAt(start) === 0x22) this.keyedValue(text, key, start + 1, true, out);
      }
    }
  }

  private keyedValue(text: string, key: string, start: number, json: boolean, out: Candidate[]): void {
    const host = HOST_KEY_SET.has(key);
    if (!host && !USER_KEY_SET.has(key)) return;
    const chars = host ? HOST_VALUE_CHAR : USER_VALUE_CHAR;
    let end = start;
    while (end < text.length && isClass(text, end, chars)) end++;
    if (json && text.charCodeAt(end) !== 0x22) return;
    while (end > start && text[end - 1] === '.') end--;
    if (end === start) return;
    const value = text.slice(start, end);
    const kind = host ? hostKind(value) : userKind(value);
    if (kind !== undefined) out.push({ start, end, kind });
  }

  private findPhrases(text: string, out: Candidate[]): void {
    const re = this.patterns.phrase;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const user = (m.groups?.a ?? m.groups?.b) as string;
      const end = m.index + m[0].length; // both alternatives end with the name
      if (!KEPT_USERS.has(user)) out.push({ start: end - user.length, end, kind: 'user' });
    }
  }

  private findKnown(text: string, out: Candidate[]): void {
    const re = this.patterns.known;
    if (re === undefined) return;
    re.lastIndex = 0;
    for (let m = re.exec(text); m !== null; m = re.exec(text)) {
      const kind = this.knownHosts.has(m[0].toLowerCase()) ? 'host' : 'user';
      out.push({ start: m.index, end: m.index + m[0].length, kind });
    }
  }
}

/** What a host key's value is: an address, a name, or nothing to hide (localhost, a number). */
function hostKind(value: string): ObfuscationKind | undefined {
  if (isIP(value) !== 0) return isKeptIp(value) ? undefined : 'ip';
  if (KEPT_HOSTS.has(value.toLowerCase()) || !/[A-Za-z]/.test(value)) return undefined;
  return 'host';
}

/** What a user key's value is: an email address, a user name, or a kept name (root). */
function userKind(value: string): ObfuscationKind | undefined {
  if (value.includes('@')) return EMAIL.test(value) ? 'email' : undefined;
  return KEPT_USERS.has(value) ? undefined : 'user';
}

/** Longest text the stream holds without a newline before it scans it anyway. */
const MAX_CARRY_BYTES = 8 * 1024 * 1024;
/**
 * Text is scanned in pieces of about this size, cut at line ends: a piece's string is small
 * enough for V8's young generation, where it dies cheaply (a 1 MiB chunk's string is an
 * external one, freed only by a full collection), and the searches ran faster over 64 KiB
 * strings than over 1 MiB ones (measured).
 */
const PIECE_BYTES = 64 * 1024;

/**
 * Streaming obfuscation: bytes in, obfuscated bytes out, line by line (no value spans a line),
 * memory bounded by the longest line (RedactStream before it bounds that to MAX_LINE_BYTES).
 */
export class ObfuscateStream extends Transform {
  private carry: Buffer = Buffer.alloc(0);
  private readonly obfuscator: Obfuscator;

  /** `highWaterMark`: bytes buffered on each side before backpressure (default 1 MiB). */
  constructor(obfuscator: Obfuscator, highWaterMark = 1 << 20) {
    super({ highWaterMark });
    this.obfuscator = obfuscator;
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf = chunk;
    if (this.carry.length > 0) {
      // Finish the carried line with the head of this chunk and copy only that line; the rest
      // of the chunk is processed in place (no copy of the whole chunk).
      const nl = buf.indexOf(10);
      if (nl < 0 && this.carry.length + buf.length <= MAX_CARRY_BYTES) {
        this.carry = Buffer.concat([this.carry, buf]);
        done();
        return;
      }
      const head = nl < 0 ? buf.length : nl + 1;
      this.process(Buffer.concat([this.carry, buf.subarray(0, head)]));
      this.carry = Buffer.alloc(0);
      buf = buf.subarray(head);
    }
    const lastNl = buf.lastIndexOf(10);
    if (lastNl < 0 && buf.length <= MAX_CARRY_BYTES) {
      this.carry = Buffer.from(buf);
      done();
      return;
    }
    const end = lastNl < 0 ? buf.length : lastNl + 1;
    this.process(buf.subarray(0, end));
    // Copied, so the carry does not pin the whole chunk it came from.
    this.carry = end < buf.length ? Buffer.from(buf.subarray(end)) : Buffer.alloc(0);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.carry.length > 0) this.process(this.carry);
    this.carry = Buffer.alloc(0);
    done();
  }

  /**
   * Obfuscates whole lines, piece by piece; a piece without a change is passed on uncopied,
   * one with changes is rewritten in place when no token outruns the text it replaces.
   */
  private process(bytes: Buffer): void {
    let from = 0;
    while (from < bytes.length) {
      let end = bytes.length;
      if (end - from > PIECE_BYTES) {
        const nl = bytes.indexOf(10, from + PIECE_BYTES);
        end = nl < 0 ? bytes.length : nl + 1;
      }
      const piece = bytes.subarray(from, end);
      const found = this.obfuscator.find(piece.toString('latin1'));
      this.obfuscator.replaced += found.length;
      this.push(found.length === 0 ? piece : replaceIn(piece, found));
      from = end;
    }
  }
}

/**
 * `piece` (latin1 bytes) with every value found replaced by its token. The tokens are written
 * into `piece` itself when each ends before the end of the value it replaces (the text
 * behind it is not read yet): then no byte of the output is allocated. Otherwise (tokens
 * longer than what they replace, `bob` → `user-1`, early in the piece) into a new buffer.
 * Bytes between values are moved with copyWithin (memmove), tokens (ASCII) written by hand.
 * The caller hands over `piece`: nothing else reads it afterwards.
 */
export function replaceIn(piece: Buffer, found: readonly Found[]): Buffer {
  let size = piece.length;
  let inPlace = true;
  let at = 0;
  let copied = 0;
  for (const f of found) {
    size += f.token.length - (f.end - f.start);
    at += f.start - copied + f.token.length;
    if (at > f.end) inPlace = false;
    copied = f.end;
  }
  const out = inPlace ? piece : Buffer.allocUnsafe(size);
  at = 0;
  copied = 0;
  for (const f of found) {
    if (inPlace) piece.copyWithin(at, copied, f.start);
    else piece.copy(out, at, copied, f.start);
    at += f.start - copied;
    const token = f.token;
    for (let i = 0; i < token.length; i++) out[at + i] = token.charCodeAt(i);
    at += token.length;
    copied = f.end;
  }
  if (inPlace) piece.copyWithin(at, copied);
  else piece.copy(out, at, copied);
  return inPlace ? piece.subarray(0, size) : out;
}
