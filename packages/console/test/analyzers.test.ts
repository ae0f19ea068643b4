// Support bundles › Analyzers in a real browser: support staff write a rule in the draft, see
// a pattern the linear-time engine refuses explained, try the draft against a real stored
// bundle (collected by the agent's own code), save it, and analyse the bundle again from its
// page to see the rule's finding with its evidence. An admin sees neither the page nor its link.

import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { analysedInsights, collectTestBundle, uploadBundle } from '../../server/test/bundle-harness.ts';
import {
  type ConsoleWorld,
  checkPage,
  newContext,
  newPage,
  open,
  signIn,
  startConsoleWorld,
  waitForText,
} from './console-harness.ts';

describe('support staff write analyzer rules and test them against a bundle', () => {
  let world: ConsoleWorld;
  let context: BrowserContext;
  let page: Page;
  let root: string;
  let bundleId = '';

  before(async () => {
    world = await startConsoleWorld();
    root = await mkdtemp(join(os.tmpdir(), 'guard-console-analyzers-'));
    const line = (level: string, msg: string, attrs = '') =>
      `time=${new Date().toISOString()} level=${level} msg="${msg}"${attrs ? ` ${attrs}` : ''}`;
    const log = [
      line('INFO', 'guard-agent starting'),
      line('ERROR', 'upload failed', 'err="dial tcp 10.0.0.7:443: i/o timeout"'),
      line('INFO', 'heartbeat'),
      line('ERROR', 'upload failed', 'err="dial tcp 10.0.0.7:443: i/o timeout"'),
    ].join('\n');
    const built = await collectTestBundle(root, { log: `${log}\n`, now: new Date() });
    bundleId = await uploadBundle(
      world.base,
      { api_key: world.tenant.agentKey, agent_id: world.tenant.agentId, tenant_id: world.tenant.tenant_id },
      built.bytes,
      built.manifest,
    );
    await analysedInsights(world.base, world.support.token, bundleId);
    context = await newContext(world);
    page = await newPage(context);
  });
  after(async () => {
    await context?.close();
    await world?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  test('a rule is drafted, refused when it cannot run in linear time, tested, saved, and found in the bundle', async () => {
    await open(page, '/');
    await signIn(page, world.support.email, world.support.password);
    await page.getByRole('heading', { level: 1, name: 'Support bundles' }).waitFor();
    await page.getByRole('link', { name: 'Analyzers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Analyzers' }).waitFor();
    await waitForText(page.getByRole('table', { name: 'Analyzers built into the service' }), 'crash traces');

    // No rules yet: the form is open. A backreference passes the browser's check, not the server's.
    const form = page.getByRole('form', { name: 'New rule' });
    await form.getByLabel('Id').fill('upload-timeout');
    await form.getByLabel('Title').fill('Uploads to the service time out');
    await form.getByLabel('Members').fill('agent.log*');
    await form.getByLabel('Pattern').fill('dial tcp ([0-9.]+):443: i/o timeout.*\\1');
    await form.getByLabel('At least').fill('2');
    await form.getByRole('button', { name: 'Add to draft' }).click();
    await page.getByRole('button', { name: 'Save rules' }).click();
    await waitForText(page.getByRole('alert'), 'linear time');

    // Mend it in the draft; try it against the bundle before saving.
    await page.getByRole('button', { name: 'Edit upload-timeout' }).click();
    await page
      .getByRole('form', { name: 'Edit rule upload-timeout' })
      .getByLabel('Pattern')
      .fill('dial tcp [0-9.]+:443: i/o timeout');
    await page.getByRole('button', { name: 'Update rule' }).click();
    await page.getByRole('button', { name: 'Test against this bundle' }).click();
    const result = page.getByRole('region', { name: 'Test result' });
    await waitForText(result, '1 of 1 rule would give a finding');
    await waitForText(result.getByRole('table', { name: 'Lines each rule matched' }), 'upload-timeout2agent.log');
    await waitForText(result.getByRole('list', { name: 'Findings the rules would give' }), 'agent.log line 2');
    await page.getByRole('button', { name: 'Save rules' }).click();
    await waitForText(page.getByRole('region', { name: 'Rules' }), '1 rule saved');
    await checkPage(page, 'analyzers');

    // The bundle was analysed before the rule: analysed again from its page, it has the finding.
    await result.getByRole('link', { name: `bundle ${bundleId}` }).click();
    await page.getByRole('button', { name: 'Analyse again' }).click();
    const insights = page.getByRole('region', { name: 'Insights' });
    await waitForText(insights, 'Uploads to the service time out');
    await waitForText(insights, 'rule.upload-timeout');
  });

  test('an admin has no Analyzers link and the page is not theirs', async () => {
    const admin = await newContext(world);
    const p = await newPage(admin);
    await open(p, '/');
    await signIn(p, world.tenant.admin_email, world.tenant.admin_password);
    await open(p, '/support/bundles');
    await p.getByRole('heading', { level: 1, name: 'Support bundles' }).waitFor();
    if ((await p.getByRole('link', { name: 'Analyzers' }).count()) !== 0) throw new Error('an admin sees Analyzers');
    await open(p, '/support/analyzers');
    await p.getByRole('heading', { level: 1, name: 'Not available to your role' }).waitFor();
    await admin.close();
  });
});
