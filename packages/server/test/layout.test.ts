// The server's layout rules (STYLE.md, convention 1 and "Layers"; docs/architecture.md).
//
// src/ reads bottom-up in three layers:
//   - the kernel: src/kernel/, what every capability uses and that knows no capability —
//     errors, ids, pagination, route schemas, request validation, HTTP limits, error responses,
//     Fastify options, graceful shutdown, logger, metrics listener, master key, data-dir lock,
//     API docs, the background loop, settings rows, version, exit codes. A kernel file imports
//     only other kernel files; it declares the narrow types it takes (HttpLimits, LogLevel,
//     MetricsAddress) and config.ts composes them.
//   - the capabilities: every other folder of src/ (agents, auth, webhooks, …) but the wiring's
//     cli/. A capability imports the kernel and other capabilities' faces, declares the deps it
//     needs as its own types (AgentsDeps, WebhooksDeps, …) and owns its settings; it never
//     imports the wiring. Its faces: index.ts (what it does) and, for a capability with
//     settings, settings.ts (its rows of the settings table, their type and their parser). A
//     settings.ts imports only the kernel, so that reading the config loads no capability's
//     code (no database driver, no S3 client at `guard-server --help`).
//   - the wiring: src/'s own files — the entry point, the config loader, AppDeps and the files
//     that open and compose the capabilities (server.ts, app.ts, setup, data transfer,
//     health) — and the folders of WIRING_FOLDERS (cli/: the entry point's commands).
// Rules: each capability folder has a narrow index.ts and code outside a folder imports only
// its faces; capability folders import each other without a cycle; no two files of src/
// import each other round a circle, type-only imports included; no capability imports the
// wiring; the kernel imports no capability and no wiring. Tests (*.test.ts, beside the code or
// here in test/) are outside the layers and may import anything. Imports are read from the
// source text: every static `import … from`, `import type … from`, `export … from` and
// `import()` with a relative path.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SERVER_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(SERVER_DIR, 'src');
const REPO = resolve(SERVER_DIR, '..', '..');

/**
 * The folders of the wiring: cli/ holds main.ts's commands, one file per command (they load the
 * config and open server.ts, setup.ts, data-transfer.ts), so it sits beside main.ts at the top,
 * not among the capabilities. It may import anything; no capability or kernel file may import it.
 */
const WIRING_FOLDERS = ['cli'];

/** The bottom layer's folder. */
const KERNEL = 'kernel';

/** Every other folder of src/ is a capability; src/'s own files are the wiring above them. */
const capabilities = readdirSync(SRC).filter(
  (name) => statSync(join(SRC, name)).isDirectory() && !WIRING_FOLDERS.includes(name) && name !== KERNEL,
);

/** A capability's faces: the files of its folder that code outside it may import. */
const FACES = ['index.ts', 'settings.ts'];

type Layer = 'kernel' | 'capability' | 'wiring';

/** The layer of a file of src/ (undefined for a path outside src/). */
function layerOf(path: string): Layer | undefined {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return undefined;
  if (!rel.includes(sep)) return 'wiring';
  const folder = rel.split(sep)[0];
  return folder === KERNEL ? 'kernel' : WIRING_FOLDERS.includes(folder) ? 'wiring' : 'capability';
}

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

/** The imports of `file` that reach into another capability past its faces. */
function innerImportsOf(file: string, targets: string[]): string[] {
  const own = capabilityOf(file);
  return targets.flatMap((target) => {
    const capability = capabilityOf(target);
    if (capability === undefined || capability === own) return [];
    if (FACES.some((face) => target === join(SRC, capability, face))) return [];
    return [`${relative(REPO, file)} imports ${relative(REPO, target)} (use src/${capability}/index.ts)`];
  });
}

/** The imports of a capability's settings.ts that are not kernel: they would load code when the config is read. */
function settingsImportsOf(file: string, targets: string[]): string[] {
  const capability = capabilityOf(file);
  if (capability === undefined || file !== join(SRC, capability, 'settings.ts')) return [];
  return targets
    .filter((target) => layerOf(target) !== 'kernel')
    .map(
      (target) => `${relative(REPO, file)} imports ${relative(REPO, target)} (a settings face imports only the kernel)`,
    );
}

const innerImports = (files: string[]) => files.flatMap((file) => innerImportsOf(file, importsOf(file)));

/** The imports of `file` that point up: a capability importing the wiring, the kernel importing either above it. */
function upwardImportsOf(file: string, targets: string[]): string[] {
  const from = layerOf(file);
  if (from === undefined || from === 'wiring') return [];
  return targets.flatMap((target) => {
    const to = layerOf(target);
    const upward = to === 'wiring' || (from === 'kernel' && to === 'capability');
    return upward ? [`${relative(REPO, file)} (${from}) imports ${relative(REPO, target)} (${to})`] : [];
  });
}

