// The compose files at the root (DESIGN §8, issue 23) run with podman-compose, as an operator
// runs them, each copied into a temporary project directory with what its comments ask for
// (secrets/, tls/). Only what this machine cannot fetch is replaced, by an override file beside
// it, as compose's `-f a.yaml -f b.yaml` allows: PostgreSQL and MinIO come from a registry
// here unreachable, so the scale-out test gives their services stand-ins — Debian's own
// PostgreSQL (the host's /usr mounted read-only into the tests' Debian root file system) and
// s3rver (an S3 API on the image's Node; it checks no signatures, so it proves the wiring, not
// S3's security) — with the same service names, ports, secrets and volumes. The image's health
// check is switched off (`test: [NONE]`): podman runs it from a systemd timer, and these
// machines run no systemd.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, copyFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../packages/server/test/loopback.ts';
import { independentlyVerified, makeTestTls, SIGNAL } from '../../packages/server/test/webhook-harness.ts';
import { ROOT } from '../build/paths.ts';
import { dropLeftoverPortForwards, ensureTestImage, podman } from './container.ts';
import { loadedServerImage, waitReady } from './image.ts';

interface Project {
  dir: string;
  name: string;
  files: string[];
  env: NodeJS.ProcessEnv;
}

let podmanPath: string;

