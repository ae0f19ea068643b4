import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { idleGuarded, UploadIdleError, UploadSlots } from './upload-limits.ts';

describe('UploadSlots', () => {
  it('refuses a tenant over its own cap while other tenants still get places', () => {
    const slots = new UploadSlots({ max: 10, maxPerTenant: 2 });
    assert.equal(slots.acquire('a'), true);
    assert.equal(slots.acquire('a'), true);
    assert.equal(slots.acquire('a'), false);
    assert.equal(slots.acquire('b'), true);
    assert.equal(slots.inFlight('a'), 2);
    assert.equal(slots.inFlight(), 3);
  });

  it('refuses every tenant once the total cap is reached', () => {
    const slots = new UploadSlots({ max: 3, maxPerTenant: 2 });
    assert.ok(slots.acquire('a') && slots.acquire('a') && slots.acquire('b'));
    assert.equal(slots.acquire('c'), false);
    assert.equal(slots.acquire('b'), false);
    assert.equal(slots.inFlight(), 3, 'a refusal takes nothing');
  });

  it('a released place can be taken again', () => {
    const slots = new UploadSlots({ max: 1, maxPerTenant: 1 });
    assert.equal(slots.acquire('a'), true);
    slots.release('a');
    assert.equal(slots.inFlight(), 0);
    assert.equal(slots.acquire('b'), true);
  });

  it('releasing a place never taken is a bug, not a silent negative count', () => {
    const slots = new UploadSlots({ max: 1, maxPerTenant: 1 });
    assert.throws(() => slots.release('a'), /no upload place/);
  });
});

describe('idleGuarded', () => {
  async function collect(it: AsyncIterable<Buffer>, perChunk?: () => Promise<void>): Promise<string> {
    let text = '';
    for await (const chunk of it) {
      text += chunk.toString();
      await perChunk?.();
    }
    return text;
  }

  it('passes every chunk through when they keep coming', async () => {
    const body = new PassThrough();
    const done = collect(idleGuarded(body, 200));
    for (const part of ['a', 'b', 'c']) {
      body.write(part);
      await sleep(50);
    }
    body.end();
    assert.equal(await done, 'abc');
  });

  it('fails with UploadIdleError when the next chunk does not come in time, leaving the source open', async () => {
    const body = new PassThrough();
    body.write('first');
    await assert.rejects(collect(idleGuarded(body, 100)), (error) => {
      assert.ok(error instanceof UploadIdleError);
      assert.equal(error.idleMs, 100);
      return true;
    });
    // Left open so the caller can still answer on the connection before closing it.
    assert.equal(body.destroyed, false);
    body.destroy();
  });

  it('time the consumer spends on a chunk does not count as idle', async () => {
    const body = new PassThrough();
    body.write('a');
    body.write('b');
    body.end();
    assert.equal(await collect(idleGuarded(body, 50), () => sleep(150)), 'ab');
  });

  it('closes the source when the consumer stops early', async () => {
    const body = new PassThrough();
    body.write('a');
    await assert.rejects(
      collect(idleGuarded(body, 1000), async () => {
        throw new Error('refused');
      }),
      /refused/,
    );
    assert.equal(body.destroyed, true);
  });

  it('keeps no chunk it has passed on: memory does not grow with the size of the body', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const passed: WeakRef<Buffer>[] = [];
    async function* source(): AsyncGenerator<Buffer> {
      for (let i = 0; i < 64; i++) yield Buffer.alloc(64 * 1024, i);
    }
    let i = 0;
    for await (const chunk of idleGuarded(source(), 60_000)) {
      passed.push(new WeakRef(chunk));
      if (++i < 64) continue;
      // Still inside the upload: every chunk but this one was consumed and must be collectable.
      gc();
      await sleep(0);
      gc();
      const alive = passed.slice(0, -1).filter((ref) => ref.deref() !== undefined).length;
      assert.equal(alive, 0, `${alive} of 63 passed-on chunks are still held by the guard`);
    }
  });
});
