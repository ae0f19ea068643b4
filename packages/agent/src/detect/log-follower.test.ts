import assert from 'node:assert/strict';
import { appendFile, mkdtemp, rename, rm, truncate, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type FollowPosition, followLog, takeLines } from './log-follower.ts';
import { DetectionStore, SPOOL_MAX } from './store.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(os.tmpdir(), 'guard-follow-'));
  dirs.push(d);
  return d;
}

async function until(cond: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A follower in the background, collecting lines and the last position. */
function follow(path: string, from?: FollowPosition) {
  const stop = new AbortController();
  const got: string[] = [];
  let position: FollowPosition | undefined;
  const done = followLog({
    path,
    from,
    hints: ['sudo'],
    pollMs: 50,
    signal: stop.signal,
    onProblem: () => {},
    onLines: (lines, p) => {
      got.push(...lines);
      position = p;
    },
  });
  return {
    got,
    position: () => position,
    async stop() {
      stop.abort();
      await done;
    },
  };
}

describe('takeLines', () => {
  it('hands over complete hinted lines only, and what it consumed', () => {
    const hints = [Buffer.from('sudo'), Buffer.from('sshd')];
    const r = takeLines(Buffer.from('a\nsudo x\nb sshd sudo\nc\npartial sudo'), hints);
    assert.deepEqual(r.lines, ['sudo x', 'b sshd sudo']);
    assert.equal(r.consumed, 'a\nsudo x\nb sshd sudo\nc\n'.length);
    assert.deepEqual(takeLines(Buffer.from('no newline yet sudo'), hints), { lines: [], consumed: 0 });
  });
});

describe('followLog: tail -F through logrotate, from a kept position', () => {
  it('starts at the end, then follows appends, a rename rotation and a copytruncate', async () => {
    const dir = await tempDir();
    const path = join(dir, 'auth.log');
    await writeFile(path, 'old sudo line before the first start\n');
    const f = follow(path);
    await until(() => f.position() !== undefined, 'the first position');
    await appendFile(path, 'sudo one\nnothing\n');
    await until(() => f.got.length === 1, 'the first line');
    // logrotate's default: rename, then a new file; a last line lands in the old one first.
    await appendFile(path, 'sudo two (before the rename)\n');
    await rename(path, `${path}.1`);
    await appendFile(`${path}.1`, 'sudo three (written to the renamed file)\n');
    await writeFile(path, 'sudo four (the new file)\n');
    await until(() => f.got.length === 4, 'the lines around the rename');
    // copytruncate: the same file emptied, then written again.
    await truncate(path, 0);
    await appendFile(path, 'sudo five\n');
    await until(() => f.got.length === 5, 'the line after copytruncate');
    await f.stop();
    assert.deepEqual(f.got, [
      'sudo one',
      'sudo two (before the rename)',
      'sudo three (written to the renamed file)',
      'sudo four (the new file)',
      'sudo five',
    ]);
  });

  it('resumes from a kept position: lines written while stopped, also across a rotation', async () => {
    const dir = await tempDir();
    const path = join(dir, 'auth.log');
    await writeFile(path, '');
    const f1 = follow(path);
    await until(() => f1.position() !== undefined, 'the first position');
    await appendFile(path, 'sudo a\n');
    await until(() => f1.got.length === 1, 'a');
    await f1.stop();
    await appendFile(path, 'sudo b (while stopped)\npartial sudo');
    const f2 = follow(path, f1.position());
    await until(() => f2.got.length === 1, 'b');
    await appendFile(path, ' c\n');
    await until(() => f2.got.length === 2, 'the completed line');
    await f2.stop();
    assert.deepEqual(f2.got, ['sudo b (while stopped)', 'partial sudo c']);
    // Stopped, then rotated by rename: the rest of the old file is read from <path>.1.
    await appendFile(path, 'sudo d (before the rotation)\n');
    await rename(path, `${path}.1`);
    await writeFile(path, 'sudo e (after)\n');
    const f3 = follow(path, f2.position());
    await until(() => f3.got.length === 2, 'd and e');
    await f3.stop();
    assert.deepEqual(f3.got, ['sudo d (before the rotation)', 'sudo e (after)']);
  });
});

describe('DetectionStore', () => {
  it('keeps positions, baselines and the spool across reopening; keys are unique and stable', async () => {
    const dir = await tempDir();
    const signal = (n: number) => ({
      signal_type: 'user_created' as const,
      severity: 3,
      description: `user ${n}`,
      identity_id: String(n),
      identity_name: `u${n}`,
      created_at: new Date(0).toISOString(),
    });
    let store = DetectionStore.open(dir);
    store.record({
      position: { source: 'file:/x', state: { ino: 1, offset: 10 } },
      files: [['/etc/passwd', { sha256: 'ab', uid: 0 }]],
      signals: [signal(1), signal(2)],
    });
    const [first] = store.peek(1);
    store.close();
    store = DetectionStore.open(dir);
    assert.deepEqual(store.position('file:/x'), { ino: 1, offset: 10 });
    assert.deepEqual(store.files().get('/etc/passwd'), { sha256: 'ab', uid: 0 });
    assert.equal(store.depth, 2);
    const again = store.peek(2);
    assert.equal(again[0].key, first.key, 'the same key after a restart: the server dedupes a resend');
    assert.notEqual(again[0].key, again[1].key);
    store.remove(again[0].seq);
    store.record({ signals: [signal(3)] });
    assert.deepEqual(
      store.peek(5).map((s) => s.body.description),
      ['user 2', 'user 3'],
      'in order',
    );
    store.close();
  });

  it('is bounded: past SPOOL_MAX signals are counted by type, not kept', async () => {
    const dir = await tempDir();
    const store = DetectionStore.open(dir);
    const many = Array.from({ length: SPOOL_MAX + 5 }, (_, i) => ({
      signal_type: 'ssh_login_failed' as const,
      severity: 2,
      description: `f${i}`,
      identity_id: '',
      identity_name: '',
      created_at: new Date(0).toISOString(),
    }));
    assert.deepEqual(store.record({ signals: many }), { spooled: SPOOL_MAX, dropped: 5 });
    assert.equal(store.depth, SPOOL_MAX);
    assert.deepEqual([...store.takeDropped()], [['ssh_login_failed', 5]]);
    assert.deepEqual([...store.takeDropped()], []);
    store.close();
  });
});
