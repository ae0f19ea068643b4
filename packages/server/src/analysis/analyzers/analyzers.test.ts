// Each analyzer alone, on facts made here (what fires it, what does not), and the list: names
// and codes once each, every code in the docs' table. The analyzers together on real bundles
// are tested in packages/server/test/insights.test.ts.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { BundleManifest, Finding } from '@guard/contract';
import { emptyLogStats, type LogStats, type MessageStat } from '../log-scan.ts';
import type { ArchiveFacts } from '../read-archive.ts';
import { type Analyzer, type AnalyzerInput, analyzerInput, type FindingContext } from './analyzer.ts';
import { agentVersionChanged, kernelChanged, newErrors } from './changes.ts';
import { ANALYZERS } from './index.ts';
import { crashes, frequentErrors, logLevels, manyMessages, restarts, unreadableSegments } from './logs.ts';
import { clockSkew, collectionErrors, outdatedAgent, redaction, trimmedSegments } from './manifest.ts';
import { btfMissing, probeFailed } from './system.ts';

const T0 = '2026-11-27T10:00:00.000Z';

function log(member: string, over: Partial<LogStats> = {}): LogStats {
  return { ...emptyLogStats(member), lines: 10, ...over };
}

function messages(...list: [string, number, number][]): Map<string, MessageStat> {
  return new Map(
    list.map(([message, count, line]) => [
      message,
      { message, count, first: { line }, last: { line: line + count - 1 } },
    ]),
  );
}

const MANIFEST = {
  bundle_version: 1,
  agent_version: '0.3.0',
  generated_at: T0,
  trigger: 'cli',
  contents: [],
  trimmed_segments: [],
  redaction: { pattern: '^(api_key)$', values_masked: 0, members: {} },
  collection_errors: [],
} as unknown as BundleManifest;

/** The input of the analyzers for these facts (defaults: an empty agent.log, no system.json). */
function input(
  facts: Partial<ArchiveFacts> = {},
  ctx: Omit<Partial<FindingContext>, 'manifest'> & { manifest?: Partial<BundleManifest> } = {},
): AnalyzerInput {
  const manifest = { ...MANIFEST, ...ctx.manifest } as BundleManifest;
  return analyzerInput(
    {
      logs: new Map([['agent.log', log('agent.log')]]),
      system: undefined,
      manifestText: JSON.stringify(manifest, null, 2),
      segmentProblems: [],
      ruleHits: [],
      ...facts,
    },
    { uploadedAt: T0, ...ctx, manifest },
  );
}

const codes = (a: Analyzer, i: AnalyzerInput) => a.analyze(i).map((f: Finding) => f.code);

