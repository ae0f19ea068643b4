// @guard/webhooks as customers get it (issue 13): the packed tarball (npm pack), checked by
// publint and @arethetypeswrong/cli, its declarations compiled by TypeScript 5.0, its
// WebCrypto entry free of node: imports, then installed with npm into throw-away Express
// (CommonJS), Fastify (ES modules), Hono (the WebCrypto entry) and Next.js-style route-handler
// projects, each of which receives and verifies a real delivery from guard-server over HTTPS
// and refuses a forged one. Express runs on the system's Node 20 too (the package's engines).
// The README's own install command is run verbatim in an empty project beside the tarball.
//
// The frameworks are installed from the npm registry once into node_modules/.cache
// (keyed by the consumers' package list); each run installs the fresh tarball over them.

import assert from 'node:assert/strict';
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { basename, join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { freePort, makeTestTls, type TestTls } from '../../packages/server/test/loopback.ts';
import {
  createEndpoint,
  createSignal,
  listDeliveries,
  newTenant,
  startWebhookServer,
  type Tenant,
  type WebhookServer,
} from '../../packages/server/test/webhook-harness.ts';
import { sign } from '../../packages/webhooks/src/index.ts';
import { ROOT, releaseVersion } from '../build/paths.ts';
import { packageFiles, WEBHOOKS_STAGE } from '../build/webhooks-package.ts';
import { webhooksPackage } from './artefacts.ts';

const CONSUMERS = join(ROOT, 'packaging', 'webhooks', 'consumers');
const CACHE = join(ROOT, 'node_modules', '.cache', 'guard-sdk-consumers');
/** What the throw-away projects install from the registry (TypeScript 5.0: the oldest the declarations support). */
const REGISTRY_DEPS: Record<string, string> = {
  express: '5.3.0',
  fastify: '5.12.8',
  hono: '4.13.19',
  '@hono/node-server': '1.19.19',
  typescript: '5.0.4',
};
const SYSTEM_NODE = '/usr/bin/node';

interface Run {
  code: number | null;
  out: string;
}

function run(cmd: string, args: string[], cwd: string): Run {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', env: { ...process.env, npm_config_loglevel: 'error' } });
  return { code: r.status, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ?? ''}` };
}

function npm(args: string[], cwd: string): void {
  const r = run('npm', ['--no-audit', '--no-fund', ...args], cwd);
  assert.equal(r.code, 0, `npm ${args.join(' ')}:\n${r.out}`);
}

let tarball: string;

before(async () => {
  tarball = await webhooksPackage();
  const key = createHash('sha256').update(JSON.stringify(REGISTRY_DEPS)).digest('hex');
  const stamp = join(CACHE, '.deps-key');
  if (!existsSync(stamp) || (await readFile(stamp, 'utf8')) !== key) {
    await rm(CACHE, { recursive: true, force: true });
    await mkdir(CACHE, { recursive: true });
    await writeFile(
      join(CACHE, 'package.json'),
      JSON.stringify({ name: 'guard-sdk-consumers', private: true, dependencies: REGISTRY_DEPS }, null, 2),
    );
    npm(['install'], CACHE);
    await writeFile(stamp, key);
  }
  // The tarball as a customer installs it; --no-save keeps the cached project's manifest as it is.
  npm(['install', '--no-save', tarball], CACHE);
  await rm(join(CACHE, 'projects'), { recursive: true, force: true });
  await cp(CONSUMERS, join(CACHE, 'projects'), { recursive: true });
});

describe('the packed package', () => {
  it('holds the ESM and CommonJS builds with declarations for both, the README and the licence', async () => {
    const files = await packageFiles();
    for (const entry of ['index', 'web', 'envelope', 'public-api'])
      for (const format of ['esm', 'cjs'])
        for (const ext of ['js', 'd.ts'])
          assert.ok(files.includes(`dist/${format}/${entry}.${ext}`), `${format}/${entry}.${ext}`);
    assert.ok(files.includes('README.md') && files.includes('LICENSE'));
    const manifest = JSON.parse(await readFile(join(WEBHOOKS_STAGE, 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies, undefined, 'no runtime dependencies');
    assert.equal(manifest.engines.node, '>=20');
    assert.deepEqual(Object.keys(manifest.exports['.']), ['import', 'require']);
  });

  it('publint finds nothing (strict)', () => {
    const r = run(join(ROOT, 'node_modules', '.bin', 'publint'), ['run', WEBHOOKS_STAGE, '--strict'], ROOT);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /All good!/);
  });

  it('@arethetypeswrong/cli finds no problem under node10, node16 (CJS and ESM) and bundler', () => {
    const r = run(join(ROOT, 'node_modules', '.bin', 'attw'), [tarball, '--format', 'json'], ROOT);
    const report = JSON.parse(r.out.slice(r.out.indexOf('{')));
    assert.deepEqual(report.analysis?.problems ?? report.problems ?? [], [], r.out);
    assert.equal(r.code, 0, r.out);
  });

  it('no node: module is reachable from the WebCrypto entry (ESM and CommonJS)', async () => {
    for (const format of ['esm', 'cjs']) {
      const seen = new Set<string>();
      const visit = async (file: string): Promise<void> => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = await readFile(join(WEBHOOKS_STAGE, 'dist', format, file), 'utf8');
        for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]([^'"]+)['"]/g)) {
          assert.ok(m[1].startsWith('./'), `dist/${format}/${file} imports ${m[1]}`);
          await visit(m[1].slice(2));
        }
      };
      await visit('web.js');
      assert.ok(seen.has('envelope.js') && !seen.has('index.js'), [...seen].join(' '));
    }
  });

  it('its declarations compile under TypeScript 5.0 (node16 ESM and CJS, bundler, node10; no @types/node, no DOM)', async () => {
    const dir = join(CACHE, 'projects', 'types');
    const tsc = join(CACHE, 'node_modules', 'typescript', 'bin', 'tsc');
    const common = { noEmit: true, strict: true, target: 'es2022', lib: ['es2022'], types: [], skipLibCheck: false };
    const runs: [string, Record<string, unknown>, string[]][] = [
      ['node16', { module: 'node16', moduleResolution: 'node16' }, ['esm.mts', 'cjs.cts']],
      ['bundler', { module: 'esnext', moduleResolution: 'bundler' }, ['bundler.ts']],
      ['node10', { module: 'commonjs', moduleResolution: 'node' }, ['bundler.ts']],
    ];
    assert.match(run(process.execPath, [tsc, '--version'], dir).out, /^Version 5\.0\./);
    for (const [name, options, files] of runs) {
      const config = join(dir, `tsconfig.${name}.json`);
      await writeFile(config, JSON.stringify({ compilerOptions: { ...common, ...options }, files }));
      const r = run(process.execPath, [tsc, '-p', config], dir);
      assert.equal(r.code, 0, `TypeScript 5.0, ${name}:\n${r.out}`);
    }
  });
});

describe('installed as its README says', () => {
  it('`npm install ./guard-webhooks-<v>.tgz` in a project holding the tarball: recorded as a file: dependency, importable and requirable', async () => {
    const readme = await readFile(join(ROOT, 'packages', 'webhooks', 'README.md'), 'utf8');
    const line = /^npm install (\.\/guard-webhooks-(\S+)\.tgz)$/m.exec(readme);
    assert.ok(line, 'the README gives the tarball’s install command');
    assert.equal(line[2], releaseVersion(), 'the README names this release’s tarball');
    const project = await mkdtemp(join(os.tmpdir(), 'guard-sdk-readme-'));
    try {
      await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'receiver', private: true }));
      await copyFile(tarball, join(project, basename(tarball)));
      assert.equal(basename(tarball), line[1].slice(2));
      const r = spawnSync('sh', ['-c', line[0]], {
        cwd: project,
        encoding: 'utf8',
        env: {
          ...process.env,
          npm_config_cache: join(project, '.npm'),
          npm_config_audit: 'false',
          npm_config_fund: 'false',
        },
      });
      assert.equal(r.status, 0, `${line[0]}:\n${r.stdout}${r.stderr}`);
      const manifest = JSON.parse(await readFile(join(project, 'package.json'), 'utf8'));
      assert.equal(manifest.dependencies['@guard/webhooks'], `file:${basename(tarball)}`);
      const check = run(
        process.execPath,
        [
          '-e',
          "import('@guard/webhooks').then((m) => console.log(typeof m.constructEvent, typeof require('@guard/webhooks').constructEvent, require('@guard/webhooks/package.json').version))",
        ],
        project,
      );
      assert.equal(check.out.trim(), `function function ${releaseVersion()}`, check.out);
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });
});

interface Consumer {
  name: string;
  node: string;
  child?: ChildProcess;
  port: number;
  secret?: string;
  lines: Record<string, unknown>[];
}

describe('receivers built on the installed package verify a real delivery from guard-server', () => {
  let tls: TestTls;
  let server: WebhookServer;
  let tenant: Tenant;
  const consumers: Consumer[] = [
    { name: 'express-cjs', node: process.execPath, port: 0, lines: [] },
    { name: 'express-cjs', node: SYSTEM_NODE, port: 0, lines: [] },
    { name: 'fastify-esm', node: process.execPath, port: 0, lines: [] },
    { name: 'hono', node: process.execPath, port: 0, lines: [] },
    { name: 'next-route', node: process.execPath, port: 0, lines: [] },
  ];
  const label = (c: Consumer) => `${c.name} on ${c.node === SYSTEM_NODE ? 'the system Node' : 'Node 24'}`;

  before(async () => {
    assert.ok(existsSync(SYSTEM_NODE), `${SYSTEM_NODE} (Node 20, Debian's machine default) is missing`);
    tls = await makeTestTls();
    server = await startWebhookServer({ caPem: tls.caPem });
    tenant = await newTenant(server);
    for (const c of consumers) {
      c.port = await freePort();
      const endpoint = await createEndpoint(server, tenant.adminToken, {
        name: label(c),
        url: `https://localhost:${c.port}/guard/webhook`,
      });
      c.secret = endpoint.secret;
      const child = spawn(c.node, ['server.js'], {
        cwd: join(CACHE, 'projects', c.name),
        env: {
          PATH: process.env.PATH,
          PORT: String(c.port),
          GUARD_WEBHOOK_SECRET: c.secret,
          TLS_KEY: tls.key,
          TLS_CERT: tls.cert,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      c.child = child;
      let buffered = '';
      let errors = '';
      child.stdout?.on('data', (d) => {
        buffered += d;
        for (let i = buffered.indexOf('\n'); i >= 0; i = buffered.indexOf('\n')) {
          const line = buffered.slice(0, i);
          buffered = buffered.slice(i + 1);
          if (line.startsWith('{')) c.lines.push(JSON.parse(line));
        }
      });
      child.stderr?.on('data', (d) => {
        errors += d;
      });
      await waitUntil(
        () => c.lines.some((l) => l.listening),
        `${label(c)} to listen`,
        () => errors,
      );
    }
  });
  after(async () => {
    for (const c of consumers) c.child?.kill();
    await server?.close();
  });

  it('one signal: every receiver verifies its delivery, and guard-server records each as succeeded', async () => {
    const { signal_id } = await createSignal(server, tenant.agentKey);
    for (const c of consumers)
      await waitUntil(
        () => c.lines.some((l) => l.ok === true && l.signal_id === signal_id),
        `${label(c)} to verify it`,
      );
    for (const c of consumers) {
      const endpoint = (await apiEndpoints(server, tenant)).find((e) => e.name === label(c));
      assert.ok(endpoint, `no endpoint named ${label(c)}`);
      const deliveries = await listDeliveries(server, tenant.adminToken, endpoint.id);
      assert.equal(deliveries[0].status, 'succeeded', `${label(c)}: ${JSON.stringify(deliveries[0])}`);
    }
  });

  it('a forged delivery is refused with 400 signature_mismatch; a rotation list with the right entry last is accepted', async () => {
    const body = JSON.stringify({
      event_type: 'signal_created',
      version: 'v1',
      timestamp: new Date().toISOString(),
      tenant_id: tenant.tenantId,
      data: {
        signal_id: 'sig_forged',
        signal_type: 'sudo_command_executed',
        severity: 5,
        description: 'forged',
        server_id: 'srv',
        server_name: 'h',
        identity_id: 'i',
        identity_name: 'n',
        environment: 'production',
        created_at: new Date().toISOString(),
      },
      console_url: 'https://guard.invalid/console/signals/sig_forged',
    });
    for (const c of consumers) {
      const forged = await post(c.port, body, sign(body, 'whsec_not_the_secret'), tls.caPem);
      assert.equal(forged, 400, `${label(c)} answered ${forged} to a forged signature`);
      const rotation = `${sign(body, 'whsec_the_new_secret')}, ${sign(body, c.secret as string)}`;
      const accepted = await post(c.port, body, rotation, tls.caPem);
      assert.equal(accepted, 204, `${label(c)} answered ${accepted} to a rotation list`);
    }
  });
});

async function apiEndpoints(server: WebhookServer, tenant: Tenant): Promise<{ id: string; name: string }[]> {
  const res = await fetch(`${server.url}/v1/webhooks/endpoints`, {
    headers: { authorization: `Bearer ${tenant.adminToken}` },
  });
  const json = (await res.json()) as { endpoints: { id: string; name: string }[] };
  return json.endpoints;
}

/** POSTs a signed body over HTTPS to a receiver (trusting only the test CA); returns the status. */
async function post(port: number, body: string, signature: string, caPem: string): Promise<number> {
  const https = await import('node:https');
  return new Promise((ok, fail) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path: '/guard/webhook',
        method: 'POST',
        ca: caPem,
        headers: {
          'content-type': 'application/json',
          'guard-signature': signature,
          'guard-event': 'signal_created',
          'guard-delivery': '6f1c1c3e-1111-4c2b-9c55-000000000000',
          'guard-timestamp': String(Math.floor(Date.now() / 1000)),
        },
      },
      (res) => {
        res.resume();
        res.on('end', () => ok(res.statusCode ?? 0));
      },
    );
    req.on('error', fail);
    req.end(body);
  });
}

async function waitUntil(cond: () => boolean, what: string, detail: () => string = () => '', timeoutMs = 20_000) {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}\n${detail()}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