/** The source files of src/, tests left out: they sit outside the layers. */
const sourceFiles = () => tsFiles(SRC).filter((file) => !file.endsWith('.test.ts'));

/** The strongly connected components of more than one file (Tarjan): each is a circle of imports. */
function importCycles(graph: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        connect(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const component: string[] = [];
    let member: string | undefined;
    do {
      member = stack.pop() as string;
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1) cycles.push(component.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) connect(node);
  return cycles;
}

test('every capability folder has an index.ts', () => {
  assert.ok(capabilities.includes('webhooks'), `capabilities found: ${capabilities.join(', ')}`);
  assert.deepEqual(
    capabilities.filter((name) => !readdirSync(join(SRC, name)).includes('index.ts')),
    [],
  );
});

test('code outside a capability folder imports only its faces (index.ts, settings.ts)', () => {
  assert.deepEqual(innerImports(tsFiles(SRC)), []);
});

test('benchmarks and scripts import the server only through its capabilities’ faces', () => {
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

test('no two files of src/ import each other round a circle, type-only imports included', () => {
  const graph = new Map(sourceFiles().map((file) => [file, importsOf(file)]));
  const cycles = importCycles(graph).map(
    (files) => `${files.length} files: ${files.map((file) => relative(SRC, file)).join(', ')}`,
  );
  assert.deepEqual(cycles, []);
});

test('a capability’s settings.ts imports only the kernel', () => {
  const faces = capabilities.filter((c) => statSync(join(SRC, c, 'settings.ts'), { throwIfNoEntry: false }));
  assert.ok(faces.includes('webhooks') && faces.includes('db'), `settings faces found: ${faces.join(', ')}`);
  assert.deepEqual(
    sourceFiles().flatMap((file) => settingsImportsOf(file, importsOf(file))),
    [],
  );
});

test('no capability imports the wiring, and the kernel imports no capability and no wiring', () => {
  assert.ok(statSync(join(SRC, KERNEL, 'errors.ts')).isFile(), 'the kernel is src/kernel/');
  assert.deepEqual(
    sourceFiles().flatMap((file) => upwardImportsOf(file, importsOf(file))),
    [],
  );
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
      join(SRC, 'kernel', 'errors.ts'),
    ]),
    [],
  );
  assert.deepEqual(innerImportsOf(join(SRC, 'config.ts'), [join(SRC, 'webhooks', 'settings.ts')]), []);
});

test('a settings face that imports more than the kernel is reported', () => {
  const face = join(SRC, 'objects', 'settings.ts');
  assert.deepEqual(settingsImportsOf(face, [join(SRC, 'kernel', 'settings.ts')]), []);
  assert.deepEqual(settingsImportsOf(face, [join(SRC, 'objects', 's3-store.ts'), join(SRC, 'db', 'index.ts')]), [
    'packages/server/src/objects/settings.ts imports packages/server/src/objects/s3-store.ts (a settings face imports only the kernel)',
    'packages/server/src/objects/settings.ts imports packages/server/src/db/index.ts (a settings face imports only the kernel)',
  ]);
  assert.deepEqual(settingsImportsOf(join(SRC, 'objects', 'gc.ts'), [join(SRC, 'db', 'index.ts')]), []);
});

test('an upward import is reported; a downward one is not', () => {
  const routes = join(SRC, 'agents', 'routes.ts');
  const deps = join(SRC, 'deps.ts');
  const errors = join(SRC, 'kernel', 'errors.ts');
  const logger = join(SRC, 'kernel', 'logger.ts');
  assert.deepEqual(upwardImportsOf(routes, [deps, errors, join(SRC, 'db', 'index.ts')]), [
    'packages/server/src/agents/routes.ts (capability) imports packages/server/src/deps.ts (wiring)',
  ]);
  assert.equal(upwardImportsOf(logger, [join(SRC, 'config.ts')]).length, 1);
  assert.equal(upwardImportsOf(logger, [join(SRC, 'db', 'index.ts')]).length, 1);
  assert.deepEqual(upwardImportsOf(logger, [errors]), []);
  assert.deepEqual(upwardImportsOf(join(SRC, 'server.ts'), [routes, deps, logger]), []);
  const command = join(SRC, 'cli', 'serve.ts');
  assert.deepEqual(upwardImportsOf(command, [join(SRC, 'config.ts'), join(SRC, 'db', 'index.ts')]), []);
  assert.equal(upwardImportsOf(routes, [command]).length, 1);
});

test('an import circle is found whatever its length, and a chain is not one', () => {
  const graph = new Map([
    ['a', ['b']],
    ['b', ['c']],
    ['c', ['a', 'd']],
    ['d', []],
    ['e', ['d']],
  ]);
  assert.deepEqual(importCycles(graph), [['a', 'b', 'c']]);
  assert.deepEqual(
    importCycles(
      new Map([
        ['a', ['b']],
        ['b', []],
      ]),
    ),
    [],
  );
});