describe('analyzers', () => {
  it('log levels: always one for agent.log, a warning when it has ERROR lines, segments named', () => {
    assert.deepEqual(logLevels.analyze(input({ logs: new Map() })), []);
    const [quiet] = logLevels.analyze(input());
    assert.equal(quiet.severity, 'info');
    const logs = new Map([
      ['agent.log', log('agent.log', { errors: 2, warnings: 1 })],
      ['agent.log.1.gz', log('agent.log.1.gz', { errors: 1 })],
    ]);
    const [f] = logLevels.analyze(input({ logs }));
    assert.equal(f.severity, 'warning');
    assert.equal(f.title, 'agent.log: 2 ERROR lines and 1 WARN line');
    assert.match(f.detail, /Rotated segments read: agent\.log\.1\.gz \(10 lines, 1 ERROR, 0 WARN\)/);
  });

  it('frequent errors: the five most frequent messages of agent.log, with first and last line', () => {
    const many = messages(['a', 1, 3], ['b', 9, 10], ['c', 2, 30], ['d', 2, 20], ['e', 5, 40], ['f', 1, 50]);
    const found = frequentErrors.analyze(
      input({ logs: new Map([['agent.log', log('agent.log', { messages: many })]]) }),
    );
    assert.deepEqual(
      found.map((f) => f.title),
      ['“b” ×9', '“e” ×5', '“d” ×2', '“c” ×2', '“a” ×1'],
    );
    assert.deepEqual(found[0].evidence, [
      { member: 'agent.log', line: 10 },
      { member: 'agent.log', line: 18 },
    ]);
  });

  it('many messages: only when error lines went uncounted one by one', () => {
    assert.deepEqual(codes(manyMessages, input()), []);
    const logs = new Map([['agent.log', log('agent.log', { otherErrors: 3 })]]);
    assert.deepEqual(codes(manyMessages, input({ logs })), ['log.many_messages']);
  });

  it('restarts: more than one start across the logs, with their lines', () => {
    const one = new Map([['agent.log', log('agent.log', { startCount: 1, starts: [{ line: 1 }] })]]);
    assert.deepEqual(codes(restarts, input({ logs: one })), []);
    const two = new Map([
      ['agent.log', log('agent.log', { startCount: 1, starts: [{ line: 4, time: '2026-11-27T09:00:00Z' }] })],
      ['agent.log.1.gz', log('agent.log.1.gz', { startCount: 1, starts: [{ line: 2, time: '2026-11-26T09:00:00Z' }] })],
    ]);
    const [f] = restarts.analyze(input({ logs: two }));
    assert.equal(f.title, 'The agent started 2 times');
    assert.match(f.detail, /from 2026-11-26T09:00:00Z to 2026-11-27T09:00:00Z/);
    assert.deepEqual(f.evidence, [
      { member: 'agent.log', line: 4 },
      { member: 'agent.log.1.gz', line: 2 },
    ]);
  });

  it('crash traces: one error each, the first five', () => {
    const trace = (line: number) => ({ line, text: 'panic: runtime error' });
    const logs = new Map([['agent.log', log('agent.log', { crashCount: 6, crashes: [1, 2, 3, 4, 5, 6].map(trace) })]]);
    const found = crashes.analyze(input({ logs }));
    assert.equal(found.length, 5);
    assert.equal(found[0].severity, 'error');
    assert.match(found[0].detail, /6 crash traces in all; the first 5 are listed/);
  });

  it('unreadable segments: one warning per segment problem', () => {
    const facts = { segmentProblems: [{ member: 'agent.log.2.gz', message: 'agent.log.2.gz is not valid gzip' }] };
    assert.deepEqual(codes(unreadableSegments, input(facts)), ['log.segment_unreadable']);
  });

  it('kernel BTF: only when system.json says btf_present is false', () => {
    const system = (btf: unknown) => ({
      system: { value: { kernel: { release: '6.1.0' }, ebpf: { btf_present: btf } }, text: '{\n "btf_present": x\n}' },
    });
    assert.deepEqual(codes(btfMissing, input(system(true))), []);
    const [f] = btfMissing.analyze(input(system(false)));
    assert.match(f.detail, /kernel 6\.1\.0/);
    assert.deepEqual(f.evidence, [{ member: 'system.json', line: 2 }]);
  });

  it('eBPF probe status: a state that is not a working one, or an error', () => {
    const probe = (status: unknown) => ({ system: { value: { ebpf: { probe_status: status } }, text: '{}' } });
    assert.deepEqual(codes(probeFailed, input(probe({ state: 'attached' }))), []);
    assert.deepEqual(codes(probeFailed, input(probe({ state: 'detached' }))), ['ebpf.probe_failed']);
    assert.deepEqual(codes(probeFailed, input(probe({ state: 'running', error: 'lost events' }))), [
      'ebpf.probe_failed',
    ]);
    assert.deepEqual(codes(probeFailed, input(probe('attached'))), [], 'not an object: nothing to read');
  });

  it('clock skew: generated after the upload, or before the request it answers, beyond a minute', () => {
    assert.deepEqual(codes(clockSkew, input({}, { uploadedAt: '2026-11-27T09:59:30.000Z' })), []);
    const [ahead] = clockSkew.analyze(input({}, { uploadedAt: '2026-11-27T09:55:00.000Z' }));
    assert.equal(ahead.title, "The server's clock is 5 min ahead");
    const [behind] = clockSkew.analyze(input({}, { requestCreatedAt: '2026-11-27T12:00:00.000Z' }));
    assert.equal(behind.title, "The server's clock is at least 2.0 h behind");
  });

  it('outdated agent: older than the newest of the tenant', () => {
    assert.deepEqual(codes(outdatedAgent, input({}, { newestTenantVersion: '0.3.0' })), []);
    assert.deepEqual(codes(outdatedAgent, input({}, { newestTenantVersion: '0.10.0' })), ['agent.outdated']);
  });

  it('trimmed segments: named, with the time the segments around them cover', () => {
    assert.deepEqual(codes(trimmedSegments, input()), []);
    const logs = new Map([
      ['agent.log', log('agent.log', { firstTime: '2026-11-27T08:00:00Z' })],
      ['agent.log.3.gz', log('agent.log.3.gz', { lastTime: '2026-11-20T08:00:00Z' })],
    ]);
    const [f] = trimmedSegments.analyze(
      input({ logs }, { manifest: { trimmed_segments: ['agent.log.1.gz', 'agent.log.2.gz'] } }),
    );
    assert.match(
      f.detail,
      /agent\.log\.1\.gz … agent\.log\.2\.gz \(2\) covered about 2026-11-20T08:00:00Z to 2026-11-27T08:00:00Z/,
    );
  });

  it('collection errors: one per entry, pointing at its line of the manifest', () => {
    const manifest = { collection_errors: [{ source: 'journalctl', message: 'not found' }] };
    const [f] = collectionErrors.analyze(input({}, { manifest }));
    assert.equal(f.title, 'Not collected: journalctl');
    assert.equal(f.evidence[0].member, 'BUNDLE-MANIFEST.json');
    assert.ok(f.evidence[0].line);
  });

  it('redaction: always one note, with the masked counts per member', () => {
    const manifest = {
      redaction: { pattern: '^(api_key)$', values_masked: 3, members: { 'agent.log': 3, 'system.json': 0 } },
    } as unknown as Partial<BundleManifest>;
    const [f] = redaction.analyze(input({}, { manifest }));
    assert.equal(f.title, '3 values masked');
    assert.match(f.detail, /\(agent\.log: 3\)/);
  });

  it('changes: new error messages, a new agent version, a new kernel — only with a previous bundle', () => {
    const logs = new Map([['agent.log', log('agent.log', { messages: messages(['old', 1, 2], ['new', 1, 5]) })]]);
    const system = { value: { kernel: { release: '6.12.0' } }, text: '{\n "release": "6.12.0"\n}' };
    const alone = input({ logs, system });
    for (const a of [newErrors, agentVersionChanged, kernelChanged]) assert.deepEqual(a.analyze(alone), []);
    const previous = {
      bundleId: 'b_prev',
      uploadedAt: T0,
      summary: { agent_version: '0.2.0', kernel_release: '6.1.0', error_messages: { old: 'old' } },
    };
    const withPrevious = input({ logs, system }, { previous });
    const [fresh] = newErrors.analyze(withPrevious);
    assert.equal(fresh.title, '1 new error message since the previous bundle (b_prev, 2026-11-27T10:00:00.000Z)');
    assert.deepEqual(fresh.evidence, [{ member: 'agent.log', line: 5 }]);
    assert.deepEqual(codes(agentVersionChanged, withPrevious), ['change.agent_version']);
    assert.deepEqual(codes(kernelChanged, withPrevious), ['change.kernel']);
  });
});

describe('the list of analyzers', () => {
  it('names each analyzer and each code once', () => {
    const names = ANALYZERS.map((a) => a.name);
    assert.equal(new Set(names).size, names.length, names.join(', '));
    const all = ANALYZERS.flatMap((a) => a.codes);
    assert.equal(new Set(all).size, all.length, all.join(', '));
  });

  it('has every code in the docs’ table of findings', () => {
    const docs = readFileSync(new URL('../../../../../docs/guard-server.md', import.meta.url), 'utf8');
    const missing = ANALYZERS.flatMap((a) => a.codes).filter((code) => !docs.includes(`\`${code}\``));
    assert.deepEqual(missing, []);
  });

  it('answers only the codes each analyzer declares', () => {
    const logs = new Map([
      ['agent.log', log('agent.log', { errors: 1, otherErrors: 1, messages: messages(['x', 1, 1]) })],
    ]);
    const i = input({ logs }, { uploadedAt: '2026-11-27T09:00:00.000Z', newestTenantVersion: '1.0.0' });
    for (const a of ANALYZERS) for (const code of codes(a, i)) assert.ok(a.codes.includes(code), `${a.name}: ${code}`);
  });
});
