// The operator's `redaction.extra_keys` (DESIGN §3, contract — redaction), compiled: what the
// redactor (bundle/redact.ts) masks on top of the contract's pattern. Apart from the redactor
// so that loading the config checks the entries with the very code collect compiles them with,
// without loading the bundle code (config.ts sits below bundle/).

/** At most this many `redaction.extra_keys` entries, each at most MAX_EXTRA_KEY_CHARS long. */
export const MAX_EXTRA_KEYS = 64;
export const MAX_EXTRA_KEY_CHARS = 128;

/** A plain extra key name: the characters of a slog key. Anything else must be a pattern. */
const KEY_NAME = /^[A-Za-z0-9_.-]+$/;

const RULES = Symbol('KeyRules');

export interface CompiledKeyRules {
  /** Plain names, lowercased: matched case-insensitively. */
  names: ReadonlySet<string>;
  /** Whole-key patterns, `^(?:...)$`, matched as written (case-sensitively). */
  patterns: readonly RegExp[];
}

/** Keys masked on top of the contract's pattern; build with compileExtraKeys. Opaque. */
export type KeyRules = { readonly [RULES]: CompiledKeyRules };

export const NO_EXTRA_KEYS: KeyRules = { [RULES]: { names: new Set(), patterns: [] } };

/**
 * Compiles the operator's `redaction.extra_keys`: each entry is either a key name (letters,
 * digits, `_`, `-`, `.`), matched case-insensitively, or a pattern anchored at both ends
 * (`^...$`), matched case-sensitively against the whole key (write `(?i:...)` inside it to
 * ignore case). Like the contract's pattern, a rule matches the whole key or its last dotted
 * segment. An entry that is neither (empty, unanchored with other characters such as `*`,
 * an invalid regular expression, too long), or a list that is too long, throws an Error
 * naming the entry.
 */
export function compileExtraKeys(list: readonly string[]): KeyRules {
  if (!Array.isArray(list)) throw new Error('redaction.extra_keys must be a list of key names or ^...$ patterns');
  if (list.length > MAX_EXTRA_KEYS)
    throw new Error(`redaction.extra_keys has ${list.length} entries; at most ${MAX_EXTRA_KEYS} are allowed`);
  const names = new Set<string>();
  const patterns: RegExp[] = [];
  for (const [i, entry] of list.entries()) {
    const fail = (why: string): never => {
      const shown =
        typeof entry === 'string' ? ` ${JSON.stringify(entry.length > 60 ? `${entry.slice(0, 60)}…` : entry)}` : '';
      throw new Error(`redaction.extra_keys[${i}]${shown}: ${why}`);
    };
    if (typeof entry !== 'string') fail('must be a string');
    if (entry.trim() === '') fail('is empty');
    if (entry.length > MAX_EXTRA_KEY_CHARS)
      fail(`is ${entry.length} characters long; at most ${MAX_EXTRA_KEY_CHARS} are allowed`);
    if (entry.startsWith('^')) {
      if (!endsWithAnchor(entry)) fail('a pattern must be anchored at both ends: ^...$');
      const body = entry.slice(1, -1);
      if (body === '') fail('the pattern ^$ matches only an empty key');
      try {
        // Compiled alone first: `^a)|(b$` must not turn into a valid but unanchored `^(?:a)|(b)$`.
        new RegExp(body);
      } catch (error) {
        fail(`not a valid regular expression (${(error as Error).message})`);
      }
      patterns.push(new RegExp(`^(?:${body})$`));
    } else if (KEY_NAME.test(entry)) {
      names.add(entry.toLowerCase());
    } else {
      fail('neither a key name (letters, digits, "_", "-", ".") nor a pattern anchored as ^...$');
    }
  }
  return { [RULES]: { names, patterns } };
}

/** Whether `entry` ends with a `$` that no backslash escapes. */
function endsWithAnchor(entry: string): boolean {
  if (entry.length < 2 || !entry.endsWith('$')) return false;
  let backslashes = 0;
  for (let i = entry.length - 2; i >= 0 && entry[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 0;
}

/** The names and patterns of compiled rules (for the redactor). */
export function rulesOf(rules: KeyRules): CompiledKeyRules {
  return rules[RULES];
}
