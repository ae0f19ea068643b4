import assert from 'node:assert/strict';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { after, before, describe, test } from 'node:test';
import { deflateRawSync, gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { gzipMember } from '../../test/harness.ts';
import { byteCopyable, GzipFormatError, type GzipFraming, gunzipMembers, newFraming } from './gzip-members.ts';

let dir: string;
let seq = 0;
before(async () => {
  dir = await mkdtemp(join(os.tmpdir(), 'guard-gzip-members-'));
});
after(() => rm(dir, { recursive: true, force: true }));

interface Read {
  content: Buffer;
  framing: GzipFraming;
  counted: number;
}

/** Writes `bytes` to a real file and reads it back through gunzipMembers. */
async function readMembers(bytes: Buffer, chunkBytes = 64 * 1024): Promise<Read> {
  const path = join(dir, `f${seq++}.gz`);
  await writeFile(path, bytes);
  const file = await open(path, 'r');
  try {
    const framing = newFraming();
    const parts: Buffer[] = [];
    let counted = 0;
    await pipeline(
      gunzipMembers(file, bytes.length, framing, { chunkBytes, onRead: (n) => (counted += n) }),
      new Writable({
        write(chunk, _enc, done) {
          parts.push(chunk);
          done();
        },
      }),
    );
    return { content: Buffer.concat(parts), framing, counted };
  } finally {
    await file.close();
  }
}

const text = (n: number, tag = 'line') =>
  Array.from({ length: n }, (_, i) => `time=2026-11-21T08:00:00Z level=INFO msg="${tag} ${i}" n=${i * 7919}\n`).join(
    '',
  );

describe('gunzipMembers', () => {
  test('one member written by Node: its content, counted once, byte-copyable', async () => {
    const content = text(2000);
    const gz = gzipSync(content);
    const r = await readMembers(gz, 4096);
    assert.equal(r.content.toString(), content);
    assert.deepEqual(r.framing, { members: 1, headerFields: false, paddingBytes: 0 });
    assert.ok(byteCopyable(r.framing));
    assert.equal(r.counted, gz.length);
  });

  test('many members, read across small chunks', async () => {
    const pieces = Array.from({ length: 300 }, (_, i) => text(1 + (i % 7), `m${i}`));
    const gz = Buffer.concat(pieces.map((p) => gzipMember(p)));
    const r = await readMembers(gz, 97);
    assert.equal(r.content.toString(), pieces.join(''));
    assert.equal(r.framing.members, 300);
    assert.ok(byteCopyable(r.framing));
  });

  test('deflate data that ends exactly at a chunk boundary', async () => {
    const content = text(50);
    const dataLength = deflateRawSync(content).length;
    const gz = Buffer.concat([gzipMember(content), gzipMember('second\n')]);
    const r = await readMembers(gz, dataLength);
    assert.equal(r.content.toString(), `${content}second\n`);
    assert.equal(r.framing.members, 2);
  });

  test('an empty member and empty content', async () => {
    const r = await readMembers(Buffer.concat([gzipMember(''), gzipMember('x\n'), gzipMember('')]));
    assert.equal(r.content.toString(), 'x\n');
    assert.equal(r.framing.members, 3);
  });

  test('name, comment and extra fields are skipped, and reported', async () => {
    for (const fields of [
      { name: 'api_key=N' },
      { comment: 'c'.repeat(200_000) },
      { extra: Buffer.from('api_key=E') },
    ]) {
      const r = await readMembers(gzipMember('body\n', { ...fields, headerCrc: true }), 1000);
      assert.equal(r.content.toString(), 'body\n');
      assert.equal(r.framing.headerFields, true);
      assert.equal(byteCopyable(r.framing), false);
    }
  });

  test('a header CRC alone keeps the file byte-copyable', async () => {
    const r = await readMembers(gzipMember('body\n', { headerCrc: true }));
    assert.ok(byteCopyable(r.framing));
  });

  test('zero padding after the last member is accepted, reported, and not byte-copyable', async () => {
    const gz = Buffer.concat([gzipMember('body\n'), Buffer.alloc(3000)]);
    const r = await readMembers(gz, 1024);
    assert.equal(r.content.toString(), 'body\n');
    assert.equal(r.framing.paddingBytes, 3000);
    assert.equal(byteCopyable(r.framing), false);
    assert.equal(r.counted, gz.length);
  });

  const refused: [string, Buffer, RegExp][] = [
    ['an empty file', Buffer.alloc(0), /empty file/],
    ['plain text', Buffer.from('api_key=x\n'), /not a gzip file/],
    [
      'text after zero padding',
      Buffer.concat([gzipMember('a\n'), Buffer.alloc(10), Buffer.from('api_key=x\n')]),
      /20 bytes after the last gzip member \(at offset \d+\) are not gzip data/,
    ],
    ['text right after a member', Buffer.concat([gzipMember('a\n'), Buffer.from('api_key=x\n')]), /not gzip data/],
    ['a lone magic byte after a member', Buffer.concat([gzipMember('a\n'), Buffer.from([0x1f])]), /not gzip data/],
    [
      'a second member with a bad method',
      Buffer.concat([gzipMember('a\n'), Buffer.from([0x1f, 0x8b, 7, 0, 0, 0, 0, 0, 0, 3])]),
      /member 2: unknown compression method 7/,
    ],
    ['reserved flags', Buffer.from(gzipMember('a\n').map((b, i) => (i === 3 ? b | 0x80 : b))), /reserved header flags/],
    ['a wrong CRC32', gzipMember('a\n', {}, 1), /member 1: CRC32 does not match/],
    [
      'a wrong size',
      (() => {
        const m = gzipMember('a\n');
        m.writeUInt32LE(3, m.length - 4);
        return m;
      })(),
      /member 1: size does not match/,
    ],
    [
      'a wrong header CRC',
      (() => {
        const m = gzipMember('a\n', { headerCrc: true });
        m[10] ^= 1;
        return m;
      })(),
      /header CRC does not match/,
    ],
    ['a header cut short', gzipMember('a\n', { name: 'agent.log.1' }).subarray(0, 15), /ends inside its header/],
  ];
  for (const [name, bytes, re] of refused) {
    test(`refuses ${name}`, async () => {
      await assert.rejects(readMembers(bytes, 7), (e: Error) => e instanceof GzipFormatError && re.test(e.message));
    });
  }

  test('refuses every truncation of a two-member file', async () => {
    const gz = Buffer.concat([gzipMember(text(20), { name: 'n' }), gzipMember(text(5))]);
    const first = gzipMember(text(20), { name: 'n' }).length;
    for (let cut = 1; cut < gz.length; cut++) {
      if (cut === first) continue; // a whole first member: a complete file of its own
      await assert.rejects(
        readMembers(gz.subarray(0, cut), 16),
        (e: NodeJS.ErrnoException) => e instanceof GzipFormatError || e.code === 'Z_BUF_ERROR',
        `cut at ${cut}`,
      );
    }
  });

  test('property: content is the concatenation of the members, framing as built, whatever the chunk size', async () => {
    const member = fc.record({
      content: fc.string({ maxLength: 3000 }),
      name: fc.option(
        fc.string({ maxLength: 20 }).map((s) => s.replaceAll('\0', '')),
        { nil: undefined },
      ),
      comment: fc.option(
        fc.string({ maxLength: 20 }).map((s) => s.replaceAll('\0', '')),
        { nil: undefined },
      ),
      headerCrc: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(member, { minLength: 1, maxLength: 6 }),
        fc.nat({ max: 40 }),
        fc.integer({ min: 1, max: 5000 }),
        async (members, padding, chunkBytes) => {
          const gz = Buffer.concat([
            ...members.map((m) => gzipMember(m.content, { name: m.name, comment: m.comment, headerCrc: m.headerCrc })),
            Buffer.alloc(padding),
          ]);
          const r = await readMembers(gz, chunkBytes);
          assert.equal(r.content.toString(), members.map((m) => m.content).join(''));
          assert.equal(r.framing.members, members.length);
          assert.equal(r.framing.paddingBytes, padding);
          assert.equal(
            r.framing.headerFields,
            members.some((m) => m.name !== undefined || m.comment !== undefined),
          );
          assert.equal(r.counted, gz.length);
        },
      ),
      { numRuns: 150 },
    );
  });

  test('a consumer that stops early releases the file', async () => {
    const content = text(20_000);
    const path = join(dir, 'early.gz');
    await writeFile(path, gzipSync(content));
    const file = await open(path, 'r');
    try {
      const stream = gunzipMembers(file, (await file.stat()).size, newFraming(), { chunkBytes: 1024 });
      for await (const _chunk of stream) break;
      assert.ok(stream.destroyed);
    } finally {
      await file.close();
    }
  });
});
