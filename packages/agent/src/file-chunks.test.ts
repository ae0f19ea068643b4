import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { readChunks } from './file-chunks.ts';

describe('readChunks', () => {
  let dir: string;
  let path: string;
  const bytes = randomBytes(10_000);

  before(async () => {
    dir = await mkdtemp(join(os.tmpdir(), 'file-chunks-'));
    path = join(dir, 'data.bin');
    await writeFile(path, bytes);
  });
  after(() => rm(dir, { recursive: true, force: true }));

  async function withFile<T>(fn: (handle: Awaited<ReturnType<typeof open>>) => Promise<T>): Promise<T> {
    const handle = await open(path, 'r');
    try {
      return await fn(handle);
    } finally {
      await handle.close();
    }
  }

  it('hands every byte over once, in file order, in chunks of at most chunkBytes', async () => {
    const seen: Buffer[] = [];
    const total = await withFile((h) =>
      readChunks(h, { chunkBytes: 4096, buffers: 2 }, (chunk) => {
        assert.ok(chunk.length <= 4096);
        seen.push(Buffer.from(chunk));
      }),
    );
    assert.equal(total, bytes.length);
    assert.deepEqual(Buffer.concat(seen), bytes);
    assert.deepEqual(
      seen.map((c) => c.length),
      [4096, 4096, 1808],
    );
  });

  it('stops at limit', async () => {
    const seen: Buffer[] = [];
    const total = await withFile((h) =>
      readChunks(h, { chunkBytes: 4096, buffers: 2, limit: 5000 }, (chunk) => {
        seen.push(Buffer.from(chunk));
      }),
    );
    assert.equal(total, 5000);
    assert.deepEqual(Buffer.concat(seen), bytes.subarray(0, 5000));
  });

  it('never refills a buffer before the consumer of its previous chunk has settled', async () => {
    const pending: { copy: Buffer; chunk: Buffer; release: () => void }[] = [];
    const run = withFile((h) =>
      readChunks(h, { chunkBytes: 1000, buffers: 3 }, (chunk) => {
        const copy = Buffer.from(chunk);
        return new Promise<void>((release) => pending.push({ copy, chunk, release }));
      }),
    );
    // Release the chunks one by one, late: each must still hold its own bytes.
    for (let released = 0; released < 10; released++) {
      while (pending.length <= released) await new Promise((r) => setTimeout(r, 1));
      assert.ok(pending.length - released <= 3, 'more chunks in flight than buffers');
      const p = pending[released];
      assert.deepEqual(p.chunk, p.copy, `chunk ${released} was overwritten while in flight`);
      p.release();
    }
    assert.equal(await run, bytes.length);
  });

  it('throws the first failure of a consumer, and reads on no further', async () => {
    let calls = 0;
    await assert.rejects(
      withFile((h) =>
        readChunks(h, { chunkBytes: 1000, buffers: 2 }, async () => {
          calls++;
          if (calls === 2) throw new Error('socket gone');
        }),
      ),
      /socket gone/,
    );
    assert.ok(calls <= 4, `${calls} chunks were consumed after the failure`);
  });

  it('maps an error of the read itself through readError', async () => {
    const handle = await open(path, 'r');
    await handle.close();
    await assert.rejects(
      readChunks(
        handle,
        { chunkBytes: 1000, buffers: 2, readError: (e) => new Error(`unreadable: ${(e as Error).message}`) },
        () => {},
      ),
      /^Error: unreadable: /,
    );
  });
});
