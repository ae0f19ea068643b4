// Agent detection in the console (issue 18, item 2): an admin turns a detection signal type off
// and raises another's severity on Settings > Detection, confirms what changed, and finds it
// after a reload and in the audit log; a member reads the same policy without a control; the
// Servers page shows which detectors a server's daemon runs, which failed and why, and the
// last signal (the agent's heartbeat and signal go through the API, as the daemon sends them).

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { BrowserContext, Page } from 'playwright-core';
import { api } from '../../server/test/harness.ts';
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

const MEMBER_EMAIL = 'dana@acme.example';
const MEMBER_PASSWORD = 'correct horse battery staple';

async function openDetection(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('link', { name: 'Detection' }).click();
  await page.getByRole('heading', { level: 1, name: 'Detection' }).waitFor();
  await page.getByRole('table').waitFor();
}

describe('the detection policy and the detectors in the console', () => {
  let world: ConsoleWorld;
  let admin: BrowserContext;
  let page: Page;

  before(async () => {
    world = await startConsoleWorld();
    const { base, tenant } = world;
    // A member with a password, through the set-password link as the console's Users page makes it.
    const created = await api(base, 'POST', '/v1/users', {
      token: tenant.admin_token,
      body: { email: MEMBER_EMAIL, role: 'member' },
    });
    assert.equal(created.status, 201, created.text);
    const token = new URL(created.json.set_password_url).hash.slice(1);
    const set = await api(base, 'POST', '/v1/auth/set-password', { body: { token, password: MEMBER_PASSWORD } });
    assert.equal(set.status, 204, set.text);
    // The daemon's heartbeat with its detectors, and a signal it raised.
    const beat = await api(base, 'POST', '/v1/agent/heartbeat', {
      token: tenant.agentKey,
      body: {
        agent_version: '0.5.0',
        hostname: tenant.hostname,
        uptime_seconds: 86_400,
        agent_uptime_seconds: 3_600,
        spool_depth: 0,
        detectors: [
          { name: 'auth_log', state: 'running', last_event_at: world.server.clock.now().toISOString() },
          { name: 'file_integrity', state: 'running' },
          {
            name: 'exec',
            state: 'failed',
            reason: 'eBPF unavailable: the kernel has no BTF (/sys/kernel/btf/vmlinux is missing)',
          },
        ],
      },
    });
    assert.equal(beat.status, 200, beat.text);
    const signal = await api(base, 'POST', '/v1/signals', {
      token: tenant.agentKey,
      headers: { 'idempotency-key': 'console-test-1' },
      body: {
        signal_type: 'ssh_login_failed',
        severity: 2,
        description: 'Failed password for invalid user admin from 203.0.113.7',
        identity_id: 'admin',
        identity_name: 'admin',
      },
    });
    assert.equal(signal.status, 201, signal.text);
    admin = await newContext(world);
    page = await newPage(admin);
    await open(page, '/');
    await signIn(page, tenant.admin_email, tenant.admin_password);
  });
  after(async () => {
    await admin?.close();
    await world?.close();
  });

  test('an admin turns ssh_login_succeeded off and sets sudo_command_executed to 5, confirming what changed', async () => {
    await openDetection(page);
    const save = page.getByRole('button', { name: 'Save changes' });
    assert.equal(await save.isDisabled(), true, 'nothing to save yet');
    const severity = page.getByLabel('Severity of sudo_command_executed');
    assert.equal(await severity.inputValue(), 'default');
    assert.equal(await severity.locator('option:checked').textContent(), 'default (3)');
    await page.getByLabel('ssh_login_succeeded enabled').uncheck();
    await severity.selectOption('5');
    await save.click();
    const question = page.getByRole('group', { name: 'Confirm the detection policy change' });
    await waitForText(question, 'ssh_login_succeeded: turn off');
    await waitForText(question, 'sudo_command_executed: severity default (3) → 5 critical');
    await checkPage(page, 'detection-settings');
    await page.getByRole('button', { name: 'Save detection policy' }).click();
    await waitForText(page.getByRole('status'), 'Saved: ');
    const policy = await api(world.base, 'GET', '/v1/detection/policy', { token: world.tenant.admin_token });
    const byType = new Map((policy.json.signal_types as { signal_type: string }[]).map((t) => [t.signal_type, t]));
    assert.deepEqual(byType.get('ssh_login_succeeded'), { ...byType.get('ssh_login_succeeded'), enabled: false });
    assert.deepEqual(byType.get('sudo_command_executed'), { ...byType.get('sudo_command_executed'), severity: 5 });
  });

  test('after a reload the page shows the saved policy; the audit log holds the change', async () => {
    await page.reload();
    await page.getByRole('heading', { level: 1, name: 'Detection' }).waitFor();
    await page.getByRole('table').waitFor();
    assert.equal(await page.getByLabel('ssh_login_succeeded enabled').isChecked(), false);
    assert.equal(await page.getByLabel('ssh_login_failed enabled').isChecked(), true);
    assert.equal(await page.getByLabel('Severity of sudo_command_executed').inputValue(), '5');
    await page.getByRole('link', { name: 'Audit log' }).click();
    await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await waitForText(page.getByRole('main'), 'detection.update');
    await waitForText(page.getByRole('main'), 'sudo_command_executed.severity=5, ssh_login_succeeded.enabled=false');
  });

  test('a member reads the policy with no control to change it', async () => {
    const context = await newContext(world);
    try {
      const member = await newPage(context);
      await open(member, '/');
      await signIn(member, MEMBER_EMAIL, MEMBER_PASSWORD);
      await openDetection(member);
      assert.equal(await member.getByRole('checkbox').count(), 0);
      assert.equal(await member.getByRole('combobox').count(), 0);
      assert.equal(await member.getByRole('button', { name: 'Save changes' }).count(), 0);
      const row = (type: string) => member.getByRole('row').filter({ hasText: type });
      await waitForText(row('ssh_login_succeeded'), 'off');
      await waitForText(row('sudo_command_executed'), '5 critical');
      await waitForText(row('ssh_bruteforce'), 'default (4)');
      await waitForText(member.getByRole('main'), 'Only your organisation');
      await checkPage(member, 'detection-settings-member');
    } finally {
      await context.close();
    }
  });

  test('the Servers page shows the detectors: which run, which failed and why, and the last signal', async () => {
    await page.getByRole('link', { name: 'Servers' }).click();
    await page.getByRole('heading', { level: 1, name: 'Servers' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: world.tenant.hostname });
    await waitForText(row, 'auth_log');
    await waitForText(row, 'file_integrity');
    await waitForText(row, /exec\s*failed/);
    await waitForText(row, 'eBPF unavailable: the kernel has no BTF');
    await waitForText(row, 'last event');
    assert.equal(await row.getByTitle(/eBPF unavailable/).count(), 1, 'the reason is also the tooltip');
    await waitForText(row, /last signal (just now|\d+ seconds? ago)/);
    await checkPage(page, 'servers-detectors');
  });
});
