// The console's pure rules: the endpoint form's checks agree with the server's on the same
// inputs, severity words, relative times, and which role sees which control.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { WEBHOOK_EVENTS } from '@guard/contract/webhook-events';
import { validateEndpointUrl, validateHeaders } from '../../server/src/webhooks/endpoint-rules.ts';
import { can, homePath } from '../src/features/auth/permissions.ts';
import { changesOf, severityText, shown } from '../src/features/detection/policy-draft.ts';
import { headerProblem, headersObject, urlProblem } from '../src/features/webhooks/endpoint-rules.ts';
import { eventFields } from '../src/features/webhooks/event-fields.ts';
import { formatBytes } from '../src/lib/bytes.ts';
import { prettyJson } from '../src/lib/json-text.ts';
import { markdownBlocks, markdownSpans } from '../src/lib/markdown-blocks.ts';
import { plural } from '../src/lib/plural.ts';
import { formatExact, formatNextRetry, formatRelative } from '../src/lib/relative-time.ts';
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

test('a count reads with its noun, singular for one', () => {
  assert.equal(plural(1, 'attempt'), '1 attempt');
  assert.equal(plural(0, 'attempt'), '0 attempts');
  assert.equal(plural(2048, 'delivery', 'deliveries'), '2,048 deliveries');
  assert.equal(plural(1, 'delivery', 'deliveries'), '1 delivery');
});

test('a next retry reads "due now" once due, then counts seconds, then minutes', () => {
  const now = Date.parse('2026-11-21T10:00:00Z');
  assert.equal(formatNextRetry('2026-11-21T09:59:00Z', now), 'due now', 'a retry whose time has passed');
  assert.equal(formatNextRetry('2026-11-21T10:00:00Z', now), 'due now');
  assert.equal(formatNextRetry('2026-11-21T10:00:01Z', now), 'in 1 second');
  assert.equal(formatNextRetry('2026-11-21T10:00:03Z', now), 'in 3 seconds');
  assert.equal(formatNextRetry('2026-11-21T10:00:45.200Z', now), 'in 46 seconds');
  assert.equal(formatNextRetry('2026-11-21T10:05:00Z', now), 'in 5 minutes');
});

test('the event catalog lists each field of an event, nested ones by their path', () => {
  const fields = eventFields(WEBHOOK_EVENTS[0].schema);
  assert.deepEqual(fields.slice(0, 2), [
    {
      name: 'event_type',
      type: '"signal_created"',
      required: true,
      description: 'what happened; also the Guard-Event header',
    },
    { name: 'version', type: '"v1"', required: true, description: 'the envelope version' },
  ]);
  const severity = fields.find((f) => f.name === 'data.severity');
  assert.equal(severity?.type, 'integer, 1 to 5');
  assert.equal(fields.find((f) => f.name === 'timestamp')?.type, 'string (date-time)');
  const failing = eventFields(WEBHOOK_EVENTS[2].schema);
  assert.equal(failing.find((f) => f.name === 'data.percent')?.type, '50 | 75 | 90');
});

test('JSON is shown indented; anything else as it is', () => {
  assert.equal(prettyJson('{"a":1}'), '{\n  "a": 1\n}');
  assert.equal(prettyJson('{"a":1'), '{"a":1');
  assert.equal(prettyJson('OK'), 'OK');
});

test('a guide reads as headings, paragraphs, lists and code', () => {
  const blocks = markdownBlocks(
    '# Title\n\nOne line\nand the next.\n\n- first\n  goes on\n- second\n\n```sh\nguard listen\n```\n## Next',
  );
  assert.deepEqual(blocks, [
    { kind: 'heading', level: 1, text: 'Title' },
    { kind: 'paragraph', text: 'One line and the next.' },
    { kind: 'list', ordered: false, items: ['first goes on', 'second'] },
    { kind: 'code', lang: 'sh', text: 'guard listen' },
    { kind: 'heading', level: 2, text: 'Next' },
  ]);
  assert.deepEqual(markdownSpans('Run `guard listen`, see **Deliveries** and [the guide](guard-listen.md).'), [
    { kind: 'text', text: 'Run ' },
    { kind: 'code', text: 'guard listen' },
    { kind: 'text', text: ', see ' },
    { kind: 'strong', text: 'Deliveries' },
    { kind: 'text', text: ' and ' },
    { kind: 'link', text: 'the guide', href: 'guard-listen.md' },
    { kind: 'text', text: '.' },
  ]);
});

test('the local development guide uses only what the console shows of Markdown', () => {
  const guide = readFileSync(new URL('../../../docs/webhooks-local-development.md', import.meta.url), 'utf8');
  const blocks = markdownBlocks(guide);
  assert.equal(blocks[0].kind === 'heading' && blocks[0].level, 1, 'it opens with its title');
  for (const b of blocks)
    if (b.kind === 'paragraph')
      assert.doesNotMatch(b.text, /^\||^>|<[a-z]/, `a table, quote or HTML the page would show as text: ${b.text}`);
});
