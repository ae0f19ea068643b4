// The daemon's log file (log_path): appended to, reopened after logrotate's rename (checked at
// most once a second, on an injected clock here), written at its start after a copytruncate.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rename, rm, truncate } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { createLog, LogFile } from './log.ts';

const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

it('appends slog lines to log_path, follows a rename rotation and a copytruncate', async () => {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-daemon-log-'));
  dirs.push(dir);
  const path = join(dir, 'log', 'agent.log');
  let clock = 0;
  const complaints: string[] = [];
  const file = new LogFile(
    path,
    (m) => complaints.push(m),
    () => clock,
  );
  const stderr: string[] = [];
  const log = createLog(
    { write: (s: string) => stderr.push(s) } as unknown as NodeJS.WritableStream,
    () => new Date(0),
    file,
  );
  log.info('first', { n: 1 });
  log.warn('second');
  assert.equal(
    await readFile(path, 'utf8'),
    'time=1970-01-01T00:00:00.000Z level=INFO msg=first n=1\ntime=1970-01-01T00:00:00.000Z level=WARN msg=second\n',
  );
  assert.equal(stderr.length, 2, 'stderr has every line too');
  // logrotate's rename: the next check (a second later) opens a new file at the path.
  await rename(path, `${path}.1`);
  clock += 1000;
  log.info('third');
  assert.match(await readFile(path, 'utf8'), /^time=\S+ level=INFO msg=third\n$/);
  assert.doesNotMatch(await readFile(`${path}.1`, 'utf8'), /third/);
  // copytruncate: the same file emptied; the next line is at its start (O_APPEND), no hole.
  await truncate(path, 0);
  log.error('fourth');
  assert.match(await readFile(path, 'utf8'), /^time=\S+ level=ERROR msg=fourth\n$/);
  file.close();
  assert.deepEqual(complaints, []);
});

it('a log_path it cannot write says so once on stderr and keeps going', async () => {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-daemon-log-'));
  dirs.push(dir);
  const complaints: string[] = [];
  const file = new LogFile(join(dir, 'no\0such'), (m) => complaints.push(m));
  file.write('a\n');
  file.write('b\n');
  assert.equal(complaints.length, 1, complaints.join(''));
  assert.match(complaints[0], /cannot write the log file/);
});
