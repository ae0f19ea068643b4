import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type BatchResult, TurnBatcher } from './turn-batcher.ts';

/** A batch runner that records each batch and answers when the test lets it. */
function heldRunner() {
  const batches: { inputs: number[]; answer: (results?: BatchResult<string>[] | Error) => void }[] = [];
  const run = (inputs: number[]) =>
    new Promise<BatchResult<string>[]>((resolve, reject) => {
      batches.push({
        inputs,
        answer: (results) =>
          results instanceof Error
            ? reject(results)
            : resolve(results ?? inputs.map((n) => ({ ok: true, value: `answer ${n}` }))),
      });
    });
  return { batches, run };
}

describe('TurnBatcher', () => {
  it('runs what one turn asked for as one batch, in order, and answers each input its own result', async () => {
    const { batches, run } = heldRunner();
    const batcher = new TurnBatcher(run, { maxBatch: 10, maxInFlight: 1 });
    const answers = [1, 2, 3].map((n) => batcher.submit(n));
    assert.equal(batches.length, 0, 'nothing runs in the turn that asked');
    await nextTurn();
    assert.deepEqual(
      batches.map((batch) => batch.inputs),
      [[1, 2, 3]],
    );
    batches[0].answer([
      { ok: true, value: 'one' },
      { ok: false, error: new Error('two is refused') },
      { ok: true, value: 'three' },
    ]);
    assert.equal(await answers[0], 'one');
    await assert.rejects(answers[1], /two is refused/);
    assert.equal(await answers[2], 'three');
  });

  it('takes at most maxBatch inputs per batch and runs at most maxInFlight batches at once', async () => {
    const { batches, run } = heldRunner();
    const batcher = new TurnBatcher(run, { maxBatch: 2, maxInFlight: 2 });
    const answers = [1, 2, 3, 4, 5].map((n) => batcher.submit(n));
    for (let i = 0; i < 4; i++) await nextTurn();
    assert.deepEqual(
      batches.map((batch) => batch.inputs),
      [
        [1, 2],
        [3, 4],
      ],
    );
    const late = batcher.submit(6);
    batches[0].answer();
    await answers[0];
    await nextTurn();
    assert.deepEqual(batches[2]?.inputs, [5, 6], 'what waited goes together once a batch ends');
    batches[1].answer();
    batches[2].answer();
    assert.deepEqual(
      await Promise.all([...answers, late]),
      [1, 2, 3, 4, 5, 6].map((n) => `answer ${n}`),
    );
  });

  it('a batch that fails, or whose runner throws, fails its own inputs only; the next batch runs', async () => {
    const { batches, run } = heldRunner();
    let throwNext = false;
    const batcher = new TurnBatcher(
      (inputs: number[]) => {
        if (throwNext) throw new Error('runner threw');
        return run(inputs);
      },
      { maxBatch: 10, maxInFlight: 1 },
    );
    const failing = [batcher.submit(1), batcher.submit(2)];
    await nextTurn();
    batches[0].answer(new Error('database is locked'));
    for (const answer of failing) await assert.rejects(answer, /database is locked/);

    throwNext = true;
    await assert.rejects(batcher.submit(3), /runner threw/);
    throwNext = false;

    const next = batcher.submit(4);
    await nextTurn();
    batches[1].answer();
    assert.equal(await next, 'answer 4');
  });
});
