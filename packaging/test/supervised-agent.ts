// What the agent's recipes for hosts without systemd (packaging/agent/runit/, supervisor/)
// must keep of its unit, checked on the running daemon inside a test container.

import assert from 'node:assert/strict';
import type { Container } from './container.ts';

/** CAP_DAC_READ_SEARCH (2), CAP_PERFMON (38), CAP_BPF (39): the unit's CapabilityBoundingSet=. */
const UNIT_CAPS = (1n << 2n) | (1n << 38n) | (1n << 39n);

/**
 * The daemon `pid` runs as guard-agent.service runs it: its command line, root with only the
 * unit's capabilities, none inheritable or ambient, no_new_privs, umask 0077, nice 10, idle I/O.
 */
export function assertRunsAsUnit(c: Container, pid: number): void {
  const cmdline = c.readFile(`/proc/${pid}/cmdline`).split('\0').filter(Boolean);
  assert.deepEqual(cmdline, ['/usr/bin/guard-agent', '--config', '/etc/guard/agent.yaml', 'daemon']);
  const status = c.readFile(`/proc/${pid}/status`);
  const field = (name: string) => new RegExp(`^${name}:\\s+(\\S+)`, 'm').exec(status)?.[1] ?? '';
  assert.equal(field('Uid'), '0');
  // The container's own bounding set lacks the three (podman's defaults): what is left of the
  // unit's set there, and nothing else of the container's (chown, setuid, net_bind_service…).
  const containerBnd = BigInt(`0x${/^CapBnd:\s+(\S+)/m.exec(c.readFile('/proc/1/status'))?.[1]}`);
  assert.ok(containerBnd !== 0n);
  for (const name of ['CapBnd', 'CapPrm', 'CapEff'])
    assert.equal(BigInt(`0x${field(name)}`), containerBnd & UNIT_CAPS, `${name}\n${status}`);
  assert.equal(BigInt(`0x${field('CapInh')}`), 0n);
  assert.equal(BigInt(`0x${field('CapAmb')}`), 0n);
  assert.equal(field('NoNewPrivs'), '1');
  assert.equal(field('Umask'), '0077');
  // /proc/PID/stat: the 19th field is the nice value (after the parenthesised command name).
  const stat = c.readFile(`/proc/${pid}/stat`);
  assert.equal(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16], '10');
  assert.match(c.must(['ionice', '-p', String(pid)]), /^idle/);
}
