// Tracing (issue 14, item 7), end to end: the real server with OTEL_* set exports its spans to
// a local OTLP collector stand-in (an HTTP server on loopback that records each OTLP/HTTP
// export), and a real HTTPS receiver sees the traceparent of each attempt. The agent's
// traceparent on POST /v1/signals is the ingest span's parent; each delivery attempt is a
// span of its own, a child of the ingest span, whose traceparent the receiver gets. Off by
// default: then no span is made and the agent's traceparent passes through unchanged.

import assert from 'node:assert/strict';
import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type Loose, waitFor } from './harness.ts';
import {
  apiCall,
  createEndpoint,
  makeTestTls,
  newTenant,
  postSignal,
  Receiver,
  startWebhookServer,
  type Tenant,
  type TestTls,
  type WebhookServer,
} from './webhook-harness.ts';

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const AGENT_SPAN = '00f067aa0ba902b7';
const AGENT_TRACEPARENT = `00-${TRACE_ID}-${AGENT_SPAN}-01`;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/;

/** An OTLP/HTTP collector stand-in: records every export it is sent. */
class Collector {
  readonly exports: { path: string; contentType: string; body: Buffer }[] = [];
  readonly server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.exports.push({
        path: req.url ?? '',
        contentType: String(req.headers['content-type']),
        body: Buffer.concat(chunks),
      });
      res.writeHead(200, { 'content-type': String(req.headers['content-type']) });
      res.end(req.headers['content-type'] === 'application/json' ? '{}' : '');
    });
  });
  static async start(): Promise<Collector> {
    const c = new Collector();
    c.server.listen(0, '127.0.0.1');
    await once(c.server, 'listening');
    return c;
  }
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  /** Every span of the JSON exports so far, with its kind, ids and attributes flattened. */
  spans(): Loose[] {
    return this.exports
      .filter((e) => e.contentType === 'application/json')
      .flatMap((e) => JSON.parse(e.body.toString('utf8')).resourceSpans)
      .flatMap((rs: Loose) =>
        rs.scopeSpans.flatMap((ss: Loose) =>
          ss.spans.map((s: Loose) => ({
            ...s,
            service: rs.resource.attributes.find((a: Loose) => a.key === 'service.name')?.value.stringValue,
            attrs: Object.fromEntries(
              (s.attributes ?? []).map((a: Loose) => [a.key, a.value.stringValue ?? Number(a.value.intValue)]),
            ),
          })),
        ),
      );
  }
  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

let tls: TestTls;
let receiver: Receiver;

before(async () => {
  tls = await makeTestTls();
  receiver = await Receiver.start(tls);
});
after(async () => {
  await receiver?.close();
});

const otel = (collector: Collector, protocol: string): NodeJS.ProcessEnv => ({
  OTEL_TRACES_EXPORTER: 'otlp',
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: protocol,
  OTEL_SERVICE_NAME: 'guard-test',
  OTEL_BSP_SCHEDULE_DELAY: '50',
});

