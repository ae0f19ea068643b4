// The server's layout rules (STYLE.md, convention 1): each capability folder of src/ has a
// narrow index.ts, and code outside a folder imports only that index; the capability folders
// import each other without a cycle. Files inside a folder, and the integration tests here in
// test/, may import any inner file. Imports are read from the source text: every static
// `import … from`, `export … from` and `import()` with a relative path.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(SERVER_DIR, 'src');
const REPO = resolve(SERVER_DIR, '..', '..');

/** Every folder of src/ is a capability; src/'s own files are the shell that wires them. */
const capabilities = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isDirectory());

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : tsFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** Absolute paths of the relative imports of a file. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)]
    .map((m) => m[1] ?? m[2])
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => resolve(dirname(file), spec));
}

/** The capability folder a path of src/ lies in, or undefined for src/'s own files and paths outside src/. */
function capabilityOf(path: string): string | undefined {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return undefined;
  const [first, ...rest] = rel.split(sep);
  return rest.length > 0 && capabilities.includes(first) ? first : undefined;
}

/** The imports of `file` that reach into another capability past its index.ts. */
function innerImportsOf(file: string, targets: string[]): string[] {
  const own = capabilityOf(file);
  return targets.flatMap((target) => {
    const capability = capabilityOf(target);
    if (capability === undefined || capability === own || target === join(SRC, capability, 'index.ts')) return [];
    return [`${relative(REPO, file)} imports ${relative(REPO, target)} (use src/${capability}/index.ts)`];
  });
}

const innerImports = (files: string[]) => files.flatMap((file) => innerImportsOf(file, importsOf(file)));

test('every capability folder has an index.ts', () => {
  assert.ok(capabilities.includes('webhooks'), `capabilities found: ${capabilities.join(', ')}`);
  assert.deepEqual(
    capabilities.filter((name) => !readdirSync(join(SRC, name)).includes('index.ts')),
    [],
  );
});

test('code outside a capability folder imports only its index.ts', () => {
  assert.deepEqual(innerImports(tsFiles(SRC)), []);
});

test('benchmarks and scripts import the server only through its capabilities’ index.ts', () => {
  const files = ['bench', 'scripts'].flatMap((dir) => tsFiles(join(REPO, dir)));
  assert.ok(files.length > 0, 'bench/ and scripts/ hold TypeScript files');
  assert.deepEqual(innerImports(files), []);
});

test('capability folders import each other without a cycle', () => {
  const edges = new Map<string, Set<string>>(capabilities.map((c) => [c, new Set<string>()]));
  for (const file of tsFiles(SRC)) {
    const from = capabilityOf(file);
    if (from === undefined) continue;
    for (const target of importsOf(file)) {
      const to = capabilityOf(target);
      if (to !== undefined && to !== from) edges.get(from)?.add(to);
    }
  }
  const cycles: string[] = [];
  const visit = (node: string, path: string[]): void => {
    if (path.includes(node)) {
      cycles.push([...path.slice(path.indexOf(node)), node].join(' → '));
      return;
    }
    for (const next of edges.get(node) ?? []) visit(next, [...path, node]);
  };
  for (const capability of capabilities) visit(capability, []);
  assert.deepEqual([...new Set(cycles)], []);
});

test('the import reader sees every form of import it is meant to check', () => {
  const probe = join(SRC, 'layout-probe.ts');
  const text = [
    "import { a } from './x/one.ts';",
    "import type {\n  b,\n  c,\n} from '../two.ts';",
    "export { d } from './three.ts';",
    "export * from './four.ts';",
    "import './five.ts';",
    "const six = await import('./six.ts');",
    "import fs from 'node:fs';",
  ].join('\n');
  const found = [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2]);
  assert.deepEqual(found, ['./x/one.ts', '../two.ts', './three.ts', './four.ts', './five.ts', './six.ts', 'node:fs']);
  assert.equal(capabilityOf(join(SRC, 'webhooks', 'worker.ts')), 'webhooks');
  assert.equal(capabilityOf(probe), undefined);
});

test('an import of another capability’s inner file is reported; its index, its own files and the shell are not', () => {
  const worker = join(SRC, 'webhooks', 'worker.ts');
  assert.deepEqual(innerImportsOf(join(SRC, 'app.ts'), [worker]), [
    'packages/server/src/app.ts imports packages/server/src/webhooks/worker.ts (use src/webhooks/index.ts)',
  ]);
  assert.equal(innerImportsOf(join(SRC, 'signals', 'routes.ts'), [worker]).length, 1);
  assert.deepEqual(
    innerImportsOf(join(SRC, 'webhooks', 'routes.ts'), [
      worker,
      join(SRC, 'signals', 'index.ts'),
      join(SRC, 'errors.ts'),
    ]),
    [],
  );
});
