import assert from 'node:assert/strict';
import type { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import tar from 'tar-stream';
import { PAX_MAX_BYTES, TarError, TarReader } from './tar-reader.ts';

type Member = {
  name: string;
  body?: Buffer | string;
  type?: tar.Header['type'];
  linkname?: string;
  pax?: Record<string, string>;
};

async function pack(members: Member[]): Promise<Buffer> {
  const p = tar.pack();
  const out = Buffer.concat(
    await Promise.all([
      (async () => {
        const chunks: Buffer[] = [];
        for await (const c of p as unknown as Readable) chunks.push(c as Buffer);
        return chunks;
      })(),
      (async () => {
        for (const m of members) {
          await new Promise<void>((ok, fail) =>
            p.entry(
              { name: m.name, type: m.type ?? 'file', linkname: m.linkname, pax: m.pax },
              m.type && m.type !== 'file' ? '' : Buffer.from(m.body ?? ''),
              (e) => (e ? fail(e) : ok()),
            ),
          );
        }
        p.finalize();
        return [];
      })(),
    ]).then(([chunks]) => chunks),
  );
  return out;
}

/** Reads an archive fed in chunks of `chunk` bytes; returns each member's text. */
async function read(archive: Buffer, chunk = 7919): Promise<Map<string, string>> {
  const seen = new Map<string, string>();
  const reader = new TarReader((entry) => {
    const parts: Buffer[] = [];
    return {
      data: (c) => void parts.push(Buffer.from(c)),
      end: () => {
        seen.set(entry.name, Buffer.concat(parts).toString());
        assert.equal(Buffer.concat(parts).length, entry.size);
      },
    };
  });
  for (let at = 0; at < archive.length; at += chunk) await reader.push(archive.subarray(at, at + chunk));
  await reader.finish();
  return seen;
}

async function refused(archive: Buffer, pattern: RegExp): Promise<void> {
  await assert.rejects(read(archive), (e: Error) => {
    assert.ok(e instanceof TarError, String(e));
    assert.match(e.message, pattern);
    return true;
  });
}

describe('TarReader', () => {
  it('reads the members tar-stream writes, whatever the chunking', async () => {
    const archive = await pack([
      { name: 'agent.log', body: 'a\n'.repeat(3000) },
      { name: 'empty.json', body: '' },
      { name: 'BUNDLE-MANIFEST.json', body: '{}' },
    ]);
    for (const chunk of [1, 511, 512, 513, 4096, archive.length]) {
      const got = await read(archive, chunk);
      assert.deepEqual([...got.keys()], ['agent.log', 'empty.json', 'BUNDLE-MANIFEST.json'], `chunk ${chunk}`);
      assert.equal(got.get('agent.log'), 'a\n'.repeat(3000));
    }
  });

  it('takes a pax header’s path and size', async () => {
    const got = await read(await pack([{ name: 'x', body: 'hello', pax: { path: 'agent.log' } }]));
    assert.deepEqual([...got], [['agent.log', 'hello']]);
  });

  it('refuses a symbolic link, a hard link and a directory', async () => {
    await refused(await pack([{ name: 'agent.log', type: 'symlink', linkname: '/etc/shadow' }]), /symbolic link/);
    await refused(await pack([{ name: 'agent.log', type: 'link', linkname: 'x' }]), /hard link/);
    await refused(await pack([{ name: 'logs', type: 'directory' }]), /directory/);
  });

  it('refuses ../, absolute and nested names', async () => {
    await refused(await pack([{ name: '../../etc/cron.d/x', body: 'x' }]), /not a plain file name/);
    await refused(await pack([{ name: '/etc/passwd', body: 'x' }]), /not a plain file name/);
    await refused(await pack([{ name: 'a/b', body: 'x' }]), /not a plain file name/);
    await refused(await pack([{ name: '..', body: 'x' }]), /not a plain file name/);
  });

  it('refuses a pax header larger than it accepts, before reading it', async () => {
    await refused(
      await pack([{ name: 'a', body: 'x', pax: { comment: 'y'.repeat(PAX_MAX_BYTES) } }]),
      /pax header declares/,
    );
  });

  it('refuses a damaged header, a truncated archive, and bytes after its end', async () => {
    const good = await pack([{ name: 'agent.log', body: 'hello world' }]);
    const bad = Buffer.from(good);
    bad[10] ^= 0xff;
    await refused(bad, /wrong checksum/);
    await refused(good.subarray(0, 600), /truncated/);
    await refused(Buffer.concat([good, Buffer.from('trailing')]), /data follows the end/);
    await refused(Buffer.alloc(0), /no tar entry/);
  });

  it('a size past 2^53 in base-256 is refused', async () => {
    const good = await pack([{ name: 'agent.log', body: 'x' }]);
    const bad = Buffer.from(good);
    bad.fill(0xff, 124, 136);
    bad[124] = 0xff;
    // fix the checksum so only the size is wrong
    let sum = 8 * 0x20;
    for (let i = 0; i < 512; i++) if (i < 148 || i >= 156) sum += bad[i];
    bad.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
    await refused(bad, /impossible size/);
  });
});
