// Loopback test support without dependencies (used by the server's test harnesses and by
// bench/): a free TCP port, and throw-away TLS material from the openssl CLI — a fresh CA and a
// leaf certificate for localhost, so nothing that expires or a private key is checked in.

import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const execFileP = promisify(execFile);

/**
 * A port free now, for a server to listen on. Closed again, so another listen(0) may take it:
 * a URL that must stay unreachable is refusedUrl's.
 */
export async function freePort(): Promise<number> {
  const srv = net.createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const port = (srv.address() as net.AddressInfo).port;
  await new Promise((r) => srv.close(r));
  return port;
}

/**
 * A URL on 127.0.0.1 where a connection is refused, and stays refused: its port is
 * above the kernel's ephemeral range, where no listen(0) of a test (nor a client socket) lands.
 * A port a test server closed is free for the next one to take, mid-test.
 */
export async function refusedUrl(scheme: 'http' | 'https' = 'http'): Promise<string> {
  const range = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  const low = (range[1] ?? 60999) + 1;
  for (let tries = 0; tries < 20; tries++) {
    const port = low + Math.floor(Math.random() * (65536 - low));
    const refused = await new Promise<boolean>((done) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        done(false);
      });
      socket.once('error', (error: NodeJS.ErrnoException) => done(error.code === 'ECONNREFUSED'));
    });
    if (refused) return `${scheme}://127.0.0.1:${port}`;
  }
  throw new Error(`no refused port found above ${low - 1}`);
}

export interface TestTls {
  /** PEM of the CA that signed `cert`; hand it to the server as a delivery CA. */
  caPem: string;
  /** Leaf key and certificate for DNS:localhost, IP:127.0.0.1 and IP:::1. */
  key: string;
  cert: string;
}

/**
 * A fresh CA and a leaf certificate for localhost/127.0.0.1/::1 (and `dnsNames`, e.g. a compose
 * service's name), valid for two days.
 */
export function makeTestTls(dnsNames: string[] = []): Promise<TestTls> {
  return newCaAndLeaf({
    ca: { subject: '/CN=Guard webhook test CA', days: 2 },
    leaf: {
      subject: '/CN=localhost',
      days: 2,
      extensions: [
        `subjectAltName=${['DNS:localhost', ...dnsNames.map((n) => `DNS:${n}`), 'IP:127.0.0.1', 'IP:::1'].join(',')}`,
        'basicConstraints=critical,CA:FALSE',
        'keyUsage=critical,digitalSignature',
        'extendedKeyUsage=serverAuth',
      ],
    },
  });
}

/** A CA of its own and a client certificate (mTLS) it signed, valid for `days`. */
export function makeClientCertificate(cn: string, days = 30): Promise<TestTls> {
  return newCaAndLeaf({
    ca: { subject: '/CN=Receiver client CA', days: 60 },
    leaf: {
      subject: `/O=Guard/CN=${cn}`,
      days,
      extensions: ['basicConstraints=critical,CA:FALSE', 'extendedKeyUsage=clientAuth'],
    },
  });
}

/** A new EC P-256 CA and one leaf it signed, made with the openssl CLI in a temp dir removed after. */
async function newCaAndLeaf(spec: {
  ca: { subject: string; days: number };
  leaf: { subject: string; days: number; extensions: string[] };
}): Promise<TestTls> {
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-test-tls-'));
  try {
    const p = (name: string) => join(dir, name);
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
    await execFileP('openssl', [
      ...['req', '-x509', ...ec, '-keyout', p('ca.key'), '-out', p('ca.pem')],
      ...['-days', String(spec.ca.days), '-subj', spec.ca.subject],
      ...['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ]);
    await execFileP('openssl', [
      'req',
      ...ec,
      '-keyout',
      p('leaf.key'),
      '-out',
      p('leaf.csr'),
      '-subj',
      spec.leaf.subject,
    ]);
    await writeFile(p('leaf.ext'), `${spec.leaf.extensions.join('\n')}\n`);
    await execFileP('openssl', [
      ...['x509', '-req', '-in', p('leaf.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial'],
      ...['-out', p('leaf.pem'), '-days', String(spec.leaf.days), '-extfile', p('leaf.ext')],
    ]);
    const [caPem, key, cert] = await Promise.all(['ca.pem', 'leaf.key', 'leaf.pem'].map((f) => readFile(p(f), 'utf8')));
    return { caPem, key, cert };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
