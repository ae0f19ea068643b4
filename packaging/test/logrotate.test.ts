// The .deb's logrotate rule (packaging/agent/guard-agent.logrotate) run by the real logrotate
// on a throw-away log directory: it must leave exactly the segments collect reads, named
// <basename(log_path)>.<N>.gz with N = 1 newest (DESIGN §3 rotated segments), even under a
// global configuration that asks for dateext and delaycompress; and collect takes them.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { appendFile, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { collectArgs, describeRun, extractBundle, makeHome, runCli } from '../../packages/agent/test/harness.ts';
import { PACKAGING } from '../build/paths.ts';

const LOGROTATE = '/usr/sbin/logrotate';
let tmp: string;

before(async () => {
  tmp = await mkdtemp(join(os.tmpdir(), 'guard-logrotate-test-'));
});
after(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('the logrotate rule of the guard-agent package', () => {
  it('rotates agent.log into agent.log.1.gz (newest) … agent.log.8.gz, and collect takes every one', async () => {
    assert.ok(existsSync(LOGROTATE), `${LOGROTATE} is missing: run scripts/install-test-deps.sh (Debian's logrotate)`);
    const home = await makeHome(join(tmp, 'home'), { log: '' });
    const rule = (await readFile(join(PACKAGING, 'agent', 'guard-agent.logrotate'), 'utf8')).replace(
      '/var/log/guard/agent.log',
      home.logPath,
    );
    assert.notEqual(rule, await readFile(join(PACKAGING, 'agent', 'guard-agent.logrotate'), 'utf8'));
    // A host whose /etc/logrotate.conf asks for date suffixes and delayed compression.
    const config = join(tmp, 'logrotate.conf');
    await writeFile(config, `dateext\ndelaycompress\nrotate 2\n${rule}`);
    const state = join(tmp, 'logrotate.state');

    for (let round = 1; round <= 10; round++) {
      await appendFile(
        home.logPath,
        `time=2026-11-21T08:00:0${round % 10}.000Z level=INFO msg="round ${round}" n=${round}\n`,
      );
      execFileSync(LOGROTATE, ['--force', '--state', state, config], { stdio: 'pipe' });
    }
    const names = (await readdir(home.logDir)).sort();
    assert.deepEqual(names, [
      'agent.log',
      'agent.log.1.gz',
      'agent.log.2.gz',
      'agent.log.3.gz',
      'agent.log.4.gz',
      'agent.log.5.gz',
      'agent.log.6.gz',
      'agent.log.7.gz',
      'agent.log.8.gz',
    ]);
    assert.equal(await readFile(home.logPath, 'utf8'), '', 'copytruncate leaves the current log empty');
    for (let n = 1; n <= 8; n++) {
      const text = gunzipSync(await readFile(join(home.logDir, `agent.log.${n}.gz`))).toString();
      assert.match(text, new RegExp(`msg="round ${11 - n}"`), `agent.log.${n}.gz holds round ${11 - n}`);
    }

    await appendFile(home.logPath, 'time=2026-11-21T09:00:00.000Z level=INFO msg="after" client_secret=s3cr3t\n');
    const out = join(tmp, 'bundle.tar.zst');
    const r = await runCli(collectArgs(home, out));
    assert.equal(r.code, 0, describeRun(r));
    const members = await extractBundle(out, tmp);
    const manifest = JSON.parse((members.get('BUNDLE-MANIFEST.json') as Buffer).toString());
    const segments = manifest.contents.map((c: { name: string }) => c.name).filter((n: string) => n.endsWith('.gz'));
    assert.deepEqual(segments.sort(), names.filter((n) => n.endsWith('.gz')).sort());
    assert.deepEqual(manifest.trimmed_segments, []);
    assert.doesNotMatch((members.get('agent.log') as Buffer).toString(), /s3cr3t/);
  });
});
