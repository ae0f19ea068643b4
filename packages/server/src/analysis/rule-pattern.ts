// The patterns of analyzer rules (DESIGN §4, "Analyzers as code"): regular expressions that
// run in time linear in the text they read, whatever the pattern and whatever the bundle.
//
// The engine is V8's own non-backtracking one (the `l` flag, an automaton simulation in the
// manner of RE2), switched on for the process by enableLinearRegExp(). It accepts the
// JavaScript syntax without the constructs no automaton can run — backreferences, lookahead
// and lookbehind, inline modifiers, the `u` flag's property escapes — and refuses them when
// the pattern is compiled ("Cannot be executed in linear time"), as it refuses a pattern whose
// automaton would be too large (`(a{1000}){1000}`): that refusal is the API's 400
// invalid_pattern, given before a rule is stored. Worst case: the time to read a line is
// proportional to its length times the pattern's size, both bounded (MAX_LINE_BYTES,
// PATTERN_MAX_CHARS).
//
// The linear engine reads about 15 MB/s here, a tenth of the backtracking one, so it is not
// asked about lines that cannot match: requiredLiterals() finds, from the pattern's text,
// strings one of which every match must contain, and a line is tested only when one of them
// occurs in it (found natively, Buffer.indexOf, as ripgrep and RE2's prefilters do). The
// literals are found conservatively: anything the reading below does not understand only
// ends a literal run, so a pattern it cannot read gets no prefilter (every line is tested),
// never a wrong one.

import { setFlagsFromString } from 'node:v8';

export const PATTERN_MAX_CHARS = 1000;
/** Literals shorter than this would be found on most lines: no prefilter then. */
const MIN_LITERAL_CHARS = 3;

export class PatternError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PatternError';
  }
}

let linearEnabled = false;

/** Turns V8's linear-time engine on for this process (and its threads); idempotent. */
export function enableLinearRegExp(): void {
  if (linearEnabled) return;
  setFlagsFromString('--enable-experimental-regexp-engine');
  try {
    // biome-ignore lint/complexity/useRegexLiterals: the `l` flag cannot be parsed in a literal before the flag is set
    new RegExp('a', 'l');
  } catch {
    throw new Error("this Node.js has no linear-time regular expressions (V8's `l` flag): analyzer rules cannot run");
  }
  linearEnabled = true;
}

export interface CompiledPattern {
  regex: RegExp;
  /** A line can match only if it contains one of these; undefined: every line is tested. */
  needles: string[] | undefined;
}

/** Compiles a rule's pattern for the linear engine, or throws PatternError saying why not. */
export function compilePattern(pattern: string): CompiledPattern {
  enableLinearRegExp();
  if (pattern.length === 0) throw new PatternError('the pattern is empty');
  if (pattern.length > PATTERN_MAX_CHARS)
    throw new PatternError(`the pattern is ${pattern.length} characters, more than ${PATTERN_MAX_CHARS}`);
  let regex: RegExp;
  try {
    regex = new RegExp(pattern, 'l');
  } catch (error) {
    const message = (error as Error).message.replace(/^Invalid regular expression: \/.*\/l: /s, '');
    throw new PatternError(
      /linear time/.test(message)
        ? `${message}: backreferences, lookahead and inline modifiers cannot run in linear time, and deeply nested counted repetitions make too large an automaton`
        : message,
    );
  }
  if (regex.test('')) throw new PatternError('the pattern matches an empty line, so it would match every line');
  return { regex, needles: requiredLiterals(pattern) };
}

/** Escapes that stand for one literal character (the rest: classes, assertions, codes). */
const LITERAL_ESCAPE = /[^A-Za-z0-9]/;

/**
 * Strings of which every match of `pattern` contains at least one, or undefined when none can
 * be told: the longest run of literal characters that every match must hold, per top-level
 * alternative.
 */
