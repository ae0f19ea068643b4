// The console's layout (packages/console/README.md): each folder of src/features/ is a
// feature; another feature uses it only through its index.ts (its face). The app (src/app/:
// providers, router, the signed-in layout) sits on top: it imports features' faces, and their
// route modules lazily, one chunk a page. No feature imports the app. Read from the source text.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = resolve(dirname(fileURLToPath(import.meta.url)), '../src');
const FEATURES = join(SRC, 'features');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [path] : [];
  });
}

const IMPORT =
  /(?:^|[\n;])\s*(?:import|export)\s(?:[^'"`;]*?\sfrom\s)?\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** [file, resolved target] of every relative import below src/ (paths relative to src/). */
const edges = sourceFiles(SRC).flatMap((file) =>
  [...readFileSync(file, 'utf8').matchAll(IMPORT)]
    .map((m) => m[1] ?? m[2])
    .filter((spec) => spec.startsWith('.'))
    .map((spec) => [relative(SRC, file), relative(SRC, resolve(dirname(file), spec))] as const),
);

/** The feature a path of src/ lies in, or undefined. */
const featureOf = (path: string) => (path.startsWith(`features${sep}`) ? path.split(sep)[1] : undefined);
const isFace = (path: string) => path.split(sep).length === 3 && path.endsWith(`${sep}index.ts`);

describe('console layout', () => {
  it('finds the imports it checks', () => {
    assert.ok(edges.length > 100, `only ${edges.length} imports found`);
    assert.ok(readdirSync(FEATURES).length >= 8);
  });

  it('a feature uses another only through its index.ts', () => {
    const bad = edges.filter(([from, to]) => {
      const [a, b] = [featureOf(from), featureOf(to)];
      return a !== undefined && b !== undefined && a !== b && !isFace(to);
    });
    assert.deepEqual(
      bad.map(([from, to]) => `${from} → ${to}`),
      [],
    );
  });

  it('the app imports features by their faces, and their pages lazily; no feature imports the app', () => {
    const bad = edges.filter(([from, to]) => {
      if (featureOf(from) !== undefined) return to.startsWith(`app${sep}`);
      if (!from.startsWith(`app${sep}`) || featureOf(to) === undefined) return false;
      return !isFace(to) && to.split(sep)[2] !== 'routes';
    });
    assert.deepEqual(
      bad.map(([from, to]) => `${from} → ${to}`),
      [],
    );
  });
});
