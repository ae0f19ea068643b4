// Browser tests of the console: the real guard-server on loopback (real SQLite, the delivery
// worker, the built console served at /console/), Debian's chromium driven by playwright-core
// (nothing downloaded), and a local HTTPS receiver. Tests read like a person's steps: pages
// are driven by role and label, never by CSS selectors.
//
// Every page a test reaches goes through `checkPage`: axe-core finds no serious or critical
// accessibility violation, the page threw no error and broke no Content-Security-Policy
// rule, and with GUARD_CONSOLE_SCREENSHOTS=1 (npm run screenshots:console) its screenshot is
// written to docs/console/.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import axe from 'axe-core';
import { type Browser, type BrowserContext, chromium, type Locator, type Page } from 'playwright-core';
import { ensureConsoleBuilt } from '../../../scripts/build-console.ts';
import { runSetup, type SetupResult } from '../../server/src/setup.ts';
import { enrollAgent, freePort } from '../../server/test/harness.ts';
import {
  makeTestTls,
  Receiver,
  startWebhookServer,
  type TestTls,
  type WebhookServer,
} from '../../server/test/webhook-harness.ts';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const SCREENSHOT_DIR = join(REPO, 'docs', 'console');
const SCREENSHOTS = process.env.GUARD_CONSOLE_SCREENSHOTS === '1';

export const CHROMIUM = process.env.GUARD_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export const WIDE = { width: 1280, height: 800 };
export const NARROW = { width: 390, height: 844 };

export interface ConsoleWorld {
  server: WebhookServer;
  /**
   * http://127.0.0.1:<port> (or http://localhost:<port>, see startConsoleWorld): the server's
   * public URL, which the console is served under.
   */
  base: string;
  tls: TestTls;
  receiver: Receiver;
  browser: Browser;
  /** The first tenant: its admin's password, an enrolled agent. */
  tenant: SetupResult & { agentKey: string; agentId: string; hostname: string };
  support: { email: string; password: string; token: string };
  close(): Promise<void>;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
}

/**
 * A server with one tenant (admin + enrolled agent) and the support account, a receiver, chromium.
 * `localhost`: the public URL is http://localhost:<port> (WebAuthn refuses an IP address as its
 * relying party id), the server still listening on 127.0.0.1 only.
 */
export async function startConsoleWorld(options: { localhost?: boolean } = {}): Promise<ConsoleWorld> {
  await ensureConsoleBuilt();
  const tls = await makeTestTls();
  const port = options.localhost ? await freePort() : undefined;
  const flags = port ? { listen: `127.0.0.1:${port}`, 'public-url': `http://localhost:${port}` } : undefined;
  const [server, receiver, browser] = await Promise.all([
    startWebhookServer({ caPem: tls.caPem, flags }),
    Receiver.start(tls),
    launchChromium(),
  ]);
  const setup = await runSetup(server.deps.db, server.clock.now, { tenantName: 'Acme Robotics' });
  const hostname = 'web-01.acme.example';
  const agent = await enrollAgent(server.url, setup.enroll_token, { hostname, environment: 'production' });
  assert.ok(setup.support_email && setup.support_password && setup.support_token);
  return {
    server,
    base: server.url,
    tls,
    receiver,
    browser,
    tenant: { ...setup, agentKey: agent.api_key, agentId: agent.agent_id, hostname },
    support: { email: setup.support_email, password: setup.support_password, token: setup.support_token },
    async close() {
      await browser.close();
      await receiver.close();
      await server.close();
    },
  };
}

// ---------------------------------------------------------------------------------------
// Pages

interface PageProblems {
  errors: string[];
}
const problems = new WeakMap<Page, PageProblems>();

/** A fresh browser profile (its own cookies) at `viewport`, with clipboard access. */
export async function newContext(
  world: Pick<ConsoleWorld, 'browser' | 'base'>,
  viewport = WIDE,
): Promise<BrowserContext> {
  const context = await world.browser.newContext({ viewport, baseURL: world.base });
  // Layout shifts not caused by input (data arriving, fonts, late chunks), summed per page
  // load: the Cumulative Layout Shift that checkPage holds under 0.1.
  await context.addInitScript(() => {
    const w = window as unknown as { __guardShift: number; __guardShifts: string[] };
    w.__guardShift = 0;
    w.__guardShifts = [];
    type Shift = { value: number; hadRecentInput: boolean; startTime: number; sources?: { node?: Node }[] };
    new PerformanceObserver((list) => {
      for (const e of list.getEntries() as unknown as Shift[])
        if (!e.hadRecentInput) {
          w.__guardShift += e.value;
          // What moved, for GUARD_CONSOLE_DEBUG: the shifted nodes' tags, ids and first words.
          const moved = (e.sources ?? []).map((s) => {
            const el = s.node as HTMLElement | undefined;
            return `${el?.tagName ?? '?'}${el?.id ? `#${el.id}` : ''} "${(el?.textContent ?? '').slice(0, 30)}"`;
          });
          w.__guardShifts.push(`${e.value.toFixed(4)} at ${Math.round(e.startTime)} ms: ${moved.join('; ')}`);
        }
    }).observe({ type: 'layout-shift', buffered: true });
  });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: world.base });
  return context;
}

