// The installed guard-server's first words (issue 23): what the postinst prints and what the
// server prints when it starts as the package starts it (/usr/bin/guard-server as the guard
// user, reading /etc/guard/server.yaml), in a throw-away Debian 12 container where no systemd
// runs (container.ts). Every path it names exists in the container, every URL answers, every
// command is on PATH, and the printed commands work as printed: setup as the server's user on
// the package's data directory, then the agent (its own package, installed beside) enrolls,
// collects and uploads with the commands the message gives.

import assert from 'node:assert/strict';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../packages/agent/test/upload-harness.ts';
import { freePort } from '../../packages/server/test/loopback.ts';
import { ensureAgentDeb } from '../build/agent-deb.ts';
import { ensureServerDeb } from '../build/server-deb.ts';
import { Container, quote } from './container.ts';
import { dpkgInstall } from './dpkg.ts';

const HOST = '/host';

/** Absolute paths a text names (outside URLs), trailing punctuation dropped. */
function pathsIn(text: string): string[] {
  const found = text.replace(/\bhttps?:\/\/\S+/g, ' ').match(/(?<=^|[\s(:'"`])\/[\w.@+-]+(?:\/[\w.@+-]*)*/gm) ?? [];
  return [...new Set(found.map((p) => p.replace(/[.,;:]+$/, '')))];
}

/** The commands of the message's "Next:" lines, by what they are for. */
function nextCommands(message: string): Record<string, string[]> {
  const next = message.slice(message.indexOf('Next:\n') + 'Next:\n'.length).split('\n');
  const commands: Record<string, string[]> = {};
  for (const line of next) {
    const m = /^ {2}([a-z, ]+):\s+(.+)$/.exec(line);
    if (!m) continue;
    // A note in parentheses after three spaces is not part of the command.
    commands[m[1]] = m[2]
      .replace(/ {3}\(.*\)$/, '')
      .split(';')
      .map((command) => command.trim());
  }
  return commands;
}

describe('guard-server .deb: what it prints names what is installed, and its commands work as printed', () => {
  let tmp: string;
  let c: Container;
  let postinst: string;
  let server: ReturnType<Container['spawn']> | undefined;
  let message: string;
  let port: number;
  let metricsPort: number;

  before(async () => {
    tmp = await mkdtemp(join(os.tmpdir(), 'guard-start-message-test-'));
    const debs = [await ensureServerDeb('test'), await ensureAgentDeb('test')];
    for (const deb of debs) await copyFile(deb, join(tmp, basename(deb)));
    c = await Container.start('server-start', { [tmp]: HOST });
    postinst = dpkgInstall(c, `${HOST}/${basename(debs[0])}`);
    dpkgInstall(c, `${HOST}/${basename(debs[1])}`);
    port = await freePort();
    metricsPort = await freePort();
    // As the unit starts it, minus systemd: the launcher as guard. Only the addresses are
    // moved off 8080 and 9464 (this host's network is the container's).
    const serve = [
      'setpriv',
      '--reuid=guard',
      '--regid=guard',
      '--init-groups',
      '--',
      '/usr/bin/guard-server',
      'serve',
      '--listen',
      `127.0.0.1:${port}`,
      '--metrics-listen',
      `127.0.0.1:${metricsPort}`,
    ];
    server = c.spawn(['sh', '-c', 'cd /; echo $$ > /run/guard-server-test.pid; exec "$@"', 'sh', ...serve]);
    await waitFor(() => server?.output().includes('Next:\n') ?? false, 'the start message', 60_000).catch((e) =>
      assert.fail(`${e.message}\n${server?.output()}`),
    );
    await new Promise((ok) => setTimeout(ok, 300)); // the rest of the message
    message = server.output();
  });
  after(async () => {
    if (server) {
      c.exec(['sh', '-c', 'kill -TERM "$(cat /run/guard-server-test.pid)"']);
      await server.exited;
    }
    c?.remove();
    if (tmp) await rm(tmp, { recursive: true, force: true });
  });

  it('the postinst names only paths that exist', (t) => {
    t.diagnostic(postinst);
    for (const path of pathsIn(postinst)) assert.ok(c.exists(path), `${path} (from the postinst's output) is missing`);
  });

  it('the start message names the package’s data directory and paths that exist', (t) => {
    t.diagnostic(message);
    assert.match(message, /^ {2}data dir: +\/var\/lib\/guard-server$/m);
    assert.match(message, /^ {2}create a tenant: .* setup --data-dir \/var\/lib\/guard-server --json( {3}\(.*\))?$/m);
    assert.doesNotMatch(message, /\.\/data|npm |packages\//);
    const paths = pathsIn(message);
    assert.ok(paths.includes('/var/lib/guard-server/guard.db'), paths.join(' '));
    for (const path of paths) assert.ok(c.exists(path), `${path} (from the start message) is missing`);
  });

  it('every URL it prints answers', async () => {
    const urls = [...new Set(message.match(/https?:\/\/[^\s),"]+/g) ?? [])];
    assert.ok(urls.length >= 6, urls.join(' '));
    const hasConsole = c.exists('/usr/lib/guard-server/console/index.html');
    for (const url of urls) {
      const res = await fetch(url);
      await res.arrayBuffer();
      const want = url.endsWith('/console/') && !hasConsole ? 503 : 200;
      assert.equal(res.status, want, `GET ${url}`);
    }
    assert.ok(urls.includes(`http://127.0.0.1:${metricsPort}/metrics`), urls.join(' '));
  });

  it('the docs it names are installed', () => {
    const docs = /^ {2}docs: +(.+)$/m.exec(message)?.[1];
    assert.equal(docs, 'man guard-server');
    assert.match(c.must(['sh', '-c', 'man -w guard-server']), /\/usr\/share\/man\/man1\/guard-server\.1\.gz/);
  });

  it('its commands are on PATH and work as printed: setup, then enroll, collect and upload', (t) => {
    const next = nextCommands(message);
    const all = Object.values(next).flat();
    assert.ok(all.length >= 4, JSON.stringify(next));
    for (const command of all) {
      const program = command.split(' ').find((w) => !['runuser', '-u', 'guard', '--'].includes(w));
      assert.ok(program, command);
      assert.equal(c.exec(['sh', '-c', `command -v ${quote(program)}`]).code, 0, `${program} is not on PATH`);
    }

    // setup, exactly as printed, from root's shell: the files it writes stay the guard user's.
    const [setupCommand] = next['create a tenant'];
    const setup = c.exec(['sh', '-c', setupCommand]);
    assert.equal(setup.code, 0, `${setupCommand}\n${setup.out}`);
    const tenant = JSON.parse(setup.stdout);
    assert.match(tenant.enroll_token, /^get_/);
    assert.equal(c.must(['find', '/var/lib/guard-server', '!', '-user', 'guard']).trim(), '');
    // Its note: as guard itself (the container image runs as guard), the same without runuser.
    assert.match(message, /--json {3}\(as root; as guard itself, without runuser\)$/m);
    const asGuard = c.exec([
      ...['setpriv', '--reuid=guard', '--regid=guard', '--init-groups', '--', 'sh', '-c'],
      setupCommand.replace(/^runuser -u guard -- /, ''),
    ]);
    assert.equal(asGuard.code, 0, asGuard.out);
    assert.notEqual(JSON.parse(asGuard.stdout).tenant_id, tenant.tenant_id);
    assert.equal(c.must(['find', '/var/lib/guard-server', '!', '-user', 'guard']).trim(), '');

    const [enrollCommand] = next['enroll an agent'];
    assert.ok(enrollCommand.endsWith(' --token-file FILE'), enrollCommand);
    c.sh(`umask 077; printf %s ${quote(tenant.enroll_token)} > /root/enroll-token`);
    const enroll = c.exec(['sh', '-c', enrollCommand.replace(/ FILE$/, ' /root/enroll-token')]);
    assert.equal(enroll.code, 0, `${enrollCommand}\n${enroll.out}`);
    assert.ok(c.exists('/var/lib/guard/enrollment.json'));

    const [collectCommand, uploadCommand] = next['collect, upload'];
    const collect = c.exec(['sh', '-c', collectCommand]);
    assert.equal(collect.code, 0, `${collectCommand}\n${collect.out}`);
    const bundle = collect.stdout.trim().split('\n').at(-1) ?? '';
    assert.match(bundle, /^\/var\/lib\/guard\/support\/\d+\.tar\.zst$/);
    assert.ok(uploadCommand.endsWith(' BUNDLE'), uploadCommand);
    const upload = c.exec(['sh', '-c', uploadCommand.replace(/ BUNDLE$/, ` ${quote(bundle)}`)]);
    assert.equal(upload.code, 0, `${uploadCommand}\n${upload.out}`);
    t.diagnostic(upload.stdout.trim());
  });
});
