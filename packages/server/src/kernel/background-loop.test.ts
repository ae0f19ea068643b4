import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
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

  it('a wake in the check phase runs its pass at once, not when something else next wakes the event loop', () => {
    // As the worker is woken: the outbox's commit resolves in an immediate, and the signal's
    // answer then wakes the worker. An unreferenced immediate let the event loop sleep in its
    // poll until the next timer or socket (0–11 ms more per delivery at 50 signals/s; here,
    // the 5 s timer). In a process of its own, where nothing else wakes the loop (the test
    // runner would). Whatever the order, a pass run by that timer's wake-up came after its time.
    const script = `
      const { BackgroundLoop } = await import(${JSON.stringify(new URL('./background-loop.ts', import.meta.url).href)});
      let passes = 0;
      let ran = () => {};
      const loop = new BackgroundLoop(async () => { passes++; ran(); return 3_600_000; },
        { what: 'test', retryMs: 3_600_000, log: { error() {} } });
      loop.start();
      await loop.idle();
      const timer = setTimeout(() => {}, 5_000);
      const dueAt = performance.now() + 5_000;
      // Awaited through the pass itself: loop.idle() would keep the event loop awake.
      const second = new Promise((resolve) => { ran = resolve; });
      setImmediate(() => loop.wake());
      await second;
      const ranAt = performance.now();
      clearTimeout(timer);
      await loop.stop();
      process.stdout.write(JSON.stringify({ passes, beforeTheTimer: ranAt < dueAt }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), { passes: 2, beforeTheTimer: true });
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
