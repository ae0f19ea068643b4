// Console benchmark: `node bench/console.ts [--loads N] [--deliveries N] [--page-size N]`.
// The real bin/guard-server runs as a child process over a temp data dir, serving the built
// console (packages/console/dist, built first when stale).
//
//   (a) first load of Settings > Integrations > Webhooks, cold cache, loopback: Debian's
//       chromium (playwright-core), a fresh browser context per load (empty HTTP cache), signed
//       in by cookie; time from navigation start to the endpoints table on screen, and the JS
//       the browser transferred (compressed bytes on the wire, what the 250 KiB gzip budget
//       is about), median of N loads.
//   (b) an endpoint with 100,000 deliveries (written into the stopped server's database:
//       98 % succeeded, 1 % failed, 0.5 % retrying, 0.5 % pending): every page of the
//       deliveries list walked newest-first with the keyset cursor, unfiltered and by each
//       rare status word; time per page on one keep-alive connection over loopback (the
//       server's time plus a loopback round trip), beside the 50 ms goal.
//
// Prints the figures beside their goals (PASS/MISS). Exits 0 whatever the goals say; non-zero
// only when something fails to run.

import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { Pool } from 'undici';
import { openDatabase, type SignalTable, type WebhookDeliveryTable } from '../packages/server/src/db/index.ts';
import { ensureConsoleBuilt } from '../scripts/build-console.ts';
import { freePort, guardSetup, nowNs, spawnGuard } from './lib-tls.ts';

const JS_BUDGET_BYTES = 250 * 1024;
const PAGE_GOAL_MS = 50;
const CHROMIUM = process.env.GUARD_CHROMIUM ?? '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

const { values: args } = parseArgs({
  options: {
    loads: { type: 'string', default: '5' },
    deliveries: { type: 'string', default: '100000' },
    'page-size': { type: 'string', default: '50' },
  },
});
const LOADS = Number(args.loads);
const DELIVERIES = Number(args.deliveries);
const PAGE_SIZE = Number(args['page-size']);

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`;
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const median = (xs: number[]) => quantile(xs, 0.5);

interface SetupOut {
  tenant_id: string;
  admin_email: string;
  admin_password: string;
  admin_token: string;
}

/** Writes `n` signals, each with one delivery to `endpointId`, in batches (the server is stopped). */
async function seedDeliveries(dataDir: string, tenantId: string, endpointId: string, n: number): Promise<void> {
  const db = await openDatabase({ dataDir });
  try {
    const base = Date.parse('2026-01-01T00:00:00Z');
    const later = new Date(Date.now() + 24 * 3600_000).toISOString();
    const BATCH = 500;
    for (let start = 0; start < n; start += BATCH) {
      const signals: SignalTable[] = [];
      const deliveries: WebhookDeliveryTable[] = [];
      for (let i = start; i < Math.min(n, start + BATCH); i++) {
        const at = new Date(base + i * 1000).toISOString();
        const id = `sig_bench${String(i).padStart(8, '0')}`;
        signals.push({
          id,
          tenant_id: tenantId,
          agent_id: null,
          server_id: 'ag_bench',
          server_name: `web-${i % 40}.bench.example`,
          signal_type: 'sudo_command_executed',
          severity: 1 + (i % 5),
          description: `bench signal ${i}`,
          identity_id: `u-${i % 997}`,
          identity_name: `ops-${i % 97}`,
          environment: 'production',
          created_at: at,
          received_at: at,
          is_test: 0,
          event_type: 'signal_created',
          event_data: null,
        });
        // 1 % failed, 0.5 % retrying, 0.5 % pending, the rest succeeded.
        const r = i % 200;
        const state = r < 2 ? 'failed' : r < 3 ? 'pending' : r < 4 ? 'pending' : 'succeeded';
        const attempts = r < 2 ? 8 : r < 3 ? 2 : r < 4 ? 0 : 1;
        deliveries.push({
          id: randomUUID(),
          tenant_id: tenantId,
          signal_id: id,
          endpoint_id: endpointId,
          state: state as WebhookDeliveryTable['state'],
          attempts,
          next_attempt_at: state === 'pending' ? later : at,
          lease_until: null,
          replay_id: null,
          leased_by: null,
          last_status: attempts === 0 ? null : state === 'succeeded' ? 200 : 500,
          last_error: null,
          created_at: at,
          completed_at: state === 'succeeded' || state === 'failed' ? at : null,
        });
      }
      await db.transaction().execute(async (trx) => {
        await trx.insertInto('signals').values(signals).execute();
        await trx.insertInto('webhook_deliveries').values(deliveries).execute();
      });
    }
  } finally {
    await db.destroy();
  }
}

/** Walks every page of the list; returns the time of each page in ms and the rows seen. */
async function walkPages(pool: Pool, token: string, path: string): Promise<{ ms: number[]; rows: number }> {
  const ms: number[] = [];
  let rows = 0;
  let before: string | null = null;
  for (;;) {
    const sep = path.includes('?') ? '&' : '?';
    const url = `${path}${sep}limit=${PAGE_SIZE}${before ? `&before=${encodeURIComponent(before)}` : ''}`;
    const t0 = nowNs();
    const res = await pool.request({ path: url, method: 'GET', headers: { authorization: `Bearer ${token}` } });
    const body = (await res.body.json()) as { deliveries: unknown[]; next_before: string | null };
    ms.push(Number(nowNs() - t0) / 1e6);
    if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${JSON.stringify(body)}`);
    rows += body.deliveries.length;
    before = body.next_before;
    if (!before) return { ms, rows };
  }
}

