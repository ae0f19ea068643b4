// The exec probe against the real kernel: the helper built by scripts/build-exec-probe.sh is
// started, real files are executed, and the events that arrive (and those that do not) are
// checked. Skipped only where eBPF cannot run at all (not root); here it must pass.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  type ExecEvent,
  type ExecProbe,
  findExecProbeHelper,
  LineSplitter,
  parseExecProbeLine,
  startExecProbe,
} from '../src/detect/exec-probe.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const PREFIXES = ['/tmp/', '/var/tmp/', '/dev/shm/'];
const AT = new Date('2026-01-02T03:04:05.000Z');

const canRunEbpf = process.getuid?.() === 0 && existsSync('/sys/kernel/btf/vmlinux');
const skipReason = canRunEbpf ? false : 'eBPF needs root (CAP_BPF, CAP_PERFMON) and BTF at /sys/kernel/btf/vmlinux';

describe('exec probe line decoding', () => {
  const line = (fields: Record<string, unknown>) =>
    JSON.stringify({
      type: 'exec',
      pid: 10,
      ppid: 1,
      uid: 1000,
      gid: 1000,
      comm: 'x',
      filename: '/tmp/x',
      path: '/tmp/x',
      cwd: '',
      script: false,
      argv: ['/tmp/x', '-v'],
      ktime_ns: 5,
      ...fields,
    });

  it('ready line is ready', () => {
    assert.deepEqual(parseExecProbeLine('{"type":"ready"}', AT), { type: 'ready' });
  });

  it('binary event names the resolved path', () => {
    const decoded = parseExecProbeLine(line({ filename: './x', path: '/tmp/x' }), AT);
    assert.deepEqual(decoded, {
      type: 'exec',
      event: { pid: 10, ppid: 1, uid: 1000, gid: 1000, comm: 'x', filename: '/tmp/x', argv: ['/tmp/x', '-v'], at: AT },
    });
  });

  it('binary whose path could not be rebuilt names the name as given', () => {
    const decoded = parseExecProbeLine(line({ filename: '/tmp/deep/x', path: '' }), AT);
    assert.equal(decoded?.type === 'exec' && decoded.event.filename, '/tmp/deep/x');
  });

  it('script run by a relative name is joined to its working directory', () => {
    const decoded = parseExecProbeLine(
      line({ filename: './a/../s.sh', path: '/usr/bin/dash', cwd: '/tmp/', script: true }),
      AT,
    );
    assert.equal(decoded?.type === 'exec' && decoded.event.filename, '/tmp/s.sh');
  });

  it('escaped bytes survive: surrogate-escaped invalid UTF-8 and control bytes', () => {
    const decoded = parseExecProbeLine(line({ filename: '/tmp/\udcff\u0001é', path: '' }), AT);
    assert.equal(decoded?.type === 'exec' && decoded.event.filename, '/tmp/\udcff\u0001é');
  });

  it('malformed or unknown lines are skipped, never thrown', () => {
    for (const bad of [
      '',
      'not json',
      '{"type":"exec"',
      'null',
      '[]',
      '{"type":"lost","count":3}',
      line({ pid: -1 }),
      line({ pid: 1.5 }),
      line({ uid: '0' }),
      line({ argv: [1] }),
      line({ argv: 'x' }),
      line({ script: 'no' }),
      line({ filename: null }),
    ]) {
      assert.equal(parseExecProbeLine(bad, AT), undefined, bad);
    }
  });

  it('over-long lines are dropped and counted, the next line still arrives', () => {
    const lines: string[] = [];
    const splitter = new LineSplitter(8, (l) => lines.push(l));
    splitter.push(Buffer.from('abc\n0123'));
    splitter.push(Buffer.from('456789\nde'));
    splitter.push(Buffer.from('f\n'));
    assert.deepEqual(lines, ['abc', 'def']);
    assert.equal(splitter.dropped, 1);
  });
});

