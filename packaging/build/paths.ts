// Where the release builds read and write, and the one version they stamp (the root
// package.json's: `npm version <v> --workspaces --include-workspace-root` moves every
// package.json together, and packaging/test/versions.test.ts fails when they differ).

import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const DIST = join(ROOT, 'dist');
/** The pinned Node 24 runtime that npm installed (DESIGN §2): the SEA's base and the server .deb's runtime. */
export const NODE_BIN = join(ROOT, 'node_modules', 'node', 'bin', 'node');
export const PACKAGING = join(ROOT, 'packaging');

export function releaseVersion(): string {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
}

/** The pinned runtime's version, as `node --version` prints it without the `v`. */
export function nodeVersion(): string {
  return JSON.parse(readFileSync(join(ROOT, 'node_modules', 'node', 'package.json'), 'utf8')).version;
}
