// The console's pure rules: the endpoint form's checks agree with the server's on the same
// inputs, severity words, relative times, and which role sees which control.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateEndpointUrl, validateHeaders } from '../../server/src/webhooks/endpoint-rules.ts';
import { can, homePath } from '../src/features/auth/permissions.ts';
import { changesOf, severityText, shown } from '../src/features/detection/policy-draft.ts';
import { headerProblem, headersObject, urlProblem } from '../src/features/webhooks/endpoint-rules.ts';
import { formatBytes } from '../src/lib/bytes.ts';
import { formatExact, formatRelative } from '../src/lib/relative-time.ts';
import { severityLabel } from '../src/lib/severity.ts';

const URLS = [
  'https://hooks.example.com/guard',
  'https://127.0.0.1:8443/x',
  'https://[::1]:8443/x',
  'https://hooks.example.com:8443/a?b=c',
  'http://hooks.example.com/guard',
  'ftp://hooks.example.com/',
  'hooks.example.com/guard',
  '',
  'https://user:pass@hooks.example.com/',
  'https://hooks.example.com/#frag',
  'https://bad_host.example.com/',
  `https://hooks.example.com/${'a'.repeat(2100)}`,
];

test('the form refuses exactly the URLs the server refuses', () => {
  for (const url of URLS)
    assert.equal(
      urlProblem(url) === undefined,
      validateEndpointUrl(url) === undefined,
      `agree on ${JSON.stringify(url)}`,
    );
  assert.match(urlProblem('http://hooks.example.com/guard') ?? '', /https:\/\//);
});

const HEADER_ROWS: { name: string; value: string }[][] = [
  [{ name: 'Authorization', value: 'Bearer abc' }],
  [
    { name: 'X-Team', value: 'sec' },
    { name: 'X-Env', value: 'prod' },
  ],
  [{ name: 'Content-Type', value: 'text/plain' }],
  [{ name: 'Guard-Signature', value: 'x' }],
  [{ name: 'Bad Name', value: 'x' }],
  [{ name: 'X-A', value: 'line\r\nbreak' }],
  [
    { name: 'X-A', value: '1' },
    { name: 'x-a', value: '2' },
  ],
  [{ name: 'Host', value: 'evil.example' }],
];

test('the form refuses exactly the header rows the server refuses', () => {
  for (const rows of HEADER_ROWS) {
    const formOk = rows.every((r, i) => {
      const p = headerProblem(r, rows.slice(0, i));
      return !p.name && !p.value;
    });
    // Duplicate names collapse in an object; the server sees the rows as the form would send them.
    const serverOk = validateHeaders(Object.fromEntries(rows.map((r) => [r.name, r.value]))) === undefined;
    assert.equal(formOk, serverOk, `agree on ${JSON.stringify(rows)}`);
  }
  assert.deepEqual(headersObject([{ name: ' X-Team ', value: 'sec' }]), { 'X-Team': 'sec' });
});

test('severity 1 to 5 reads info, low, medium, high, critical', () => {
  assert.deepEqual([1, 2, 3, 4, 5].map(severityLabel), ['info', 'low', 'medium', 'high', 'critical']);
});

test('relative times, with the exact UTC time for the hover text', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  assert.equal(formatRelative('2026-11-21T09:59:55Z', now), 'just now');
  assert.equal(formatRelative('2026-11-21T09:57:00Z', now), '3 minutes ago');
  assert.equal(formatRelative('2026-11-21T12:00:00Z', now), 'in 2 hours');
  assert.equal(formatRelative('2026-11-20T10:00:00Z', now), 'yesterday');
  assert.equal(formatExact('2026-11-21T09:57:00Z'), '21 Nov 2026, 09:57:00 UTC');
  assert.equal(formatBytes(66), '66 bytes');
  assert.equal(formatBytes(64 * 1024), '64.0 KiB');
});

test('members and support staff get no write controls; support lands on bundles', () => {
  assert.ok(can('admin', 'manageWebhooks'));
  assert.ok(!can('member', 'manageWebhooks'));
  assert.ok(can('member', 'readWebhooks'));
  assert.ok(!can('support', 'readWebhooks'));
  assert.ok(can('support', 'readBundles'));
  assert.ok(!can('member', 'manageUsers'));
  assert.ok(!can(undefined, 'readSignals'));
  assert.equal(homePath('support'), '/support/bundles');
  assert.equal(homePath('member'), '/signals');
});

test('the detection page sends only what differs from the server, and words each change', () => {
  const entries = [
    { signal_type: 'sudo_command_executed', enabled: true, severity: null, default_severity: 3, description: 'd' },
    { signal_type: 'ssh_login_succeeded', enabled: true, severity: null, default_severity: 1, description: 'd' },
    { signal_type: 'user_created', enabled: false, severity: 4, default_severity: 3, description: 'd' },
  ];
  assert.deepEqual(changesOf(entries, {}), { body: {}, lines: [] });
  // Changed and changed back: nothing to send.
  assert.deepEqual(changesOf(entries, { user_created: { enabled: false, severity: 4 } }).lines, []);
  const { body, lines } = changesOf(entries, {
    sudo_command_executed: { severity: 5 },
    ssh_login_succeeded: { enabled: false },
    user_created: { enabled: true, severity: null },
  });
  assert.deepEqual(body, {
    sudo_command_executed: { severity: 5 },
    ssh_login_succeeded: { enabled: false },
    user_created: { enabled: true, severity: null },
  });
  assert.deepEqual(lines, [
    'sudo_command_executed: severity default (3) → 5 critical',
    'ssh_login_succeeded: turn off',
    'user_created: turn on',
    'user_created: severity 4 high → default (3)',
  ]);
  assert.deepEqual(shown(entries[2], { user_created: { severity: null } }), { enabled: false, severity: null });
  assert.equal(severityText(null, 3), 'default (3)');
  assert.equal(severityText(1, 3), '1 info');
});

test('members read the detection policy; only admins change it', () => {
  assert.deepEqual(
    (['admin', 'member', 'support'] as const).map((r) => [can(r, 'readDetection'), can(r, 'manageDetection')]),
    [
      [true, true],
      [true, false],
      [false, false],
    ],
  );
});