async function firstLoads(base: string, email: string, password: string) {
  const login = await fetch(`${base}/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: base },
    body: JSON.stringify({ email, password }),
  });
  const cookie = login.headers
    .getSetCookie()
    .find((c) => c.startsWith('guard_session='))
    ?.split(';')[0];
  if (login.status !== 200 || !cookie) throw new Error(`sign-in answered ${login.status}`);
  const [name, value] = cookie.split('=');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  const loads: { toTableMs: number; jsWire: number; jsBody: number; jsFiles: number; allWire: number }[] = [];
  try {
    for (let i = 0; i < LOADS; i++) {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      await context.addCookies([{ name, value, url: base }]);
      const page = await context.newPage();
      await page.goto(`${base}/console/settings/integrations/webhooks`);
      await page.getByRole('table', { name: 'Webhook endpoints' }).waitFor();
      const m = await page.evaluate(() => {
        const resources = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
        const js = resources.filter((r) => new URL(r.name).pathname.endsWith('.js'));
        const nav = performance.getEntriesByType('navigation')[0] as PerformanceNavigationTiming;
        return {
          toTableMs: performance.now(),
          jsWire: js.reduce((s, r) => s + r.transferSize, 0),
          jsBody: js.reduce((s, r) => s + r.decodedBodySize, 0),
          jsFiles: js.length,
          allWire: nav.transferSize + resources.reduce((s, r) => s + r.transferSize, 0),
        };
      });
      loads.push(m);
      await context.close();
    }
  } finally {
    await browser.close();
  }
  return loads;
}

async function main(): Promise<void> {
  const loadAtStart = os.loadavg()[0];
  const built = await ensureConsoleBuilt();
  const dir = await mkdtemp(join(os.tmpdir(), 'guard-bench-console-'));
  const dataDir = join(dir, 'data');
  const caPath = join(dir, 'none.pem');
  await writeFile(caPath, '');
  try {
    const setup = guardSetup(dataDir) as unknown as SetupOut;
    const port = await freePort();
    // 1. The endpoint, created through the API (its secret sealed by the server).
    let guard = await spawnGuard({ dataDir, port, caPath });
    const created = await fetch(`${guard.url}/v1/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${setup.admin_token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'SIEM ingest', url: 'https://127.0.0.1:9/guard' }),
    });
    const endpoint = (await created.json()) as { id: string };
    if (created.status !== 201) throw new Error(`creating the endpoint answered ${created.status}`);
    await guard.stop();

    // 2. 100,000 deliveries written while the server is stopped.
    const seedStart = Date.now();
    await seedDeliveries(dataDir, setup.tenant_id, endpoint.id, DELIVERIES);
    const seedS = (Date.now() - seedStart) / 1000;
    guard = await spawnGuard({ dataDir, port, caPath });
    try {
      const loads = await firstLoads(guard.url, setup.admin_email, setup.admin_password);

      const pool = new Pool(guard.url, { connections: 1, pipelining: 1 });
      const list = `/v1/webhooks/endpoints/${endpoint.id}/deliveries`;
      await walkPages(pool, setup.admin_token, `${list}?status=failed`); // warm-up
      const walks = {
        all: await walkPages(pool, setup.admin_token, list),
        failed: await walkPages(pool, setup.admin_token, `${list}?status=failed`),
        retrying: await walkPages(pool, setup.admin_token, `${list}?status=retrying`),
        pending: await walkPages(pool, setup.admin_token, `${list}?status=pending`),
      };
      await pool.destroy();

      const cpus = os.cpus();
      console.log(`# console bench — ${cpus.length} × ${cpus[0]?.model ?? 'cpu'}, Node ${process.version}`);
      console.log(
        `console build: ${built}; chromium ${CHROMIUM}; seeded ${DELIVERIES} deliveries in ${seedS.toFixed(1)} s`,
      );
      console.log(
        `load average ${loadAtStart.toFixed(2)} at start, ${os.loadavg()[0].toFixed(2)} at end (wall times mean most on an idle machine)`,
      );
      console.log('');
      console.log('(a) first load of the webhooks page, cold cache, loopback (median of', LOADS, 'loads)');
      const jsWire = median(loads.map((l) => l.jsWire));
      const row = (what: string, ours: string, goal: string, pass?: boolean) =>
        console.log(
          `  ${what.padEnd(44)} ${ours.padStart(12)}   ${goal.padEnd(18)} ${pass === undefined ? '' : pass ? 'PASS' : 'MISS'}`,
        );
      row('navigation start → endpoints table shown', `${median(loads.map((l) => l.toTableMs)).toFixed(0)} ms`, '');
      row(
        'JS transferred (compressed, on the wire)',
        kib(jsWire),
        `≤ ${kib(JS_BUDGET_BYTES)} gzip`,
        jsWire <= JS_BUDGET_BYTES,
      );
      row('  ratio to the budget', `${((jsWire / JS_BUDGET_BYTES) * 100).toFixed(0)} %`, '');
      row('JS decoded (what the browser parses)', kib(median(loads.map((l) => l.jsBody))), '');
      row('JS files', String(median(loads.map((l) => l.jsFiles))), '');
      row('everything transferred (HTML, CSS, JS, API)', kib(median(loads.map((l) => l.allWire))), '');
      console.log('');
      console.log(`(b) an endpoint with ${DELIVERIES} deliveries: every page of ${PAGE_SIZE}, keyset, one connection`);
      for (const [name, w] of Object.entries(walks)) {
        const p95 = quantile(w.ms, 0.95);
        row(
          `${name === 'all' ? 'all deliveries' : `status=${name}`} (${w.ms.length} pages, ${w.rows} rows)`,
          `p50 ${median(w.ms).toFixed(1)} ms`,
          `≤ ${PAGE_GOAL_MS} ms per page`,
          p95 <= PAGE_GOAL_MS,
        );
        row('', `p95 ${p95.toFixed(1)} ms`, '');
        row('', `max ${Math.max(...w.ms).toFixed(1)} ms`, '');
        if (w.ms.length >= 20) {
          const tenth = Math.floor(w.ms.length / 10);
          row('', `first 10 %: p50 ${median(w.ms.slice(0, tenth)).toFixed(1)} ms`, '');
          row('', `last 10 %: p50 ${median(w.ms.slice(-tenth)).toFixed(1)} ms`, '');
        }
      }
    } finally {
      await guard.stop();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
