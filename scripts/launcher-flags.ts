// The V8 flags a launcher (packages/<name>/bin/guard-<name>) runs node with, read from its
// `exec "$node" … "$here/../src/main.ts"` line: the launcher is where they are set, and the
// compile cache (scripts/warm-compile-cache.ts) and the agent's single executable
// (packaging/build/agent-sea.ts) must use the same ones.

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** `bin`: the launcher's path from the repository's root. */
export function launcherFlags(bin: string): string[] {
  const text = readFileSync(join(ROOT, bin), 'utf8');
  const m = /exec "\$node" (.*?) "\$here\/\.\.\/src\/main\.ts"/.exec(text);
  if (!m) throw new Error(`${bin}: no exec line with the node flags`);
  return m[1].split(/\s+/).filter((flag) => flag.startsWith('--'));
}
