import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { compilePattern, PatternError, requiredLiterals } from './rule-pattern.ts';
import { RuleSet } from './rule-scan.ts';

test('patterns no automaton can run are refused, saying why', () => {
  for (const pattern of ['(a)\\1', '(?<x>a)\\k<x>', '(?=a)b', '(?i:abc)', '(a{1000}){1000}'])
    assert.throws(
      () => compilePattern(pattern),
      (e: Error) => e instanceof PatternError && /linear time/.test(e.message),
      pattern,
    );
  assert.throws(() => compilePattern('a('), PatternError);
  assert.throws(() => compilePattern(''), /empty/);
  assert.throws(() => compilePattern('x*'), /empty line/);
  assert.throws(() => compilePattern('a'.repeat(1001)), /1000/);
});

test('a pattern that backtracking would take exponential time over runs in linear time', () => {
  const { regex } = compilePattern('^(a+)+$');
  const line = `${'a'.repeat(50_000)}!`;
  const started = process.hrtime.bigint();
  assert.equal(regex.test(line), false);
  // Exponential backtracking would never end; this is here to say what the test is about, not to time it.
  assert.ok(process.hrtime.bigint() - started < 60_000_000_000n);
});

test('required literals: the longest run every match holds, per alternative', () => {
  assert.deepEqual(requiredLiterals('dial tcp [0-9.]+:443: i/o timeout'), [':443: i/o timeout']);
  assert.deepEqual(requiredLiterals('connection refused|i/o timeout'), ['connection refused', 'i/o timeout']);
  assert.deepEqual(requiredLiterals('level=ERROR.*disk\\.full'), ['level=ERROR']);
  assert.deepEqual(requiredLiterals('colou?r of'), ['colo']);
  assert.deepEqual(requiredLiterals('abc+d'), ['abc']);
  assert.deepEqual(requiredLiterals('\\x41BCDEF'), undefined);
  assert.deepEqual(requiredLiterals('(foo|bar)baz'), ['baz']);
  assert.equal(requiredLiterals('^\\d+$'), undefined);
  assert.equal(requiredLiterals('ab|c'), undefined);
});

/** Patterns built from literals, classes, groups, alternation and quantifiers. */
const atom: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    'a',
    'b',
    'c',
    'ab',
    'abc',
    'x',
    '\\.',
    '\\d',
    '\\w',
    '.',
    '[ab]',
    '[^a]',
    '\\x61',
    ' ',
    '-',
    '{',
    '\\b',
    '^',
    '$',
  ),
  fc.constantFrom('(a|b)', '(?:abc)', '(ab|c)+', '(a)'),
);
const quantifier = fc.constantFrom('', '', '', '*', '+', '?', '{2}', '{0,2}', '{1,}', '+?');
const alternative = fc
  .array(fc.tuple(atom, quantifier), { minLength: 1, maxLength: 8 })
  .map((parts) => parts.map(([a, q]) => a + q).join(''));
const pattern = fc.array(alternative, { minLength: 1, maxLength: 3 }).map((alts) => alts.join('|'));
const line = fc
  .array(fc.constantFrom('a', 'b', 'c', 'x', '.', '1', ' ', '-', '{', 'A'), { maxLength: 30 })
  .map((cs) => cs.join(''));

test('property: a line the pattern matches always holds one of its required literals', () => {
  fc.assert(
    fc.property(pattern, fc.array(line, { maxLength: 20 }), (p, lines) => {
      let compiled: ReturnType<typeof compilePattern>;
      try {
        compiled = compilePattern(p);
      } catch {
        return true; // refused patterns are not run
      }
      const needles = compiled.needles;
      if (!needles) return true;
      for (const l of lines)
        if (compiled.regex.test(l))
          assert.ok(
            needles.some((n) => l.includes(n)),
            `${p} on ${l}`,
          );
      return true;
    }),
    { numRuns: 3000 },
  );
});

test('property: the scanner counts what matching each line alone counts, however the text is cut', () => {
  fc.assert(
    fc.property(
      fc.constantFrom('abc', 'a.c', 'b+c', '^x', 'a$', '(ab|xc)1', '[0-9]{2}', 'c\\.1'),
      fc.array(line, { maxLength: 40 }),
      fc.boolean(),
      fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 10 }),
      (p, lines, crlf, cuts) => {
        const text = Buffer.from(lines.map((l) => `${l}${crlf ? '\r' : ''}\n`).join(''));
        const rules = new RuleSet([{ id: 'r', member: '*', pattern: p }]);
        const scanner = rules.forMember('agent.log');
        assert.ok(scanner);
        let at = 0;
        for (let i = 0; at < text.length; i++) {
          const n = cuts[i % cuts.length];
          scanner.push(text.subarray(at, at + n));
          at += n;
        }
        scanner.end();
        const regex = new RegExp(p);
        const expected = lines.flatMap((l, i) => (regex.test(l) ? [i + 1] : []));
        const [hit] = rules.hits();
        assert.equal(hit.count, expected.length);
        assert.deepEqual(
          hit.evidence.map((e) => e.line),
          expected.slice(0, 10),
        );
      },
    ),
    { numRuns: 500 },
  );
});

test('a last line without a newline is read, and a line over 64 KiB is matched on its start', () => {
  const rules = new RuleSet([
    { id: 'start', member: 'agent.log', pattern: '^begin' },
    { id: 'tail', member: 'agent.log', pattern: 'tail' },
    { id: 'last', member: 'agent.log', pattern: 'the end' },
    { id: 'other', member: 'system.json', pattern: 'begin' },
  ]);
  const scanner = rules.forMember('agent.log');
  assert.ok(scanner);
  scanner.push(Buffer.from(`begin${'x'.repeat(70 * 1024)}`));
  scanner.push(Buffer.from(`${'y'.repeat(10)}tail\nnext\nthe end`));
  scanner.end();
  const hits = Object.fromEntries(rules.hits().map((h) => [h.id, h]));
  assert.deepEqual(hits.start.evidence, [{ member: 'agent.log', line: 1 }]);
  assert.equal(hits.tail.count, 0); // past the 64 KiB read of line 1
  assert.deepEqual(hits.last.evidence, [{ member: 'agent.log', line: 3 }]);
  assert.deepEqual(hits.last.members, ['agent.log']);
  assert.equal(hits.other.count, 0);
});
