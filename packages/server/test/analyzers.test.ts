// Analyzers as code (DESIGN §4, "Analyzers as code") against the real server on loopback:
// support staff set rules, real bundles collected by the agent's own collect code are uploaded
// and analysed by the worker, and each rule's finding is checked with its evidence lines — in
// agent.log and in a rotated segment, read once gunzipped — including min_count, a rule that
// never matches, a bundle analysed again after the rules changed, the test run that stores
// nothing, and the patterns refused because no automaton can run them.

import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analysedInsights, type BuiltBundle, collectTestBundle, uploadBundle } from './bundle-harness.ts';
import {
  api,
  type EnrolledAgent,
  enrollAgent,
  type Loose,
  setupTenant,
  startTestServer,
  T0,
  type TestServer,
} from './harness.ts';

let server: TestServer;
let base: string;
let tenant: Awaited<ReturnType<typeof setupTenant>>;
let other: Awaited<ReturnType<typeof setupTenant>>;
let support: string;
let agent: EnrolledAgent;
let root: string;

before(async () => {
  server = await startTestServer();
  base = server.url;
  tenant = await setupTenant(server);
  other = await setupTenant(server);
  support = server.supportToken as string;
  agent = await enrollAgent(base, tenant.enroll_token, { agent_version: '0.1.0' });
  root = await mkdtemp(join(os.tmpdir(), 'guard-analyzers-'));
});
after(async () => {
  await server.cleanup();
  await rm(root, { recursive: true, force: true });
});

const at = (ms: number) => new Date(T0 + ms).toISOString();
const slog = (ms: number, level: string, msg: string, attrs = '') =>
  `time=${at(ms)} level=${level} msg="${msg}"${attrs ? ` ${attrs}` : ''}`;

const LOG = [
  slog(0, 'INFO', 'guard-agent starting'),
  slog(1000, 'ERROR', 'probe detach failed', 'pid=1003'),
  slog(2000, 'ERROR', 'upload failed', 'err="dial tcp 10.0.0.7:443: i/o timeout"'),
  slog(3000, 'ERROR', 'probe detach failed', 'pid=1012'),
  slog(4000, 'ERROR', 'disk full', 'path=/var/lib/guard'),
  slog(5000, 'ERROR', 'probe detach failed', 'pid=1044'),
  slog(6000, 'ERROR', 'upload failed', 'err="dial tcp 10.0.0.7:443: i/o timeout"'),
].join('\n');
const SEGMENT = `${slog(-3_600_000, 'INFO', 'heartbeat')}\n${slog(-1_800_000, 'ERROR', 'old trouble', 'code=7')}\n`;

const RULES = [
  {
    id: 'disk-full',
    title: 'The agent ran out of disk',
    severity: 'critical',
    member: 'agent.log*',
    pattern: 'msg="disk full"',
  },
  {
    id: 'probe-detach',
    title: 'Probes fail to detach',
    severity: 'warning',
    member: 'agent.log',
    pattern: 'probe detach failed.*pid=10[0-9]{2}',
    min_count: 3,
  },
  {
    id: 'upload-timeout',
    title: 'Uploads time out',
    severity: 'warning',
    member: 'agent.log',
    pattern: 'dial tcp [0-9.]+:443: i/o timeout',
    min_count: 3,
  },
  {
    id: 'old-trouble',
    title: 'Old trouble',
    severity: 'info',
    member: 'agent.log.*.gz',
    pattern: 'old trouble.*code=7$',
  },
  { id: 'never', title: 'Never seen', severity: 'info', member: '*', pattern: 'nothing (like|as) this' },
  { id: 'os', title: 'Debian host', severity: 'info', member: 'system.json', pattern: '"ID": "debian"' },
];

let bundleSeq = 0;
async function collected(): Promise<BuiltBundle> {
  const dir = join(root, String(++bundleSeq));
  await import('node:fs/promises').then((fs) => fs.mkdir(dir));
  return collectTestBundle(dir, { log: `${LOG}\n`, segments: { 'agent.log.1.gz': SEGMENT } });
}

const analysed = (bundleId: string, token = support) => analysedInsights(base, token, bundleId);

const ruleFindings = (insights: Loose) => (insights.findings as Loose[]).filter((f) => f.code.startsWith('rule.'));

