// @guard/listen as a developer gets it (issue 21, item 6): `npm pack` of packages/listen (its
// prepack bundles the CLI) makes dist/guard-listen-<v>.tgz; `npx <tarball> listen --help`
// runs it, on the repository's Node 24 and on the system's Node 20 (the package's engines);
// and the installed bundle, on Node 20, forwards a real event from guard-server to a local
// receiver, signed as a delivery.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { constructEvent } from '@guard/webhooks';
import { Cli, LocalReceiver } from '../../packages/listen/test/cli-harness.ts';
import { api } from '../../packages/server/test/harness.ts';
import { makeTestTls } from '../../packages/server/test/loopback.ts';
import { newTenant, startWebhookServer } from '../../packages/server/test/webhook-harness.ts';
import { NODE_BIN, releaseVersion } from '../build/paths.ts';
import { listenPackage } from './artefacts.ts';

const SYSTEM_NODE = '/usr/bin/node';
const hasSystemNode = existsSync(SYSTEM_NODE);

let tarball: string;
let work: string;

/** npm (or npx) with a throw-away cache, and `node` on PATH from `nodeDir` first. */
function npm(args: string[], nodeDir: string, cwd: string, command = 'npm') {
  const r = spawnSync(command, args, {
    cwd,
    encoding: 'utf8',
    env: {
      ...process.env,
      PATH: `${nodeDir}:${process.env.PATH}`,
      npm_config_cache: join(work, 'npm-cache'),
      npm_config_loglevel: 'error',
      npm_config_update_notifier: 'false',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
    },
  });
  return { code: r.status, out: r.stdout ?? '', err: `${r.stderr ?? ''}${r.error ?? ''}` };
}

before(async () => {
  tarball = await listenPackage();
  work = await mkdtemp(join(os.tmpdir(), 'guard-listen-package-'));
});
after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

describe('the @guard/listen tarball', () => {
  it('holds the bundle, its manifest and README, and depends on nothing', async () => {
    assert.ok(tarball.endsWith(`guard-listen-${releaseVersion()}.tgz`), tarball);
    const list = spawnSync('tar', ['tzvf', tarball], { encoding: 'utf8' });
    assert.equal(list.status, 0, list.stderr);
    const files = list.stdout
      .trim()
      .split('\n')
      .map((l) => l.split(/\s+/));
    assert.deepEqual(files.map((f) => f[f.length - 1]).sort(), [
      'package/README.md',
      'package/dist/guard.cjs',
      'package/package.json',
    ]);
    const bundle = files.find((f) => f[f.length - 1] === 'package/dist/guard.cjs');
    assert.match(bundle?.[0] ?? '', /^-rwx/, 'the bin is executable');
    const manifest = JSON.parse(
      spawnSync('tar', ['xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }).stdout,
    );
    assert.equal(manifest.name, '@guard/listen');
    assert.equal(manifest.version, releaseVersion());
    assert.deepEqual(manifest.bin, { guard: 'dist/guard.cjs' });
    assert.equal(manifest.engines.node, '>=20');
    assert.equal(manifest.dependencies, undefined);
    const head = spawnSync('tar', ['xzOf', tarball, 'package/dist/guard.cjs'], { encoding: 'utf8' }).stdout;
    assert.ok(head.startsWith('#!/usr/bin/env node\n'));
  });

  it('runs with npx: `npx <tarball> listen --help`, on Node 24 and on the system Node 20', async () => {
    const downloads = join(work, 'downloads');
    await mkdir(downloads);
    await copyFile(tarball, join(downloads, basename(tarball)));
    const nodes = [dirname(NODE_BIN), ...(hasSystemNode ? [dirname(SYSTEM_NODE)] : [])];
    for (const nodeDir of nodes) {
      // As the docs say it: from a directory holding the downloaded tarball (outside any npm
      // project: npm resolves ./ from the nearest package.json), by its relative path.
      const r = npm(['--yes', `./${basename(tarball)}`, 'listen', '--help'], nodeDir, downloads, 'npx');
      assert.equal(r.code, 0, `${nodeDir}: ${r.err}`);
      assert.match(r.out, /^Usage: guard listen \[options\]/);
      assert.match(r.out, /--forward-to <url>/);
      const v = npm(['--yes', `./${basename(tarball)}`, '--version'], nodeDir, downloads, 'npx');
      assert.equal(v.out.trim(), releaseVersion(), v.err);
    }
  });

  it('forwards a real event, signed, when installed and run on the system Node 20', {
    skip: !hasSystemNode && `no ${SYSTEM_NODE}`,
  }, async () => {
    const prefix = join(work, 'installed');
    const installed = npm(['install', '--prefix', prefix, '--no-save', tarball], dirname(SYSTEM_NODE), work);
    assert.equal(installed.code, 0, installed.err);
    const bin = join(prefix, 'node_modules', '@guard', 'listen', 'dist', 'guard.cjs');
    assert.ok(existsSync(bin), await readFile(join(prefix, 'package.json'), 'utf8').catch(() => 'no package.json'));

    const tls = await makeTestTls();
    const server = await startWebhookServer({ caPem: tls.caPem });
    const receiver = await LocalReceiver.start();
    let cli: Cli | undefined;
    try {
      const t = await newTenant(server);
      cli = new Cli(['listen', '--url', server.url, '--forward-to', receiver.url()], { GUARD_TOKEN: t.adminToken }, [
        SYSTEM_NODE,
        bin,
      ]);
      const [, secret] = await cli.line('err', /^Signing secret for this session: (whsec_\S+)$/);
      await cli.line('err', /^Ready: tenant /);
      const res = await api(server.url, 'POST', '/v1/webhooks/listen/trigger', {
        token: t.adminToken,
        body: { event_type: 'signal_created' },
      });
      const hit = await receiver.waitFor(res.json.signal_id);
      assert.equal(constructEvent(hit.body, hit.headers, secret).data.signal_id, res.json.signal_id);
      await cli.line('out', new RegExp(`  signal_created  ${res.json.signal_id}  200  \\d+ ms$`));
      assert.equal(await cli.interrupt(), 0);
    } finally {
      cli?.child.kill('SIGKILL');
      await receiver.close();
      await server.close();
    }
  });
});