export function requiredLiterals(pattern: string): string[] | undefined {
  const alternatives = topLevelAlternatives(pattern);
  if (!alternatives) return undefined;
  const needles: string[] = [];
  for (const alternative of alternatives) {
    const literal = longestRequiredRun(alternative);
    if (literal === undefined || literal.length < MIN_LITERAL_CHARS) return undefined;
    needles.push(literal);
  }
  return [...new Set(needles)];
}

/** The pattern cut at its top-level `|`, or undefined when its brackets do not balance. */
function topLevelAlternatives(pattern: string): string[] | undefined {
  const parts: string[] = [];
  let depth = 0;
  let start = 0;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const end = classEnd(pattern, i);
      if (end === undefined) return undefined;
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')') {
      depth--;
      if (depth < 0) return undefined;
    } else if (c === '|' && depth === 0) {
      parts.push(pattern.slice(start, i));
      start = i + 1;
    }
  }
  if (depth !== 0) return undefined;
  parts.push(pattern.slice(start));
  return parts;
}

/** The index of the `]` closing the class opened at `open`. */
function classEnd(pattern: string, open: number): number | undefined {
  let i = open + 1;
  if (pattern[i] === '^') i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === '\\') i++;
    else if (pattern[i] === ']') return i;
  }
  return undefined;
}

/** The index just past the group opened at `open`. */
function groupEnd(pattern: string, open: number): number | undefined {
  let depth = 0;
  for (let i = open; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (c === '[') {
      const end = classEnd(pattern, i);
      if (end === undefined) return undefined;
      i = end;
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return undefined;
}

const BOUNDED = /^\{(\d+)(,(\d*))?\}/;

/** What follows an atom: whether the atom may be absent, and whether it may repeat. */
function quantifierAt(pattern: string, at: number): { length: number; optional: boolean; repeats: boolean } {
  const c = pattern[at];
  let length = 0;
  let optional = false;
  let repeats = false;
  if (c === '*' || c === '?' || c === '+') {
    length = 1;
    optional = c !== '+';
    repeats = c !== '?';
  } else if (c === '{') {
    const m = BOUNDED.exec(pattern.slice(at));
    if (m) {
      length = m[0].length;
      optional = Number(m[1]) === 0;
      repeats = m[2] !== undefined || Number(m[1]) > 1;
    }
  }
  if (length > 0 && pattern[at + length] === '?') length++; // lazy
  return { length, optional, repeats };
}

/** The longest run of literal characters that every match of this alternative holds in order. */
function longestRequiredRun(alternative: string): string | undefined {
  let best = '';
  let run = '';
  const cut = () => {
    if (run.length > best.length) best = run;
    run = '';
  };
  let i = 0;
  while (i < alternative.length) {
    const c = alternative[i];
    let literal: string | undefined;
    let next: number;
    if (c === '\\') {
      const e = alternative[i + 1];
      if (e === undefined) return undefined;
      literal = LITERAL_ESCAPE.test(e) ? e : undefined;
      next = i + 2;
      // \xhh, \uhhhh, \cX and octal or back references run on: skip what may belong to them
      if (literal === undefined)
        while (next < alternative.length && /[0-9A-Za-z]/.test(alternative[next]) && 'xuc0123456789'.includes(e))
          next++;
    } else if (c === '[') {
      const end = classEnd(alternative, i);
      if (end === undefined) return undefined;
      next = end + 1;
    } else if (c === '(') {
      const end = groupEnd(alternative, i);
      if (end === undefined) return undefined;
      next = end;
    } else if (c === '.' || c === '^' || c === '$' || c === ')' || c === ']' || c === '*' || c === '+' || c === '?') {
      next = i + 1;
    } else if (c === '{' && BOUNDED.test(alternative.slice(i))) {
      return undefined; // a quantifier with nothing to repeat: not a pattern this reads
    } else {
      literal = c;
      next = i + 1;
    }
    const q = quantifierAt(alternative, next);
    next += q.length;
    if (literal !== undefined && !q.optional) {
      run += literal;
      if (q.repeats) cut();
    } else cut();
    i = next;
  }
  cut();
  return best;
}
