import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { BackgroundLoop } from './background-loop.ts';

/** A pass the test lets end when it wants; counts the passes begun. */
function controlledPass(nextMs: number) {
  let begun = 0;
  let release: (() => void) | undefined;
  let passBegun: (() => void) | undefined;
  const pass = async () => {
    begun++;
    passBegun?.();
    await new Promise<void>((r) => {
      release = r;
    });
    return nextMs;
  };
  return {
    pass,
    begun: () => begun,
    /** Resolves when the next pass begins. */
    nextBegins: () =>
      new Promise<void>((r) => {
        passBegun = r;
      }),
    end: () => release?.(),
  };
}

const quiet = { error() {} };
const HOUR = 3_600_000;

describe('BackgroundLoop', () => {
  it('runs a pass at start, and never two at once: a wake during a pass runs one more after it', async () => {
    const p = controlledPass(HOUR);
    const loop = new BackgroundLoop(p.pass, { what: 'test', retryMs: HOUR, log: quiet });
    const first = p.nextBegins();
    loop.start();
    await first;
    loop.wake();
    loop.wake();
    await nextTurn();
    assert.equal(p.begun(), 1, 'the running pass is not joined by another');
    const second = p.nextBegins();
    p.end();
    await second;
    assert.equal(p.begun(), 2, 'the wakes during the pass made one more pass');
    p.end();
    await loop.idle();
    assert.equal(p.begun(), 2, 'and then it waits (an hour) for the next');
    await loop.stop();
  });

  it('wakes coalesce within one turn of the event loop', async () => {
    let passes = 0;
    const loop = new BackgroundLoop(
      async () => {
        passes++;
        return HOUR;
      },
      { what: 'test', retryMs: HOUR, log: quiet },
    );
    loop.start();
    await loop.idle();
    for (let i = 0; i < 10; i++) loop.wake();
    await loop.idle();
    assert.equal(passes, 2);
    await loop.stop();
  });

  it('a pass that answers 0 is followed at once; one that throws is logged and retried after retryMs', async () => {
    const answers = [0, 0, HOUR];
    let passes = 0;
    const loop = new BackgroundLoop(
      async () => {
        passes++;
        return answers.shift() ?? HOUR;
      },
      { what: 'test', retryMs: HOUR, log: quiet },
    );
    loop.start();
    await new Promise<void>((r) => {
      const check = () => (passes >= 3 ? r() : setImmediate(check));
      check();
    });
    await loop.idle();
    assert.equal(passes, 3);
    await loop.stop();

    const logged: string[] = [];
    let tries = 0;
    const failing = new BackgroundLoop(
      async () => {
        tries++;
        if (tries === 1) throw new Error('database away');
        return HOUR;
      },
      { what: 'claiming things', retryMs: 10, log: { error: (_o: object, msg: string) => logged.push(msg) } },
    );
    failing.start();
    await new Promise<void>((r) => {
      const check = () => (tries >= 2 ? r() : setTimeout(check, 5));
      check();
    });
    assert.deepEqual(logged, ['claiming things failed']);
    await failing.stop();
  });

  it('stop waits for the pass under way and starts no other; wake after stop does nothing', async () => {
    const p = controlledPass(0);
    const loop = new BackgroundLoop(p.pass, { what: 'test', retryMs: HOUR, log: quiet });
    const first = p.nextBegins();
    loop.start();
    await first;
    let stopped = false;
    const stopping = loop.stop().then(() => {
      stopped = true;
    });
    await nextTurn();
    assert.equal(stopped, false, 'stop waits for the pass');
    p.end();
    await stopping;
    loop.wake();
    await nextTurn();
    assert.equal(p.begun(), 1);
    assert.equal(loop.running, false);
  });
});
