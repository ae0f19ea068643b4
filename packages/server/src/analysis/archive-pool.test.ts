import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { gzipSync, zstdCompressSync } from 'node:zlib';
import type { BundleManifest } from '@guard/contract';
import tar from 'tar-stream';
import { ArchivePool } from './archive-pool.ts';
import { Unanalysable } from './read-archive.ts';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A real bundle archive (tar, zstd) of these members, with its manifest. */
async function bundleOf(
  members: { name: string; body: Buffer }[],
): Promise<{ bytes: Buffer; manifest: BundleManifest }> {
  const manifest = {
    bundle_version: 1,
    agent_version: '0.1.0',
    generated_at: '2026-11-27T10:00:00.000Z',
    trigger: 'cli',
    contents: members.map((m) => ({ name: m.name, size: m.body.length, sha256: sha256(m.body) })),
    trimmed_segments: [],
    redaction: { pattern: '^(api_key)$', values_masked: 0, members: {} },
    collection_errors: [],
  } as unknown as BundleManifest;
  const pack = tar.pack();
  const all = [...members, { name: 'BUNDLE-MANIFEST.json', body: Buffer.from(JSON.stringify(manifest)) }];
  for (const m of all) pack.entry({ name: m.name }, m.body);
  pack.finalize();
  const parts: Buffer[] = [];
  for await (const c of pack as unknown as Readable) parts.push(c as Buffer);
  return { bytes: zstdCompressSync(Buffer.concat(parts)), manifest };
}

/** The archive as an object store hands it out: a stream of 64 KiB chunks. */
const streamOf = (bytes: Buffer) =>
  Readable.from(
    (function* () {
      for (let at = 0; at < bytes.length; at += 65_536) yield bytes.subarray(at, at + 65_536);
    })(),
  );

/** 15 lines of 1 MiB full of `rting`, gzipped: the hostile segment of issue 19's finding 1. */
const hostileSegment = () => ({
  name: 'agent.log.1.gz',
  body: gzipSync(`${'rting'.repeat(209_716)}\n`.repeat(15), { level: 9 }),
});

/** Many distinct ERROR lines: seconds of parsing for a thread. */
const busyLog = (lines: number) => ({
  name: 'agent.log',
  body: Buffer.from(
    Array.from(
      { length: lines },
      (_, i) => `time=2026-11-27T10:00:00Z level=ERROR msg="failure ${i.toString(36)} of kind q${i % 997}"`,
    ).join('\n'),
  ),
});

const options = { threads: 1, busyBudgetMs: 60_000, memoryMb: 128 };

describe('ArchivePool', () => {
  it('reads an archive in a thread, the hostile segment in full, and hands back its facts', async () => {
    const pool = new ArchivePool(options);
    const { bytes, manifest } = await bundleOf([hostileSegment()]);
    const facts = await pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000 });
    const stats = facts.logs.get('agent.log.1.gz');
    assert.equal(stats?.lines, 15);
    assert.equal(stats?.longLines, 15);
    assert.deepEqual(facts.segmentProblems, []);
    assert.match(facts.manifestText, /"bundle_version":1/);
  });

  it('keeps this event loop free while a thread reads', async () => {
    const pool = new ArchivePool(options);
    const { bytes, manifest } = await bundleOf([busyLog(400_000)]);
    const before = performance.eventLoopUtilization();
    const facts = await pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000 });
    const used = performance.eventLoopUtilization(before);
    assert.equal(facts.logs.get('agent.log')?.errors, 400_000);
    // The read takes seconds of JavaScript, all in the thread: this loop only hands chunks over
    // (read here, it is busy nine tenths of the time).
    assert.ok(
      used.utilization < 0.4,
      `this loop was busy ${(used.utilization * 100).toFixed(0)} % of a read of ${(used.idle + used.active).toFixed(0)} ms`,
    );
  });

  it('runs at most `threads` tasks at once; the others wait for a slot, or leave when aborted', async () => {
    const pool = new ArchivePool(options);
    const { bytes, manifest } = await bundleOf([busyLog(50_000)]);
    const first = pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000 });
    const second = pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000 });
    const leaving = new AbortController();
    const third = pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000, signal: leaving.signal });
    assert.deepEqual(pool.load, { running: 1, waiting: 2 });
    leaving.abort(new Error('stopping'));
    await assert.rejects(third, /stopping/);
    assert.deepEqual(pool.load, { running: 1, waiting: 1 });
    const [a, b] = await Promise.all([first, second]);
    assert.equal(a.logs.get('agent.log')?.errors, 50_000);
    assert.equal(b.logs.get('agent.log')?.errors, 50_000);
    assert.deepEqual(pool.load, { running: 0, waiting: 0 });
  });

  it('stops a thread that runs past its CPU budget, from outside it', async () => {
    const pool = new ArchivePool({ ...options, busyBudgetMs: 50 });
    const { bytes, manifest } = await bundleOf([busyLog(400_000)]);
    await assert.rejects(
      pool.readArchive(streamOf(bytes), manifest, { deadlineMs: 60_000 }),
      (error: unknown) => error instanceof Unanalysable && /used more than 0\.05 s of CPU/.test(error.message),
    );
    assert.deepEqual(pool.load, { running: 0, waiting: 0 });
  });

  it('answers Unanalysable as the thread said it, and reads evidence lines in a thread too', async () => {
    const pool = new ArchivePool(options);
    const log = { name: 'agent.log', body: Buffer.from('one\ntwo\nthree\n') };
    const { bytes, manifest } = await bundleOf([log]);
    const lied = { ...manifest, contents: [{ ...manifest.contents[0], sha256: '0'.repeat(64) }] };
    await assert.rejects(
      pool.readArchive(streamOf(bytes), lied, { deadlineMs: 60_000 }),
      (error: unknown) =>
        error instanceof Unanalysable &&
        error.member === 'agent.log' &&
        /does not match its SHA-256/.test(error.message),
    );
    assert.deepEqual(await pool.memberLines(streamOf(bytes), 'agent.log', 2, 3), {
      member: 'agent.log',
      first_line: 2,
      lines: ['two', 'three'],
    });
  });
});