describe('exec probe on the real kernel', { skip: skipReason }, () => {
  let probe: ExecProbe;
  const events: ExecEvent[] = [];
  const exits: string[] = [];
  const scratch = mkdtempSync('/tmp/guard-exec-probe-test-'); // /tmp itself, whatever TMPDIR says
  const inShm = `/dev/shm/guard-exec-probe-${randomBytes(6).toString('hex')}`;
  const inTmp = join(scratch, 'true-copy');

  before(async () => {
    execFileSync('bash', [join(ROOT, 'scripts/build-exec-probe.sh')], { stdio: 'ignore' });
    copyFileSync('/bin/true', inShm);
    copyFileSync('/bin/true', inTmp);
    probe = await startExecProbe({
      prefixes: PREFIXES,
      onEvent: (e) => events.push(e),
      onExit: (reason) => exits.push(reason),
      now: () => AT,
    });
  });

  after(async () => {
    await probe?.stop();
    rmSync(inShm, { force: true });
    rmSync(scratch, { recursive: true, force: true });
  });

  /** Runs `file` and waits until an event of that pid arrives, or 20 s pass (a loaded machine). */
  async function execAndWait(file: string, args: string[], cwd?: string) {
    const child = spawnSync(file, args, { cwd });
    assert.equal(child.status, 0, `${file} failed: ${child.error?.message ?? child.stderr}`);
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const found = events.find((e) => e.pid === child.pid);
      if (found) return { pid: child.pid, event: found };
      await new Promise((r) => setTimeout(r, 20));
    }
    return { pid: child.pid, event: undefined };
  }

  it('finds the helper in the checkout', () => {
    assert.equal(findExecProbeHelper(), join(ROOT, 'packages/agent/ebpf/build/guard-exec-probe'));
    assert.ok(probe.pid !== undefined && probe.pid > 0);
  });

  it('exec of a file in /dev/shm arrives with its filename, uid, gid, pid, ppid and argv', async () => {
    const { pid, event } = await execAndWait(inShm, ['first', 'a b']);
    assert.ok(event, 'no event for the exec in /dev/shm');
    assert.deepEqual(event, {
      pid,
      ppid: process.pid,
      uid: process.getuid?.(),
      gid: process.getgid?.(),
      comm: inShm.split('/').at(-1)?.slice(0, 15),
      filename: inShm,
      argv: [inShm, 'first', 'a b'],
      at: AT,
    });
  });

  it('exec of a file in /tmp arrives, also by a relative name and through a symlink elsewhere', async () => {
    const direct = await execAndWait(inTmp, []);
    assert.equal(direct.event?.filename, inTmp);
    assert.equal(direct.event?.uid, process.getuid?.());

    const relative = await execAndWait('./true-copy', [], scratch);
    assert.equal(relative.event?.filename, inTmp);

    const link = join('/root', `.guard-exec-probe-link-${randomBytes(4).toString('hex')}`);
    symlinkSync(inTmp, link);
    try {
      const linked = await execAndWait(link, []);
      assert.equal(linked.event?.filename, inTmp);
    } finally {
      rmSync(link, { force: true });
    }
  });

  it('exec of /bin/true itself arrives not', async () => {
    const ignored = spawnSync('/bin/true');
    assert.equal(ignored.status, 0);
    // An exec in /dev/shm after it does arrive. Events come through one ring buffer, in the
    // order of the execs: had /bin/true's been sent, it would be here by now.
    assert.ok((await execAndWait(inShm, [])).event, 'no event for the exec in /dev/shm after it');
    assert.equal(
      events.find((e) => e.pid === ignored.pid),
      undefined,
    );
  });

  it('stops cleanly: stop() resolves, the helper is gone and onExit is not called', async () => {
    const pid = probe.pid as number;
    await probe.stop();
    assert.throws(() => process.kill(pid, 0), { code: 'ESRCH' });
    assert.deepEqual(exits, []);
  });
});

describe('exec probe without its helper', () => {
  it('a missing helper path gives a clear error', async () => {
    await assert.rejects(
      startExecProbe({ prefixes: PREFIXES, helperPath: '/nonexistent/guard-exec-probe', onEvent() {}, onExit() {} }),
      /exec probe helper not found or not executable: \/nonexistent\/guard-exec-probe/,
    );
  });

  it('a helper that fails before ready rejects with its reason', async () => {
    await assert.rejects(
      startExecProbe({ prefixes: PREFIXES, helperPath: '/bin/false', onEvent() {}, onExit() {} }),
      /exec probe cannot run: .*exit status 1/,
    );
  });

  it('bad prefixes are refused before anything starts', async () => {
    await assert.rejects(startExecProbe({ prefixes: ['tmp/'], onEvent() {}, onExit() {} }), /not an absolute path/);
    await assert.rejects(startExecProbe({ prefixes: [], onEvent() {}, onExit() {} }), /no prefix/);
  });
});
