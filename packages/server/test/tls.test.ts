// Native TLS (issue 11 item 5): bin/guard-server with --tls-cert/--tls-key serves HTTPS, and
// SIGHUP re-reads the pair without dropping a connection: a throw-away CA signs two leaf
// certificates; the first is served before the signal, the second to every handshake after
// it, while a keep-alive connection opened before goes on with its own. A pair that cannot be
// used is refused and the one in use stays. The real guard-agent enrols over it (it trusts the
// CA through NODE_EXTRA_CA_CERTS), and refuses plain http:// to anything but loopback.

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { once } from 'node:events';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import tls from 'node:tls';
import { promisify } from 'node:util';
import {
  freePort,
  makeTempDir,
  SERVER_BIN,
  SERVER_DIR,
  type SpawnedServer,
  setupCli,
  stopSpawned,
  waitFor,
} from './harness.ts';
import { makeTestTls, type TestTls } from './loopback.ts';
import { databaseArgs } from './test-database.ts';

const execFileP = promisify(execFile);
const AGENT_BIN = resolve(SERVER_DIR, '..', 'agent', 'bin', 'guard-agent');

/** The SHA-256 fingerprint of the certificate a fresh TLS handshake with `port` gets. */
async function servedFingerprint(port: number, ca: string[]): Promise<string> {
  const socket = tls.connect({ host: '127.0.0.1', port, ca, servername: 'localhost' });
  await once(socket, 'secureConnect');
  const fingerprint = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
  socket.destroy();
  return fingerprint;
}

function fingerprint(pem: string): string {
  return new X509Certificate(pem).fingerprint256;
}

/** One request over `agent`; says whether it reused a connection, which one, and the certificate of a new one. */
function get(port: number, path: string, agent: https.Agent) {
  return new Promise<{ status: number; reused: boolean; socket: tls.TLSSocket; peer: string; body: string }>(
    (ok, ko) => {
      const req = https.get({ host: '127.0.0.1', port, path, agent, servername: 'localhost' }, (res) => {
        const socket = res.socket as tls.TLSSocket;
        const peer = socket.getPeerX509Certificate()?.fingerprint256 ?? '';
        let body = '';
        res.on('data', (c: Buffer) => {
          body += c.toString();
        });
        res.on('end', () =>
          ok({
            status: res.statusCode ?? 0,
            reused: req.reusedSocket,
            socket,
            peer,
            body,
          }),
        );
      });
      req.on('error', ko);
    },
  );
}