describe('analyzer rules', () => {
  let before: string;

  it('starts with no rules and lists the analyzers built in; only support staff read or set them', async () => {
    const got = await api(base, 'GET', '/v1/support/analyzers', { token: support });
    assert.equal(got.status, 200, got.text);
    assert.deepEqual(got.json.rules, []);
    assert.equal(got.json.updated_at, null);
    const names = (got.json.builtin as Loose[]).map((b) => b.name);
    assert.ok(names.includes('crash traces') && names.includes('clock skew'), names.join());
    assert.ok((got.json.builtin as Loose[]).every((b) => b.description && b.codes.length > 0));
    for (const [method, body] of [
      ['GET', undefined],
      ['PUT', { rules: [] }],
    ] as const) {
      const res = await api(base, method, '/v1/support/analyzers', { token: tenant.admin_token, body });
      assert.equal(res.status, 403, res.text);
    }
    // A bundle analysed before any rule exists: no rule findings.
    const built = await collected();
    before = await uploadBundle(base, agent, built.bytes, built.manifest);
    assert.deepEqual(ruleFindings(await analysed(before)), []);
  });

  it('refuses a pattern no automaton can run, and other bad rules, storing nothing', async () => {
    const refused = async (rules: unknown[], status: number, code: string, message?: RegExp) => {
      const res = await api(base, 'PUT', '/v1/support/analyzers', { token: support, body: { rules } });
      assert.equal(res.status, status, res.text);
      assert.equal(res.json.error.code, code);
      if (message) assert.match(res.json.error.message, message);
    };
    const rule = RULES[0];
    await refused(
      [rule, { ...rule, id: 'echo', pattern: '(a+)\\1' }],
      400,
      'invalid_pattern',
      /rules\[1\] \(echo\).*linear time/,
    );
    await refused([{ ...rule, pattern: '(?=disk)disk' }], 400, 'invalid_pattern', /linear time/);
    await refused([{ ...rule, pattern: 'unclosed (' }], 400, 'invalid_pattern', /rules\[0\]/);
    await refused([{ ...rule, pattern: '.*' }], 400, 'invalid_pattern', /every line/);
    await refused([rule, rule], 400, 'invalid_rules', /used twice/);
    await refused([{ ...rule, severity: 'error' }], 400, 'invalid_request');
    await refused([{ ...rule, id: 'Not An Id' }], 400, 'invalid_request');
    await refused([{ ...rule, min_count: 0 }], 400, 'invalid_request');
    await refused([{ ...rule, extra: true }], 400, 'invalid_request');
    const got = await api(base, 'GET', '/v1/support/analyzers', { token: support });
    assert.deepEqual(got.json.rules, []);
  });

  it('gives each rule that matched enough lines a finding, with its evidence lines, on the next bundle', async () => {
    const put = await api(base, 'PUT', '/v1/support/analyzers', { token: support, body: { rules: RULES } });
    assert.equal(put.status, 200, put.text);
    assert.deepEqual(put.json.rules, RULES);
    assert.ok(put.json.updated_at && put.json.updated_by);

    const built = await collected();
    const id = await uploadBundle(base, agent, built.bytes, built.manifest);
    const insights = await analysed(id);
    assert.equal(insights.state, 'done');
    const found = Object.fromEntries(ruleFindings(insights).map((f) => [f.code, f]));
    assert.deepEqual(Object.keys(found).sort(), ['rule.disk-full', 'rule.old-trouble', 'rule.os', 'rule.probe-detach']);
    // A critical rule's finding comes first of all.
    assert.equal(insights.findings[0].code, 'rule.disk-full');
    assert.equal(found['rule.disk-full'].severity, 'critical');
    assert.equal(found['rule.disk-full'].title, 'The agent ran out of disk');
    assert.deepEqual(found['rule.disk-full'].evidence, [{ member: 'agent.log', line: 5 }]);
    assert.deepEqual(
      found['rule.probe-detach'].evidence.map((e: Loose) => e.line),
      [2, 4, 6],
    );
    assert.match(found['rule.probe-detach'].detail, /^3 lines of agent\.log match .* \(the rule needs 3\)/);
    // Two timeouts, three needed: no finding.
    assert.equal(found['rule.upload-timeout'], undefined);
    // In a rotated segment the line is the gunzipped text's, and reads back through …/lines.
    assert.deepEqual(found['rule.old-trouble'].evidence, [{ member: 'agent.log.1.gz', line: 2 }]);
    const lines = await api(base, 'GET', `/v1/support/bundles/${id}/lines?member=agent.log.1.gz&line=2&context=0`, {
      token: support,
    });
    assert.equal(lines.status, 200, lines.text);
    assert.match(lines.json.lines[0], /old trouble/);
    assert.equal(found['rule.os'].evidence[0].member, 'system.json');
  });

  it('analyses an earlier bundle again on request, with the rules of now', async () => {
    const res = await api(base, 'POST', `/v1/support/bundles/${before}/analyze`, { token: tenant.admin_token });
    assert.equal(res.status, 202, res.text);
    assert.deepEqual(res.json, { bundle_id: before, state: 'pending' });
    const again = await analysed(before);
    assert.deepEqual(
      ruleFindings(again)
        .map((f) => f.code)
        .sort(),
      ['rule.disk-full', 'rule.old-trouble', 'rule.os', 'rule.probe-detach'],
    );
    // Another tenant's admin cannot tell the bundle exists; a member may not ask.
    const theirs = await api(base, 'POST', `/v1/support/bundles/${before}/analyze`, { token: other.admin_token });
    assert.equal(theirs.status, 404, theirs.text);
    const missing = await api(base, 'POST', '/v1/support/bundles/bu_nothing/analyze', { token: support });
    assert.equal(missing.status, 404, missing.text);
  });

  it('tries draft rules against a stored bundle, storing nothing', async () => {
    const draft = [
      { ...RULES[2], min_count: 2 },
      { id: 'starts', title: 'Starts', severity: 'info', member: 'agent.log', pattern: 'guard-agent starting' },
    ];
    const res = await api(base, 'POST', '/v1/support/analyzers/test', {
      token: support,
      body: { bundle_id: before, rules: draft },
    });
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.json.findings.map((f: Loose) => [f.code, f.evidence.map((e: Loose) => e.line)]),
      [
        ['rule.upload-timeout', [3, 7]],
        ['rule.starts', [1]],
      ],
    );
    assert.deepEqual(res.json.matches, [
      { id: 'upload-timeout', count: 2, members: ['agent.log'] },
      { id: 'starts', count: 1, members: ['agent.log'] },
    ]);
    // Nothing was stored: the rules and the bundle's findings are as they were.
    const got = await api(base, 'GET', '/v1/support/analyzers', { token: support });
    assert.equal(got.json.rules.length, RULES.length);
    assert.equal(ruleFindings(await analysed(before)).length, 4);
    // Without rules in the body, the stored ones are tried.
    const stored = await api(base, 'POST', '/v1/support/analyzers/test', {
      token: support,
      body: { bundle_id: before },
    });
    assert.equal(stored.status, 200, stored.text);
    assert.equal(stored.json.findings.length, 4);

    const bad = await api(base, 'POST', '/v1/support/analyzers/test', {
      token: support,
      body: { bundle_id: before, rules: [{ ...draft[0], pattern: '(x)\\1' }] },
    });
    assert.equal(bad.status, 400, bad.text);
    assert.equal(bad.json.error.code, 'invalid_pattern');
    const unknown = await api(base, 'POST', '/v1/support/analyzers/test', {
      token: support,
      body: { bundle_id: 'bu_nothing', rules: draft },
    });
    assert.equal(unknown.status, 404, unknown.text);
    const admin = await api(base, 'POST', '/v1/support/analyzers/test', {
      token: tenant.admin_token,
      body: { bundle_id: before },
    });
    assert.equal(admin.status, 403, admin.text);
  });

  it('audits who set the rules, and each bundle tried or analysed again', async () => {
    const actions = (
      await server.deps.db
        .selectFrom('audit_log')
        .select(['action', 'tenant_id'])
        .where('action', 'in', ['analyzers.update', 'bundle.analyze', 'bundle.analyzers_test'])
        .execute()
    ).map((r) => `${r.action}:${r.tenant_id ?? '-'}`);
    assert.ok(actions.includes('analyzers.update:-'), actions.join());
    assert.ok(actions.includes(`bundle.analyze:${tenant.tenant_id}`), actions.join());
    assert.ok(actions.includes(`bundle.analyzers_test:${tenant.tenant_id}`), actions.join());
  });
});
