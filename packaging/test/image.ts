// The server image as the tests run it: built by build:image (packaging/build/image.ts, the
// archive a release ships), loaded into the tests' own podman store (container.ts) once per
// image id, and started with podman as an operator would.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { buildOnce } from '../build/cache.ts';
import { imageTag, type ServerImage } from '../build/image.ts';
import { DIST } from '../build/paths.ts';
import { serverImage } from './artefacts.ts';
import { podman, preparePodman } from './container.ts';

/** The image built from this checkout and loaded into the tests' store; its local name. */
export async function loadedServerImage(): Promise<ServerImage & { name: string; podmanPath: string }> {
  const podmanPath = preparePodman();
  const image = await serverImage();
  const name = `localhost/${imageTag()}`;
  const marker = join(DIST, '.stamps', 'server-image.loaded');
  const loaded = () =>
    podman(['image', 'inspect', '--format', '{{.Id}}', name]).stdout.trim() === image.id.replace('sha256:', '');
  if (existsSync(marker) && !loaded()) await rm(marker, { force: true }); // the store was wiped: load again
  await buildOnce('server-image-loaded', image.id, [marker], async () => {
    if (!loaded()) {
      const r = podman(['load', '-i', image.path], 600_000);
      assert.equal(r.code, 0, `podman load -i ${image.path} failed:\n${r.out}`);
    }
    assert.ok(loaded(), `podman load did not give ${name} the id ${image.id}`);
    await writeFile(marker, `${image.id}\n`);
  });
  return { ...image, name, podmanPath };
}

/** Polls `url` until it answers 200; returns how long that took. */
export async function waitReady(url: string, timeoutMs = 60_000, logs?: () => string): Promise<number> {
  const t0 = Date.now();
  let last = '';
  while (Date.now() - t0 < timeoutMs) {
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) return Date.now() - t0;
      last = `HTTP ${res.status}: ${await res.text()}`;
    } catch (error) {
      last = String((error as Error).cause ?? error);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} never answered 200 in ${timeoutMs} ms (last: ${last})${logs ? `\n${logs()}` : ''}`);
}