function compose(p: Project, args: string[], timeoutMs = 300_000) {
  const r = spawnSync(
    'podman-compose',
    ['--podman-path', podmanPath, '-p', p.name, ...p.files.flatMap((f) => ['-f', f]), ...args],
    { cwd: p.dir, env: { ...process.env, ...p.env }, encoding: 'utf8', timeout: timeoutMs, maxBuffer: 64 << 20 },
  );
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ?? ''}`, stdout: r.stdout ?? '' };
}

function mustCompose(p: Project, args: string[]): string {
  const r = compose(p, args);
  assert.equal(r.code, 0, `podman-compose ${args.join(' ')} failed:\n${r.out}`);
  return r.stdout;
}

/** `podman-compose exec SERVICE guard-server setup --json`: its JSON (podman-compose prints its own lines around it). */
function setupThrough(p: Project, service: string): Record<string, string> {
  const out = mustCompose(p, ['exec', '-T', service, 'guard-server', 'setup', '--json']);
  const line = out.split('\n').find((l) => l.startsWith('{"tenant_id"'));
  assert.ok(line, `no setup JSON in:\n${out}`);
  return JSON.parse(line);
}

const logsOf = (p: Project, service: string) => () => compose(p, ['logs', service]).out;

async function project(tag: string, file: string, override: string, env: NodeJS.ProcessEnv): Promise<Project> {
  const dir = await mkdtemp(join(os.tmpdir(), `guard-compose-${tag}-`));
  await chmod(dir, 0o755);
  await copyFile(join(ROOT, file), join(dir, file));
  await writeFile(join(dir, 'compose.test.yaml'), override);
  return { dir, name: `guard-test-${tag}-${process.pid}`, files: [file, 'compose.test.yaml'], env };
}

describe('the compose files', { timeout: 20 * 60_000 }, () => {
  const projects: Project[] = [];
  before(async () => {
    ({ podmanPath } = await loadedServerImage());
  });
  after(async () => {
    for (const p of projects) {
      compose(p, ['down', '-v', '-t', '0']);
      podman(['network', 'rm', '-f', `${p.name}_default`]);
      dropLeftoverPortForwards(p.name);
      await rm(p.dir, { recursive: true, force: true });
    }
  });

  it('compose.yaml: the embedded default up in one command, setup through exec, data in its volume', async (t) => {
    const port = await freePort();
    const p = await project(
      'embedded',
      'compose.yaml',
      'services:\n  guard:\n    healthcheck:\n      test: ["NONE"]\n',
      {
        GUARD_PORT: String(port),
        GUARD_PUBLIC_URL: `http://localhost:${port}`,
      },
    );
    projects.push(p);
    const t0 = Date.now();
    mustCompose(p, ['up', '-d']);
    const ms = Date.now() - t0 + (await waitReady(`http://127.0.0.1:${port}/readyz`, 60_000, logsOf(p, 'guard')));
    t.diagnostic(`compose up to /readyz 200 in ${ms} ms`);
    const setup = setupThrough(p, 'guard');
    const me = await fetch(`http://127.0.0.1:${port}/v1/webhooks/endpoints`, {
      headers: { authorization: `Bearer ${setup.admin_token}` },
    });
    assert.equal(me.status, 200);
    // The published console page is served, and its links use the public URL.
    assert.equal((await fetch(`http://127.0.0.1:${port}/console/`)).status, 200);
    mustCompose(p, ['down']);
    mustCompose(p, ['up', '-d']);
    await waitReady(`http://127.0.0.1:${port}/readyz`, 60_000, logsOf(p, 'guard'));
    const again = await fetch(`http://127.0.0.1:${port}/v1/webhooks/endpoints`, {
      headers: { authorization: `Bearer ${setup.admin_token}` },
    });
    assert.equal(again.status, 200, 'the tenant outlives down and up: it is in the volume');
  });

  it('compose.scale.yaml: migrate once, two replicas on PostgreSQL and an S3 store, native TLS, one master key', async (t) => {
    const rootfs = await ensureTestImage();
    const [port1, port2] = [await freePort(), await freePort()];
    const tls = await makeTestTls(['receiver']);
    const override = `# Stand-ins for the images this machine cannot pull (see the test's header).
services:
  postgres:
    image: ${rootfs}
    volumes:
      - /usr:/usr:ro
    environment:
      PGDATA: /var/lib/postgresql/data
    command:
      - /bin/sh
      - -c
      - |
        set -e
        bin=$$(ls -d /usr/lib/postgresql/*/bin | tail -n 1)
        mkdir -p "$$PGDATA" && chown -R nobody:nogroup /var/lib/postgresql && chmod 0700 "$$PGDATA"
        exec setpriv --reuid=nobody --regid=nogroup --clear-groups /bin/sh -c "
          set -e
          if [ ! -s \\"$$PGDATA/PG_VERSION\\" ]; then
            $$bin/initdb -D \\"$$PGDATA\\" -U guard --pwfile=/run/secrets/postgres_password --auth=scram-sha-256 >/dev/null
            echo 'host all all 0.0.0.0/0 scram-sha-256' >> \\"$$PGDATA/pg_hba.conf\\"
            echo 'CREATE DATABASE guard;' | $$bin/postgres --single -D \\"$$PGDATA\\" postgres >/dev/null
          fi
          exec $$bin/postgres -D \\"$$PGDATA\\" -c listen_addresses=* -k /tmp"
  minio:
    image: localhost/guard-server:\${GUARD_VERSION:-0.1.0}
    healthcheck:
      test: ["NONE"]
    volumes:
      - ${join(ROOT, 'node_modules')}:/opt/node_modules:ro
    entrypoint: ["/usr/lib/guard-server/node", "/opt/node_modules/s3rver/bin/s3rver.js"]
    command: ["-d", "/var/lib/guard-server", "-a", "0.0.0.0", "-p", "9000", "--no-vhost-buckets", "--configure-bucket", "guard-bundles"]
  create-bucket:
    image: localhost/guard-server:\${GUARD_VERSION:-0.1.0}
    healthcheck:
      test: ["NONE"]
    entrypoint: ["/bin/sh", "-c"]
    command: ["exit 0"]
  # A webhook receiver on the compose network (the test's own, not a stand-in).
  receiver:
    image: localhost/guard-server:\${GUARD_VERSION:-0.1.0}
    healthcheck:
      test: ["NONE"]
    volumes:
      - ./receiver.mjs:/opt/receiver.mjs:ro
      - ./tls:/etc/guard/tls:ro
    entrypoint: ["/usr/lib/guard-server/node", "/opt/receiver.mjs"]
    command: []
  migrate:
    healthcheck:
      test: ["NONE"]
  guard-1:
    healthcheck:
      test: ["NONE"]
    environment: &trust-receiver
      NODE_EXTRA_CA_CERTS: /etc/guard/tls/ca.pem
      GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE: "true"
  guard-2:
    healthcheck:
      test: ["NONE"]
    environment: *trust-receiver
`;
    const p = await project('scale', 'compose.scale.yaml', override, {
      GUARD_PORT_1: String(port1),
      GUARD_PORT_2: String(port2),
      GUARD_PUBLIC_URL: `https://localhost:${port1}`,
      // s3rver takes its own fixed key (and checks no signature with it).
      MINIO_ROOT_USER: 'S3RVER',
      MINIO_ROOT_PASSWORD: 'S3RVER',
    });
    projects.push(p);
    // What the file's comments ask for: secrets/ and tls/, readable by the image's user.
    for (const d of ['secrets', 'tls']) await mkdir(join(p.dir, d), { mode: 0o755 });
    const secret = async (path: string, text: string) => writeFile(join(p.dir, path), text, { mode: 0o644 });
    await secret('secrets/master.key', `${randomBytes(32).toString('base64')}\n`);
    await secret('secrets/postgres_password', `${randomBytes(24).toString('hex')}\n`);
    await secret('tls/fullchain.pem', tls.cert);
    await secret('tls/privkey.pem', tls.key);
    await secret('tls/ca.pem', tls.caPem);
    await secret('receiver.mjs', RECEIVER);

    const t0 = Date.now();
    mustCompose(p, ['up', '-d']);
    const ready = async (port: number, service: string) =>
      waitReadyTls(`https://127.0.0.1:${port}/readyz`, tls.caPem, 120_000, logsOf(p, service));
    const body = await ready(port1, 'guard-1');
    await ready(port2, 'guard-2');
    t.diagnostic(`compose up to both replicas ready in ${Date.now() - t0} ms`);
    assert.deepEqual(JSON.parse(body).checks, { database: { status: 'ok' }, object_store: { status: 'ok' } });

    const migrate = podman(['inspect', '--format', '{{.State.ExitCode}}', `${p.name}_migrate_1`]);
    assert.equal(migrate.stdout.trim(), '0', `the migrate step exits 0\n${logsOf(p, 'migrate')()}`);

    // A tenant and an endpoint made through replica 1; replica 1 then stops, so replica 2
    // delivers: it opens the endpoint's secret, sealed by replica 1, with the same master key.
    const setup = setupThrough(p, 'guard-1');
    const created = await requestTls(port1, tls.caPem, 'POST', '/v1/webhooks/endpoints', setup.admin_token, {
      name: 'made on replica 1',
      url: 'https://receiver:8443/hook',
    });
    assert.equal(created.status, 201, created.text);
    const endpoint = JSON.parse(created.text);
    mustCompose(p, ['stop', 'guard-1']);
    const enrolled = await requestTls(port2, tls.caPem, 'POST', '/v1/agents/enroll', undefined, {
      token: setup.enroll_token,
      hostname: 'web-01.example',
      environment: 'production',
      agent_version: '0.1.0',
    });
    assert.equal(enrolled.status, 201, enrolled.text);
    const signal = await requestTls(port2, tls.caPem, 'POST', '/v1/signals', JSON.parse(enrolled.text).api_key, SIGNAL);
    assert.equal(signal.status, 201, signal.text);
    const deadline = Date.now() + 60_000;
    let hit: { headers: Record<string, string>; body: string } | undefined;
    while (!hit && Date.now() < deadline) {
      const line = compose(p, ['logs', 'receiver'])
        .out.split('\n')
        .find((l) => l.startsWith('{"headers"'));
      if (line) hit = JSON.parse(line);
      else await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(hit, `no delivery reached the receiver\n${logsOf(p, 'guard-2')()}`);
    assert.ok(
      independentlyVerified(Buffer.from(hit.body), hit.headers['guard-signature'], endpoint.secret),
      'replica 2 signed with the secret replica 1 sealed',
    );
    assert.equal(JSON.parse(hit.body).data.signal_id, JSON.parse(signal.text).signal_id);
  });
});

