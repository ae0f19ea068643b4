// `npm run demo`: the whole bundle round trip on this machine, with the real binaries.
// Starts guard-server on a fresh data dir (loopback, a free port), creates a tenant with
// `guard-server setup --json`, enrolls a copy of the sample agent home, collects a bundle,
// uploads it, and shows it from the support side (listed, downloaded, bytes compared).

import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const agentBin = join(root, 'packages/agent/bin/guard-agent');
const serverBin = join(root, 'packages/server/bin/guard-server');
const work = mkdtempSync(join(tmpdir(), 'guard-demo-'));
const dataDir = join(work, 'data');
const home = join(work, 'agent-home');
let server: ChildProcess | undefined;

const t0 = performance.now();
function step(title: string): void {
  console.log(`\n▶ ${title}   [${((performance.now() - t0) / 1000).toFixed(1)} s]`);
}

function run(bin: string, args: string[], input?: string): string {
  const r = spawnSync(bin, args, { encoding: 'utf8', input, cwd: work, stdio: ['pipe', 'pipe', 'pipe'] });
  if (r.status !== 0)
    throw new Error(
      `${bin.split('/').pop()} ${args.join(' ')} exited ${r.status ?? r.signal ?? r.error?.message}:\n${r.stderr}`,
    );
  return r.stdout;
}

async function startServer(): Promise<string> {
  server = spawn(serverBin, ['--data-dir', dataDir, '--listen', '127.0.0.1:0', '--log-level', 'warn'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  return new Promise((resolve, reject) => {
    server?.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(stderr);
      if (m) resolve(m[1]);
    });
    server?.on('exit', (code) => reject(new Error(`guard-server exited ${code}: ${stderr}`)));
  });
}

try {
  step('guard-server on a fresh data dir');
  const url = await startServer();
  console.log(`  listening on ${url} (data dir ${dataDir})`);

  step('guard-server setup --json  (a tenant, its admin, an enrolment token, the support account)');
  const setup = JSON.parse(run(serverBin, ['setup', '--data-dir', dataDir, '--json']));
  console.log(`  tenant ${setup.tenant_id}, admin ${setup.admin_email}`);

  step('guard-agent enroll --url … --token -');
  cpSync(join(root, 'examples/agent-home'), home, { recursive: true });
  rmSync(join(home, 'state/support'), { recursive: true, force: true });
  writeFileSync(
    join(home, 'agent.yaml'),
    readFileSync(join(home, 'agent.yaml'), 'utf8').replace(/^(tenant_id|agent_id|api_key):.*\n/gm, ''),
  );
  const config = ['--config', join(home, 'agent.yaml')];
  process.stdout.write(`  ${run(agentBin, [...config, 'enroll', '--url', url, '--token', '-'], setup.enroll_token)}`);

  step('guard-agent support-bundle collect');
  const bundle = run(agentBin, [...config, 'support-bundle', 'collect']).trim();
  console.log(`  ${bundle}`);

  step('guard-agent support-bundle upload');
  const uploaded = run(agentBin, [...config, 'support-bundle', 'upload', bundle]);
  process.stdout.write(uploaded.replace(/^/gm, '  '));
  const bundleId = /^bundle_id=(.+)$/m.exec(uploaded)?.[1];

  step('support staff: list, show and download (each read is audited)');
  const auth = { authorization: `Bearer ${setup.support_token}` };
  const list = (await (await fetch(`${url}/v1/support/bundles`, { headers: auth })).json()) as {
    bundles: { bundle_id: string; hostname: string; size: number }[];
  };
  for (const b of list.bundles) console.log(`  ${b.bundle_id}  host=${b.hostname}  ${b.size} bytes`);
  const shown = (await (await fetch(`${url}/v1/support/bundles/${bundleId}`, { headers: auth })).json()) as {
    manifest: { redaction: { values_masked: number }; contents: unknown[] };
  };
  console.log(
    `  manifest: ${shown.manifest.contents.length} members, ${shown.manifest.redaction.values_masked} values masked`,
  );
  const downloaded = Buffer.from(
    await (await fetch(`${url}/v1/support/bundles/${bundleId}/download`, { headers: auth })).arrayBuffer(),
  );
  const same =
    createHash('sha256').update(downloaded).digest('hex') ===
    createHash('sha256').update(readFileSync(bundle)).digest('hex');
  console.log(
    `  downloaded ${downloaded.length} bytes: ${same ? 'identical to the local bundle ✔' : 'DIFFERENT from the local bundle ✘'}`,
  );
  if (!same) process.exitCode = 1;
  console.log(`\nDone. API reference of that server: ${url}/docs (stopped now; \`npm start\` runs one on ./data).`);
} catch (error) {
  console.error(`\ndemo failed: ${(error as Error).message}`);
  process.exitCode = 1;
} finally {
  server?.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