/** A page that records uncaught errors, console errors and CSP violations for checkPage. */
export async function newPage(context: BrowserContext): Promise<Page> {
  const page = await context.newPage();
  // Playwright's own default: a loaded machine may be slow to render, and the wait ends as soon as it can.
  page.setDefaultTimeout(30_000);
  const p: PageProblems = { errors: [] };
  problems.set(page, p);
  page.on('pageerror', (e) => p.errors.push(`uncaught: ${e.message}`));
  if (process.env.GUARD_CONSOLE_DEBUG)
    page.on('response', (r) => console.error(`${r.status()} ${r.request().method()} ${r.url()}`));
  page.on('console', (m) => {
    // A failed request (a 401 while signed out, a 403 a test provokes) is logged by Chromium
    // as a console error; those are the tests' own doing. Anything else is a fault.
    if (m.type() === 'error' && !/Failed to load resource/.test(m.text())) p.errors.push(`console: ${m.text()}`);
  });
  return page;
}

/** Opens `path` under /console/. */
export async function open(page: Page, path: string): Promise<void> {
  await page.goto(`/console${path}`);
}

export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
}

/** Waits until no skeleton or busy region is left (the data arrived). */
export async function settled(page: Page): Promise<void> {
  await page.waitForFunction(() => document.querySelector('[aria-busy="true"]') === null, undefined, {
    timeout: 30_000,
  });
}

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/** axe-core's serious and critical violations on the page as it is now. */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  // Evaluated through DevTools, not injected as a <script>: the console's CSP forbids inline code.
  await page.evaluate(axe.source);
  const results = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the evaluated source defined
    const run = (window as any).axe.run as (ctx: Document, opts: object) => Promise<{ violations: AxeViolation[] }>;
    return run(document, { resultTypes: ['violations'] });
  });
  return results.violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}

/**
 * The checks every page passes: settled, no serious or critical axe violation, no page error
 * or CSP violation so far, no horizontal overflow of the page itself; and with screenshots on,
 * docs/console/<name>.png.
 */
export async function checkPage(page: Page, name: string): Promise<void> {
  await settled(page);
  const violations = await axeViolations(page);
  assert.deepEqual(
    violations.map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`),
    [],
    `axe on ${name}`,
  );
  assert.deepEqual(problems.get(page)?.errors ?? [], [], `errors on ${name}`);
  const shift = await page.evaluate(() => (window as unknown as { __guardShift: number }).__guardShift);
  if (process.env.GUARD_CONSOLE_DEBUG) {
    const shifts = await page.evaluate(() => (window as unknown as { __guardShifts: string[] }).__guardShifts);
    console.error(`layout shift on ${name}: ${shift.toFixed(4)}\n  ${shifts.join('\n  ')}`);
  }
  assert.ok(shift < 0.1, `${name} shifted its layout by ${shift.toFixed(3)} (CLS) since it loaded`);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `${name} is ${overflow} px wider than the ${page.viewportSize()?.width} px window`);
  if (SCREENSHOTS) {
    await mkdir(SCREENSHOT_DIR, { recursive: true });
    await page.screenshot({ path: join(SCREENSHOT_DIR, `${name}.png`), fullPage: true, animations: 'disabled' });
  }
}

/** The navigation path of the spec: Settings > Integrations > Webhooks. */
export async function openWebhooks(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('link', { name: 'Integrations' }).click();
  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
}

/** Polls until the locator's text contains `text`. */
export async function waitForText(locator: Locator, text: string | RegExp, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    last = (await locator.textContent().catch(() => '')) ?? '';
    if (typeof text === 'string' ? last.includes(text) : text.test(last)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${JSON.stringify(String(text))}; last: ${last}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The session's CSRF token, as the console got it (what a forged script in the page could read). */
export async function csrfTokenOf(page: Page): Promise<string> {
  const res = await page.request.get('/v1/auth/session');
  assert.equal(res.status(), 200);
  return (await res.json()).csrf_token;
}
