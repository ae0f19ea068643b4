// collect --obfuscate re-gzips every segment at a faster level (collect.ts, OBFUSCATE_GZIP_LEVEL)
// and falls back to the default level for a segment whose faster form does not fit under the
// cap, so the faster level never trims a segment the default level would have kept. Runs the
// real collectBundle on real files with a small cap (the cap is a parameter for tests).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { gzipSync } from 'node:zlib';
import { SILENT_PROGRESS } from '../progress.ts';
import { collectBundle } from './collect.ts';
import { readBundle } from './read-archive.ts';
import { HOST_SOURCES } from './system-info.ts';

const root = await mkdtemp(join(os.tmpdir(), 'guard-collect-level-'));
after(() => rm(root, { recursive: true, force: true }));

/** ~4 MiB of log text without a value to mask or obfuscate: it passes through unchanged. */
function segmentText(): Buffer {
  let seed = 7;
  const next = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed;
  };
  const comms = ['bash', 'curl', 'python3', 'nginx', 'cron', 'tar'];
  const lines: string[] = [];
  for (let i = 0; lines.length < 40_000; i++)
    lines.push(
      `time=2026-11-28T05:${String(i % 60).padStart(2, '0')}:00.${String(next() % 1000).padStart(3, '0')}Z level=INFO ` +
        `msg="exec observed" pid=${next() % 65000} comm=${comms[next() % comms.length]} bytes=${next() % 90000} ` +
        `span_id=${(next() % 0xffffff).toString(16)}${(next() % 0xffffff).toString(16)}`,
    );
  return Buffer.from(`${lines.join('\n')}\n`);
}

async function collect(home: string, out: string, capBytes: number) {
  return collectBundle({
    config: {
      source: undefined,
      effective: {},
      logPath: join(home, 'log', 'agent.log'),
      stateDir: join(home, 'state'),
      environment: undefined,
      extraKeys: [],
    },
    out,
    cwd: home,
    agentVersion: '0.0.0-test',
    trigger: 'cli',
    now: () => new Date('2026-11-28T06:00:00Z'),
    progress: SILENT_PROGRESS,
    sources: HOST_SOURCES,
    capBytes,
    obfuscate: true,
  });
}

describe('collect --obfuscate: the re-gzip level and the cap', () => {
  it('stores the faster form when it fits, the default form when only that fits, and trims only what neither fits', async () => {
    const home = join(root, 'home');
    await mkdir(join(home, 'log'), { recursive: true });
    await mkdir(join(home, 'state'), { recursive: true });
    await writeFile(join(home, 'log', 'agent.log'), 'time=2026-11-28T05:59:00Z level=INFO msg="started"\n');
    const text = segmentText();
    await writeFile(join(home, 'log', 'agent.log.1.gz'), gzipSync(text, { level: 6 }));
    const atDefault = gzipSync(text, { level: 6, memLevel: 9 }).length;

    const first = await collect(home, join(root, 'first.tar.zst'), 1 << 30);
    const stored = (name: string) => first.manifest.contents.find((m) => m.name === name)?.size ?? -1;
    const faster = stored('agent.log.1.gz');
    const base = first.manifest.contents.reduce((sum, m) => sum + m.size, 0) - faster;
    assert.ok(faster > atDefault + 4096, `the faster level is larger (${faster} against ${atDefault} bytes)`);

    // Room for the default form, not the faster one: the default form is stored, whole.
    const between = await collect(home, join(root, 'between.tar.zst'), base + Math.floor((faster + atDefault) / 2));
    assert.deepEqual(between.manifest.trimmed_segments, []);
    const member = between.manifest.contents.find((m) => m.name === 'agent.log.1.gz');
    assert.equal(member?.size, atDefault);
    const expected = createHash('sha256')
      .update(gzipSync(text, { level: 6, memLevel: 9 }))
      .digest('hex');
    assert.equal(member?.sha256, expected);
    const listed = (await readBundle(between.path)).members.find((m) => m.name === 'agent.log.1.gz');
    assert.equal(listed?.sha256, expected, 'the archive holds what the manifest says');

    // Room for neither: trimmed.
    const none = await collect(home, join(root, 'none.tar.zst'), base + atDefault - 2048);
    assert.deepEqual(none.manifest.trimmed_segments, ['agent.log.1.gz']);
  });
});