async function spawnTlsServer(dataDir: string, port: number, cert: string, key: string, ca: string[]) {
  const child = spawn(
    SERVER_BIN,
    [
      '--data-dir',
      dataDir,
      '--listen',
      `127.0.0.1:${port}`,
      '--metrics-listen',
      '',
      '--tls-cert',
      cert,
      '--tls-key',
      key,
      '--keep-alive-timeout',
      '600',
      // The run's engine, as setupCli uses it (on PostgreSQL: the data dir's database).
      ...(await databaseArgs(dataDir)),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  child.stderr?.on('data', (c: Buffer) => {
    out += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  const probe = new https.Agent({ ca });
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`guard-server exited:\n${out}`);
      return get(port, '/healthz', probe).then(
        (r) => r.status === 200,
        () => false,
      );
    },
    'guard-server to answer https /healthz',
    20_000,
  );
  probe.destroy();
  const server: SpawnedServer = { child, url: `https://127.0.0.1:${port}`, port, output: () => out, exited };
  return server;
}

describe('native TLS, reloaded on SIGHUP', () => {
  let dir: string;
  let first: TestTls;
  let second: TestTls;
  let server: SpawnedServer;
  let certPath: string;
  let keyPath: string;
  let ca: string[];
  let port: number;

  before(async () => {
    dir = await makeTempDir('tls');
    [first, second] = await Promise.all([makeTestTls(), makeTestTls()]);
    ca = [first.caPem, second.caPem];
    certPath = join(dir, 'tls', 'cert.pem');
    keyPath = join(dir, 'tls', 'key.pem');
    await mkdir(join(dir, 'tls'));
    await writeFile(certPath, first.cert);
    await writeFile(keyPath, first.key, { mode: 0o600 });
    port = await freePort();
    server = await spawnTlsServer(join(dir, 'data'), port, certPath, keyPath, ca);
  });
  after(async () => {
    if (server) await stopSpawned(server);
    await rm(dir, { recursive: true, force: true });
  });

  it('serves HTTPS with the configured certificate; the banner and the public URL say https', async () => {
    assert.equal(await servedFingerprint(port, ca), fingerprint(first.cert));
    // /healthz can answer before the banner's line reaches this process's pipe: wait for it.
    const banner = new RegExp(`listening on https://127\\.0\\.0\\.1:${port}`);
    await waitFor(() => banner.test(server.output()), 'the start banner', 20_000).catch(() => {});
    assert.match(server.output(), banner);
    const plain = await fetch(`http://127.0.0.1:${port}/healthz`).then(
      (r) => r.status,
      () => 'refused',
    );
    assert.notEqual(plain, 200, 'plain HTTP was answered on the TLS port');
  });

  it('SIGHUP serves the new certificate to new connections; an open keep-alive connection survives', async () => {
    const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1, ca });
    const before = await get(port, '/healthz', keepAlive);
    assert.equal(before.status, 200);
    assert.equal(before.peer, fingerprint(first.cert));

    await writeFile(certPath, second.cert);
    await writeFile(keyPath, second.key);
    server.child.kill('SIGHUP');
    await waitFor(() => server.output().includes('TLS certificate reloaded'), 'the reload to be logged');
    assert.equal(await servedFingerprint(port, ca), fingerprint(second.cert), 'a new handshake got the old one');

    const after = await get(port, '/readyz', keepAlive);
    assert.equal(after.status, 200, after.body);
    assert.equal(after.reused, true, 'the keep-alive connection was dropped by the reload');
    assert.equal(after.socket, before.socket, 'not the connection opened before the reload');
    assert.equal(server.child.exitCode, null);
    keepAlive.destroy();
  });

  it('a pair that cannot be used is refused: the server keeps serving the one in use', async () => {
    await writeFile(certPath, first.cert); // the key file still holds the second key: not a pair
    server.child.kill('SIGHUP');
    await waitFor(() => server.output().includes('TLS reload failed'), 'the failed reload to be logged');
    assert.equal(await servedFingerprint(port, ca), fingerprint(second.cert));
    await writeFile(certPath, 'not a certificate');
    server.child.kill('SIGHUP');
    await waitFor(() => server.output().split('TLS reload failed').length > 2, 'the second failed reload to be logged');
    assert.equal(await servedFingerprint(port, ca), fingerprint(second.cert));
    assert.equal(server.child.exitCode, null, 'a bad reload stopped the server');
    await writeFile(certPath, second.cert);
  });

  it('the real guard-agent enrols over HTTPS when it trusts the CA, and not when it does not', async () => {
    const home = join(dir, 'agent');
    await mkdir(home);
    const config = join(home, 'agent.yaml');
    await writeFile(config, `log_path: ${join(home, 'agent.log')}\nstate_dir: ${join(home, 'state')}\n`);
    await writeFile(join(home, 'agent.log'), 'level=INFO msg=hello\n');
    const setup = await setupCli(join(dir, 'data'));
    await writeFile(join(home, 'token'), `${setup.enroll_token}\n`);
    await writeFile(join(home, 'ca.pem'), ca.join(''));
    const args = [
      '--config',
      config,
      'enroll',
      '--url',
      `https://localhost:${port}`,
      '--token-file',
      join(home, 'token'),
    ];
    const env = { PATH: process.env.PATH ?? '', HOME: home };
    const untrusted = await execFileP(AGENT_BIN, args, { env }).then(
      () => 'enrolled',
      (e: { code: number; stderr: string }) => `${e.code} ${e.stderr}`,
    );
    assert.match(untrusted, /^1 .*(certificate|self.signed|issuer)/is);
    const trusted = await execFileP(AGENT_BIN, args, { env: { ...env, NODE_EXTRA_CA_CERTS: join(home, 'ca.pem') } });
    assert.match(trusted.stdout + trusted.stderr, /enrolled|agent_id|ag_/i);
    const enrollment = JSON.parse(await readFile(join(home, 'state', 'enrollment.json'), 'utf8'));
    assert.equal(enrollment.base_url, `https://localhost:${port}`);
    // Plain http:// to an address that is not loopback is refused before any connection.
    const plain = await execFileP(AGENT_BIN, [...args.slice(0, 4), 'http://192.0.2.1:8080', ...args.slice(5)], {
      env,
    }).then(
      () => 'enrolled',
      (e: { code: number; stderr: string }) => `${e.code} ${e.stderr}`,
    );
    assert.match(plain, /plain http:\/\/ is allowed only to a loopback address/);
  });
});

describe('TLS settings', () => {
  it('--tls-cert without --tls-key is a usage error naming both', async () => {
    const r = await execFileP(SERVER_BIN, ['--tls-cert', '/nonexistent.pem']).then(
      () => ({ code: 0, stderr: '' }),
      (e: { code: number; stderr: string }) => e,
    );
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--tls-cert .* and --tls-key .* are given together/);
  });

  it('an unreadable certificate file stops serve with exit 1 and the path', async () => {
    const dir = await makeTempDir('tls-missing');
    try {
      const r = await execFileP(SERVER_BIN, [
        '--data-dir',
        join(dir, 'data'),
        '--listen',
        '127.0.0.1:0',
        '--metrics-listen',
        '',
        '--tls-cert',
        join(dir, 'missing.pem'),
        '--tls-key',
        join(dir, 'missing.key'),
      ]).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => e,
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr, /missing\.(pem|key)/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