describe('with OTEL_* set (OTLP/HTTP JSON to a local collector)', () => {
  let collector: Collector;
  let server: WebhookServer;
  let tenant: Tenant;

  before(async () => {
    collector = await Collector.start();
    server = await startWebhookServer({ caPem: tls.caPem, env: otel(collector, 'http/json') });
    tenant = await newTenant(server);
  });
  after(async () => {
    await server?.close();
    await collector?.close();
  });

  it("exports a span for the ingest, child of the agent's traceparent, and one per attempt, child of the ingest span; the receiver gets each attempt's traceparent", async () => {
    receiver.on('/traced', (_hit, nth) => ({ status: nth === 1 ? 503 : 204 }));
    await createEndpoint(server, tenant.adminToken, { url: receiver.url('/traced') });
    const signal = await fetch(`${server.url}/v1/signals`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.agentKey}`,
        'content-type': 'application/json',
        traceparent: AGENT_TRACEPARENT,
      },
      body: JSON.stringify({
        signal_type: 'sudo_command_executed',
        severity: 4,
        description: 'traced',
        identity_id: 'u1',
        identity_name: 'alice',
      }),
    }).then((r) => r.json());
    const traced = await receiver.waitForHits('/traced', 2); // a 503, then a 204

    let spans: Loose[] = [];
    await waitFor(() => {
      spans = collector.spans().filter((s) => s.traceId === TRACE_ID);
      return spans.length >= 3;
    }, 'three spans of the trace exported');
    const ingest = spans.find((s) => s.name === 'POST /v1/signals');
    assert.ok(ingest, JSON.stringify(spans.map((s) => s.name)));
    assert.equal(ingest.parentSpanId, AGENT_SPAN, "the ingest span's parent is the agent's span");
    assert.equal(ingest.kind, 2, 'SERVER');
    assert.equal(ingest.service, 'guard-test');
    assert.equal(ingest.attrs['guard.signal.id'], signal.signal_id);

    const attempts = spans
      .filter((s) => s.name === 'webhook attempt')
      .sort((a, b) => a.attrs['guard.attempt'] - b.attrs['guard.attempt']);
    assert.equal(attempts.length, 2, 'one span per attempt');
    for (const [i, span] of attempts.entries()) {
      assert.equal(span.parentSpanId, ingest.spanId, 'each attempt is a child of the ingest span');
      assert.equal(span.kind, 3, 'CLIENT');
      assert.equal(span.attrs['guard.attempt'], i + 1);
      assert.equal(span.attrs['guard.delivery.id'], traced[i].headers['guard-delivery']);
      assert.equal(span.attrs['server.address'], new URL(receiver.url('/')).host, 'host and port, never the path');
      // The receiver got this attempt's span as its parent.
      const [, traceId, spanId] = TRACEPARENT.exec(String(traced[i].headers.traceparent)) ?? [];
      assert.equal(traceId, TRACE_ID);
      assert.equal(spanId, span.spanId);
    }
    assert.equal(attempts[0].attrs['http.response.status_code'], 503);
    assert.equal(attempts[0].status?.code, 2, 'the failed attempt is an error span');
    assert.equal(attempts[1].attrs['http.response.status_code'], 204);
    assert.notEqual(attempts[1].status?.code, 2);

    const stored = await apiCall(server, 'GET', `/v1/signals/${signal.signal_id}`, tenant.adminToken);
    assert.equal(
      stored.json.traceparent,
      `00-${TRACE_ID}-${ingest.spanId}-01`,
      "the signal keeps the ingest span's traceparent",
    );
  });

  it('starts a new trace for a signal without a traceparent, or with an invalid one', async () => {
    receiver.on('/fresh', () => ({ status: 204 }));
    const other = await newTenant(server);
    await createEndpoint(server, other.adminToken, { url: receiver.url('/fresh') });
    await fetch(`${server.url}/v1/signals`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${other.agentKey}`,
        'content-type': 'application/json',
        traceparent: 'garbage',
      },
      body: JSON.stringify({ signal_type: 't', severity: 1, description: 'x', identity_id: 'u', identity_name: 'n' }),
    });
    const [hit] = await receiver.waitForHits('/fresh', 1);
    const [, traceId] = TRACEPARENT.exec(String(hit.headers.traceparent)) ?? [];
    assert.ok(traceId && traceId !== TRACE_ID);
    await waitFor(
      () => collector.spans().some((s) => s.traceId === traceId && s.name === 'POST /v1/signals' && !s.parentSpanId),
      'a root ingest span',
    );
  });
});

describe('with OTLP/HTTP protobuf (the default protocol)', () => {
  it('exports protobuf to <endpoint>/v1/traces', async () => {
    const collector = await Collector.start();
    const server = await startWebhookServer({ caPem: tls.caPem, env: otel(collector, 'http/protobuf') });
    try {
      const tenant = await newTenant(server);
      receiver.on('/proto', () => ({ status: 204 }));
      await createEndpoint(server, tenant.adminToken, { url: receiver.url('/proto') });
      await postSignal(server, tenant.agentKey);
      await receiver.waitForHits('/proto', 1);
      await waitFor(() => collector.exports.length > 0, 'an export');
      const [e] = collector.exports;
      assert.equal(e.path, '/v1/traces');
      assert.equal(e.contentType, 'application/x-protobuf');
      assert.ok(e.body.length > 0);
    } finally {
      await server.close();
      await collector.close();
    }
  });
});

describe('without OTEL_* (the default: off)', () => {
  let server: WebhookServer;
  let tenant: Tenant;
  before(async () => {
    server = await startWebhookServer({ caPem: tls.caPem });
    tenant = await newTenant(server);
    receiver.on('/untraced', () => ({ status: 204 }));
    await createEndpoint(server, tenant.adminToken, { url: receiver.url('/untraced') });
  });
  after(async () => {
    await server?.close();
  });

  it("makes no span and passes the agent's traceparent through to the deliveries unchanged", async () => {
    assert.equal(server.deps.tracer.enabled, false);
    const res = await fetch(`${server.url}/v1/signals`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tenant.agentKey}`,
        'content-type': 'application/json',
        traceparent: AGENT_TRACEPARENT,
      },
      body: JSON.stringify({ signal_type: 't', severity: 1, description: 'x', identity_id: 'u', identity_name: 'n' }),
    }).then((r) => r.json());
    const [hit] = await receiver.waitForHits('/untraced', 1);
    assert.equal(hit.headers.traceparent, AGENT_TRACEPARENT);
    const stored = await apiCall(server, 'GET', `/v1/signals/${res.signal_id}`, tenant.adminToken);
    assert.equal(stored.json.traceparent, AGENT_TRACEPARENT);
  });

  it('sends no traceparent for a signal that came without one', async () => {
    await postSignal(server, tenant.agentKey);
    const hits = await receiver.waitForHits('/untraced', 2);
    assert.equal(hits[1].headers.traceparent, undefined);
  });
});
