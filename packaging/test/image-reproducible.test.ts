// The image is reproducible (DESIGN §8, issue 23): a second build from the same checkout and
// the same Debian packages gives the same image id and the same archive, byte for byte.
// What changes it is listed in packaging/build/image.ts's header.

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { test } from 'node:test';
import { buildServerImage } from '../build/image.ts';
import { serverImage } from './artefacts.ts';

async function sha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

test('two builds of the image from the same inputs: the same id, the same bytes', {
  timeout: 10 * 60_000,
}, async (t) => {
  const first = await serverImage();
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-image-again-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const again = await buildServerImage(join(dir, 'again.image.tar'));
  assert.equal(
    again.revision,
    first.revision,
    `the checkout moved on since ${first.path} was built: not the same inputs`,
  );
  assert.deepEqual(
    again.debianPackages,
    first.debianPackages,
    'the same Debian packages (the archive moved on between the builds?)',
  );
  assert.equal(again.id, first.id);
  assert.equal(await sha256(join(dir, 'again.image.tar')), await sha256(first.path));
});
