// The server image (DESIGN §8, issue 23) run as an operator runs it: the archive build:image
// writes, loaded with `podman load`, started with `podman run` (host network: this VM's podman,
// DESIGN §9). It declares what the contract says, takes `setup --json` through its entrypoint,
// answers /readyz and its own health check, delivers a signed webhook to a receiver outside the
// container, stops cleanly on SIGTERM within the grace period and keeps its data across a new
// container on the same volume.

import assert from 'node:assert/strict';
import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { api, enrollAgent, type Loose } from '../../packages/server/test/harness.ts';
import { freePort } from '../../packages/server/test/loopback.ts';
import { independentlyVerified, makeTestTls, Receiver, SIGNAL } from '../../packages/server/test/webhook-harness.ts';
import { IMAGE_UID } from '../build/image.ts';
import { nodeVersion, releaseVersion } from '../build/paths.ts';
import { mustPodman, OWNER_LABEL, podman } from './container.ts';
import { loadedServerImage, waitReady } from './image.ts';

const OWNER = `${OWNER_LABEL}=${process.pid}`;

describe('the server image', { timeout: 15 * 60_000 }, () => {
  let image: Awaited<ReturnType<typeof loadedServerImage>>;
  let dir: string;
  const volume = `guard-test-data-${process.pid}`;
  const containers: string[] = [];

  before(async () => {
    image = await loadedServerImage();
    dir = await mkdtemp(join(os.tmpdir(), 'guard-image-'));
    await chmod(dir, 0o755); // the CA file is read by the image's user
  });
  after(async () => {
    for (const c of containers) podman(['rm', '-f', '-t', '0', c]);
    podman(['volume', 'rm', '-f', volume]);
    await rm(dir, { recursive: true, force: true });
  });

  it('declares the contract: non-root, guard-server as entrypoint, serve on 0.0.0.0:8080, the volume, the health check, OCI labels', (t) => {
    const [info] = JSON.parse(mustPodman(['image', 'inspect', image.name])) as Loose[];
    const config = info.Config;
    assert.equal(config.User, `${IMAGE_UID}:${IMAGE_UID}`);
    assert.deepEqual(config.Entrypoint, ['/usr/bin/guard-server']);
    assert.deepEqual(config.Cmd, ['serve']);
    assert.ok(config.Env.includes('GUARD_SERVER_LISTEN=0.0.0.0:8080'));
    assert.ok(config.Env.includes('GUARD_SERVER_DATA_DIR=/var/lib/guard-server'));
    assert.deepEqual(Object.keys(config.Volumes), ['/var/lib/guard-server']);
    assert.deepEqual(info.Healthcheck.Test, [
      'CMD',
      '/usr/lib/guard-server/node',
      '/usr/lib/guard-server/healthcheck.mjs',
    ]);
    assert.equal(config.Labels['org.opencontainers.image.version'], releaseVersion());
    assert.equal(config.Labels['org.opencontainers.image.licenses'], 'Apache-2.0');
    assert.match(config.Labels['org.opencontainers.image.source'], /^https:\/\//);
    assert.match(config.Labels['org.opencontainers.image.revision'], /^[0-9a-f]{40}$/);
    assert.equal(`sha256:${info.Id}`, image.id);

    assert.equal(
      mustPodman(['run', '--rm', '--no-healthcheck', image.name, '--version']).trim(),
      `guard-server ${releaseVersion()}`,
    );
    const node = mustPodman([
      'run',
      '--rm',
      '--no-healthcheck',
      '--entrypoint',
      '/usr/lib/guard-server/node',
      image.name,
      '-p',
      'process.version + " " + process.getuid()',
    ]);
    assert.equal(node.trim(), `v${nodeVersion()} ${IMAGE_UID}`);
    t.diagnostic(
      `image ${image.name}: ${(info.Size / 1e6).toFixed(1)} MB, ${info.RootFS.Layers.length} layers; Debian packages ${image.debianPackages.map((p) => `${p.name} ${p.version}`).join(', ')}`,
    );
  });

  it('setup --json through the entrypoint, then serves, delivers a signed webhook out of the container, stops on SIGTERM, keeps its data', async (t) => {
    const setup = JSON.parse(
      mustPodman([
        'run',
        '--rm',
        '--no-healthcheck',
        '--label',
        OWNER,
        '-v',
        `${volume}:/var/lib/guard-server`,
        image.name,
        'setup',
        '--json',
      ]),
    ) as Loose;
    assert.match(setup.admin_token, /^gut_/);
    assert.match(setup.enroll_token, /^get_/);

    const tls = await makeTestTls();
    const caFile = join(dir, 'ca.pem');
    await writeFile(caFile, tls.caPem, { mode: 0o644 });
    const receiver = await Receiver.start(tls);
    t.after(() => receiver.close());

    const port = await freePort();
    const metricsPort = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const start = (name: string) => {
      containers.push(name);
      const t0 = Date.now();
      mustPodman([
        'run',
        '-d',
        '--name',
        name,
        '--label',
        OWNER,
        '--network',
        'host',
        '--no-healthcheck',
        '-v',
        `${volume}:/var/lib/guard-server`,
        '-v',
        `${caFile}:/run/guard/ca.pem:ro`,
        '-e',
        `GUARD_SERVER_LISTEN=127.0.0.1:${port}`,
        '-e',
        `GUARD_SERVER_METRICS_LISTEN=127.0.0.1:${metricsPort}`,
        '-e',
        'GUARD_SERVER_WEBHOOK_ALLOW_PRIVATE=true',
        '-e',
        'NODE_EXTRA_CA_CERTS=/run/guard/ca.pem',
        image.name,
      ]);
      return t0;
    };
    const logs = (name: string) => () => podman(['logs', name]).out;

    const first = `guard-test-image-${process.pid}-1`;
    const t0 = start(first);
    const coldMs = Date.now() - t0 + (await waitReady(`${base}/readyz`, 60_000, logs(first)));
    t.diagnostic(`cold start: podman run to /readyz 200 in ${coldMs} ms`);
    assert.match(
      logs(first)(),
      /create a tenant: {3}docker exec CONTAINER guard-server setup --data-dir \/var\/lib\/guard-server --json/,
    );

    // The health check the image declares, run as the engine runs it.
    const [info] = JSON.parse(mustPodman(['image', 'inspect', image.name])) as Loose[];
    const health = podman(['exec', first, ...info.Healthcheck.Test.slice(1)]);
    assert.equal(health.code, 0, health.out);
    assert.match(health.out, /\/readyz 200/);

    const created = await api(base, 'POST', '/v1/webhooks/endpoints', {
      token: setup.admin_token,
      body: { name: 'outside the container', url: `https://127.0.0.1:${receiver.port}/hook` },
    });
    assert.equal(created.status, 201, created.text);
    const endpoint = created.json as Loose;
    const agent = await enrollAgent(base, setup.enroll_token, { hostname: 'web-01.example' });
    const signal = await api(base, 'POST', '/v1/signals', {
      token: agent.api_key,
      body: SIGNAL,
    });
    assert.equal(signal.status, 201, signal.text);
    const deadline = Date.now() + 30_000;
    while (!receiver.hits.some((h) => h.path === '/hook') && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    const hit = receiver.hits.find((h) => h.path === '/hook');
    assert.ok(hit, `no delivery reached the receiver outside the container\n${logs(first)()}`);
    assert.ok(
      independentlyVerified(hit.body, hit.headers['guard-signature'] as string, endpoint.secret),
      'Guard-Signature verifies',
    );
    assert.equal(JSON.parse(hit.body.toString()).data.signal_id, signal.json.signal_id);

    // SIGTERM (podman stop) within the grace period: exit 0, not the SIGKILL after it.
    const stopAt = Date.now();
    mustPodman(['stop', '-t', '60', first], 90_000);
    const stopMs = Date.now() - stopAt;
    assert.equal(mustPodman(['inspect', '--format', '{{.State.ExitCode}}', first]).trim(), '0', logs(first)());
    assert.match(logs(first)(), /"signal":"SIGTERM".*shutting down/);
    assert.ok(stopMs < 60_000, `stopped after ${stopMs} ms, past the grace period`);
    t.diagnostic(`SIGTERM to exit 0 in ${stopMs} ms`);

    // A new container on the same volume: the tenant, its endpoint and the delivery are there.
    const second = `guard-test-image-${process.pid}-2`;
    start(second);
    await waitReady(`${base}/readyz`, 60_000, logs(second));
    const endpoints = await api(base, 'GET', '/v1/webhooks/endpoints', { token: setup.admin_token });
    assert.equal(endpoints.status, 200, endpoints.text);
    assert.deepEqual(
      (endpoints.json.endpoints as Loose[]).map((e) => e.id),
      [endpoint.id],
    );
    const deliveries = await api(base, 'GET', `/v1/webhooks/endpoints/${endpoint.id}/deliveries`, {
      token: setup.admin_token,
    });
    assert.equal((deliveries.json.deliveries as Loose[])[0]?.status, 'succeeded', deliveries.text);
    const owner = podman([
      'exec',
      second,
      '/usr/lib/guard-server/node',
      '-p',
      'require("fs").statSync("/var/lib/guard-server/guard.db").uid',
    ]);
    assert.equal(owner.stdout.trim(), String(IMAGE_UID), "the data is the image user's");
    mustPodman(['stop', '-t', '60', second], 90_000);
  });
});
