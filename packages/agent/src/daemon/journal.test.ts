import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { Journal } from './journal.ts';

const dirs: string[] = [];
after(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
async function stateDir(): Promise<string> {
  const d = await mkdtemp(join(os.tmpdir(), 'guard-journal-'));
  dirs.push(d);
  return d;
}
const at = (s: number) => new Date(Date.UTC(2026, 10, 21, 10, 0, s));
const quiet = () => {};

describe('the request journal', () => {
  it('survives a restart: what was written is read back', async () => {
    const dir = await stateDir();
    const j = await Journal.open(dir, quiet);
    await j.update('brq_1', { state: 'collecting' }, at(1));
    await j.update('brq_1', { state: 'uploading', reported: 'collecting' }, at(2));
    const again = await Journal.open(dir, quiet);
    assert.deepEqual(again.get('brq_1'), {
      id: 'brq_1',
      state: 'uploading',
      reported: 'collecting',
      updated_at: at(2).toISOString(),
    });
    assert.equal((await stat(join(dir, 'daemon', 'requests.json'))).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'daemon'))).mode & 0o777, 0o700);
  });

  it('lists what the service has not confirmed, oldest first, and what a stopped run left unfinished', async () => {
    const j = await Journal.open(await stateDir(), quiet);
    await j.update('a', { state: 'done', reported: 'done', bundle_id: 'b1' }, at(1));
    await j.update('b', { state: 'failed', reported: 'uploading' }, at(2));
    await j.update('c', { state: 'collecting', reported: null }, at(3));
    await j.update('d', { state: 'taken' }, at(4));
    await j.update('e', { state: 'refused' }, at(5));
    assert.deepEqual(
      j.unreported().map((e) => e.id),
      ['b', 'c'],
    );
    assert.deepEqual(
      j
        .unfinished()
        .map((e) => e.id)
        .sort(),
      ['c', 'd'],
    );
  });

  it('a file that is not a journal is set aside, and the daemon starts with an empty one', async () => {
    const dir = await stateDir();
    await Journal.open(dir, quiet);
    await writeFile(join(dir, 'daemon', 'requests.json'), '{not json');
    const warnings: string[] = [];
    const j = await Journal.open(dir, (m) => warnings.push(m));
    assert.equal(j.unfinished().length, 0);
    assert.match(warnings[0], /not readable.*set aside/);
    assert.equal(await readFile(join(dir, 'daemon', 'requests.json.corrupt'), 'utf8'), '{not json');
  });

  it('keeps the newest 200 entries', async () => {
    const j = await Journal.open(await stateDir(), quiet);
    for (let i = 0; i < 205; i++) await j.update(`r${i}`, { state: 'done', reported: 'done' }, new Date(1e12 + i));
    assert.equal(j.get('r0'), undefined);
    assert.ok(j.get('r204'));
    assert.ok(j.get('r5'));
  });
});
