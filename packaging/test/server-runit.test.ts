// guard-server from its .deb on a host without systemd (issue 23): the runit recipe of
// docs/install.md ("Without systemd"), taken from the page itself and run as it stands in a
// throw-away Debian 12 container (container.ts) with Debian's runit installed inside. The
// server must come up as its unit would run it (the guard user, no capability, no_new_privs,
// umask 0077, 65536 files), log through svlogd, come back after SIGKILL and stop cleanly.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { waitFor } from '../../packages/agent/test/upload-harness.ts';
import { freePort } from '../../packages/server/test/loopback.ts';
import { ROOT } from '../build/paths.ts';
import { ensureServerDeb } from '../build/server-deb.ts';
import { Container } from './container.ts';
import { dpkgInstall } from './dpkg.ts';

const HOST = '/host';
const SV = '/etc/sv/guard-server';
const LOG = '/var/log/guard-server/current';

/** The shell block that follows the recipe's marker in docs/install.md. */
function recipe(): string {
  const page = readFileSync(join(ROOT, 'docs', 'install.md'), 'utf8');
  const m = /<!-- recipe: guard-server runit[^>]*-->\n```sh\n([\s\S]*?)\n```/.exec(page);
  assert.ok(m, 'docs/install.md has no guard-server runit recipe block');
  return m[1];
}

describe('guard-server .deb under runit, as docs/install.md says, in a container without systemd', () => {
  let tmp: string;
  let c: Container;
  let runsv: ReturnType<Container['spawn']> | undefined;
  let url: string;

  const log = () => c.exec(['cat', LOG]).out;
  const pid = (): number | undefined => {
    const m = /^run: [^:]+: \(pid (\d+)\)/.exec(c.exec(['sv', 'status', SV]).out);
    return m ? Number(m[1]) : undefined;
  };
  const ready = () =>
    waitFor(
      () =>
        fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        ),
      'guard-server to be ready',
      60_000,
    ).catch((e) => assert.fail(`${e.message}\n--- ${LOG} ---\n${log()}\n--- runsv ---\n${runsv?.output()}`));

  before(async () => {
    tmp = await mkdtemp(join(os.tmpdir(), 'guard-server-runit-test-'));
    const deb = await ensureServerDeb('test');
    await copyFile(deb, join(tmp, basename(deb)));
    c = await Container.start('server-runit', { [tmp]: HOST });
    dpkgInstall(c, `${HOST}/${basename(deb)}`);
    c.sh('apt-get update -q >/dev/null && apt-get install -y -q --no-install-recommends runit >/dev/null');
    // The operator's one edit here: this host's network is the container's, so not 8080 and 9464.
    const [port, metrics] = [await freePort(), await freePort()];
    url = `http://127.0.0.1:${port}`;
    c.sh(
      `sed -i -e 's/^listen: .*/listen: 127.0.0.1:${port}/' -e 's/^metrics_listen: .*/metrics_listen: 127.0.0.1:${metrics}/' /etc/guard/server.yaml`,
    );
  });
  after(() => {
    runsv?.child.kill('SIGKILL');
    c?.remove();
    if (tmp) return rm(tmp, { recursive: true, force: true });
  });

  it('the recipe installs, runsv starts the server, and it answers', async () => {
    c.must(['sh', '-e', '-c', recipe()]);
    assert.equal(c.stat(`${SV}/run`).mode, 0o755);
    runsv = c.spawn(['runsv', SV]);
    await ready();
    await waitFor(() => /is listening on/.test(log()), 'the start message in the log', 10_000);
    // The start message, as the package prints it: setup as the server's user on its data dir.
    assert.match(log(), /runuser -u guard -- guard-server setup --data-dir \/var\/lib\/guard-server --json/);
  });

  it('runs as the unit does: guard, no capability, no_new_privs, umask 0077, 65536 files', () => {
    const p = pid();
    assert.ok(p, c.exec(['sv', 'status', SV]).out);
    const status = c.readFile(`/proc/${p}/status`);
    const field = (name: string) => new RegExp(`^${name}:\\s+(.+)$`, 'm').exec(status)?.[1].trim() ?? '';
    const guard = c.must(['id', '-u', 'guard']).trim();
    assert.equal(field('Uid').split(/\s+/)[0], guard);
    for (const name of ['CapBnd', 'CapPrm', 'CapEff', 'CapInh', 'CapAmb'])
      assert.equal(BigInt(`0x${field(name)}`), 0n, name);
    assert.equal(field('NoNewPrivs'), '1');
    assert.equal(field('Umask'), '0077');
    // 65536, or the container's hard limit where it is lower (podman grants no CAP_SYS_RESOURCE).
    const hard = /^Max open files\s+\S+\s+(\d+)/m.exec(c.readFile('/proc/1/limits'))?.[1];
    const want = Math.min(65536, Number(hard));
    assert.match(c.readFile(`/proc/${p}/limits`), new RegExp(`^Max open files\\s+${want}\\s+${want}\\s`, 'm'));
    assert.deepEqual(c.stat('/var/cache/guard-server'), { mode: 0o750, user: 'guard', group: 'guard' });
  });

  it('killed with SIGKILL, runsv starts it again', async () => {
    const before = pid();
    c.must(['sh', '-c', 'kill -KILL "$1"', 'sh', String(before)]);
    await waitFor(() => (pid() ?? before) !== before, 'a new server process', 20_000);
    await ready();
  });

  it('`sv down` stops it gracefully (its shutdown logged, the port closed) and it stays down', async () => {
    const p = pid();
    const down = c.exec(['sv', '-w', '60', 'down', SV]);
    assert.equal(down.code, 0, `${down.out}\n${log()}`);
    assert.match(c.exec(['sv', 'status', SV]).out, /^down: /);
    assert.ok(!c.exists(`/proc/${p}`));
    assert.match(log(), /"msg":"shutting down"/);
    await assert.rejects(fetch(`${url}/readyz`));
  });
});