/** The receiver service: HTTPS on 8443 with the test's certificate; prints each request as one JSON line. */
const RECEIVER = `import https from 'node:https';
import { readFileSync } from 'node:fs';
const tls = { cert: readFileSync('/etc/guard/tls/fullchain.pem'), key: readFileSync('/etc/guard/tls/privkey.pem') };
https.createServer(tls, (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    console.log(JSON.stringify({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }));
    res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
  });
}).listen(8443, '0.0.0.0', () => console.log('receiver listening on 8443'));
`;

function requestTls(
  port: number,
  ca: string,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<{ status: number; text: string }> {
  return new Promise((ok, fail) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        method,
        path,
        ca,
        timeout: 5000,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => {
          text += c;
        });
        res.on('end', () => ok({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', fail);
    req.end(body ? JSON.stringify(body) : undefined);
  });
}

/** waitReady over HTTPS with the test CA; returns the 200 body. */
async function waitReadyTls(url: string, ca: string, timeoutMs: number, logs: () => string): Promise<string> {
  const { port, pathname } = new URL(url);
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    try {
      const r = await requestTls(Number(port), ca, 'GET', pathname);
      if (r.status === 200) return r.text;
      last = `HTTP ${r.status}: ${r.text}`;
    } catch (error) {
      last = String(error);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`${url} never answered 200 in ${timeoutMs} ms (last: ${last})\n${logs()}`);
}
