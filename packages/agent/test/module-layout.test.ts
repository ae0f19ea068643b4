// The agent's module layout (docs/guard-agent.md, "Source layout"), checked on every run:
//  - a folder of src/ is a capability with a narrow index.ts: other folders import that file
//    only (its tests beside it may import inner files); commands/ is the CLI layer, imported
//    only by main.ts;
//  - no cycle between folders (and src/'s own files, each its own unit), nor between files,
//    type imports included (a type circle is a design circle, even though it loads nothing);
//  - the contract is imported by subpath and TypeBox's builders never: '@guard/contract' and
//    'typebox' load TypeBox (~10 MiB of RSS, docs/decisions/0005-contract-schemas.md).

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');

interface Edge {
  from: string; // path relative to src/
  to: string; // a path relative to src/, or a package specifier
  local: boolean;
  typeOnly: boolean;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return e.name.endsWith('.ts') && !e.name.endsWith('.test.ts') ? [path] : [];
  });
}

function importsOf(file: string): Edge[] {
  const text = readFileSync(file, 'utf8');
  const from = relative(SRC, file);
  const edges: Edge[] = [];
  const add = (specifier: string, typeOnly: boolean) => {
    const local = specifier.startsWith('.');
    const to = local ? relative(SRC, resolve(dirname(file), specifier)) : specifier;
    edges.push({ from, to, local, typeOnly });
  };
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s+(type\s+)?[^'";]*?\sfrom\s+'([^']+)'/g))
    add(m[2], m[1] !== undefined);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+'([^']+)'/g)) add(m[1], false);
  for (const m of text.matchAll(/\bimport\(\s*'([^']+)'\s*\)/g)) add(m[1], false);
  return edges;
}

/** The unit a file belongs to: its folder under src/, or the file itself at the top. */
const unitOf = (path: string) => (path.includes('/') ? path.split('/')[0] : path);

/** The cycles of a graph given as edges (each found once, from where the walk met it). */
function cyclesOf(pairs: [string, string][]): string[] {
  const graph = new Map<string, Set<string>>();
  for (const [a, b] of pairs) if (a !== b) graph.set(a, (graph.get(a) ?? new Set()).add(b));
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string, path: string[]) => {
    if (state.get(node) === 'done') return;
    if (state.get(node) === 'open') {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    state.set(node, 'open');
    for (const next of graph.get(node) ?? []) visit(next, [...path, node]);
    state.set(node, 'done');
  };
  for (const node of graph.keys()) visit(node, []);
  return cycles;
}

const edges = sourceFiles(SRC).flatMap(importsOf);
const local = edges.filter((e) => e.local);

describe('agent module layout', () => {
  it('finds the imports it checks', () => {
    assert.ok(local.length > 50, `only ${local.length} local imports found`);
    assert.ok(local.some((e) => e.from === 'main.ts' && e.to === 'commands/enroll.ts'));
  });

  it('imports another folder only through its index.ts', () => {
    const bad = local.filter((e) => {
      const target = unitOf(e.to);
      if (e.to === '../package.json') return false; // the package's own manifest (version.ts)
      if (!e.to.includes('/') || target === unitOf(e.from)) return false;
      if (target === 'commands') return e.from !== 'main.ts';
      return !e.to.endsWith('/index.ts');
    });
    assert.deepEqual(
      bad.map((e) => `${e.from} → ${e.to}`),
      [],
    );
  });

  it('has no cycle between folders, type imports included', () => {
    assert.deepEqual(cyclesOf(local.map((e) => [unitOf(e.from), unitOf(e.to)])), []);
  });

  it('has no cycle between files, type imports included', () => {
    assert.deepEqual(cyclesOf(local.map((e) => [e.from, e.to])), []);
  });

  it('loads the contract by subpath and nothing of TypeBox itself', () => {
    const bad = edges.filter((e) => !e.typeOnly && (e.to === '@guard/contract' || /^typebox(\/|$)/.test(e.to)));
    assert.deepEqual(
      bad.map((e) => `${e.from} → ${e.to}`),
      [],
    );
  });

  it("benchmarks, scripts and the single executable's entry import its folders only through their index.ts", () => {
    const root = resolve(SRC, '../../..');
    const bad: string[] = [];
    for (const dir of ['bench', 'scripts', 'packaging/agent'])
      for (const file of readdirSync(join(root, dir)).filter((n) => n.endsWith('.ts'))) {
        const text = readFileSync(join(root, dir, file), 'utf8');
        for (const m of text.matchAll(/from\s+'[./]*packages\/agent\/src\/([^']+)'/g))
          if (m[1].includes('/') && !m[1].endsWith('/index.ts')) bad.push(`${dir}/${file} → ${m[1]}`);
      }
    assert.deepEqual(bad, []);
  });
});
