// Audit log entries as the opt-in webhook event `audit.event` (webhooks/audit-relay.ts), end
// to end against a real HTTPS receiver on loopback, on the run's engine: an entry reaches the
// tenant's endpoints that subscribe to it, signed (verified with the SDK), and not an endpoint
// that does not, nor another tenant's; each entry once, however often the relay runs; an entry
// older than the relay's window is not sent.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { constructGuardEvent, type GuardEvent } from '@guard/webhooks';
import { AUDIT_RELAY_LOOKBACK_MS } from '../src/webhooks/audit-relay.ts';
import { relayAuditEntries } from '../src/webhooks/index.ts';
import { waitForDeliveriesMade } from './delivery-waits.ts';
import {
  apiCall,
  createEndpoint,
  makeTestTls,
  newTenant,
  Receiver,
  startWebhookServer,
  type TestTls,
  type WebhookServer,
} from './webhook-harness.ts';

let tls: TestTls;
let receiver: Receiver;
let server: WebhookServer;

before(async () => {
  tls = await makeTestTls();
  receiver = await Receiver.start(tls);
  server = await startWebhookServer({ caPem: tls.caPem });
});
after(async () => {
  await server?.close();
  await receiver?.close();
});

const relay = () => relayAuditEntries(server.deps.db, (event) => server.deps.outbox.write(event), server.clock.now());

describe('audit.event: audit log entries to subscribed endpoints', () => {
  it('delivers each entry, signed, to the subscribed endpoints of its tenant only, once', async () => {
    const t = await newTenant(server);
    const other = await newTenant(server);
    const siem = await createEndpoint(server, t.adminToken, {
      name: 'SIEM',
      url: receiver.url('/audit-siem'),
      event_types: ['audit.event'],
    });
    const plain = await createEndpoint(server, t.adminToken, { url: receiver.url('/audit-plain') });
    const elsewhere = await createEndpoint(server, other.adminToken, {
      url: receiver.url('/audit-other'),
      event_types: ['audit.event', 'signal_created'],
    });

    const added = await apiCall(server, 'POST', '/v1/users', t.adminToken, {
      email: 'audited@example.com',
      role: 'member',
    });
    assert.equal(added.status, 201, added.text);
    const exported = await apiCall(server, 'GET', '/v1/audit/export?format=jsonl', t.adminToken);
    assert.equal(exported.status, 200);
    const otherAdded = await apiCall(server, 'POST', '/v1/users', other.adminToken, {
      email: 'elsewhere@example.com',
      role: 'member',
    });
    assert.equal(otherAdded.status, 201);

    const entries = (await apiCall(server, 'GET', '/v1/audit', t.adminToken)).json.entries as {
      id: string;
      action: string;
    }[];
    assert.deepEqual(entries.map((e) => e.action).sort(), ['audit.export', 'user.create']);

    assert.ok((await relay()) >= 3, 'both tenants’ entries are relayed');
    assert.equal(await relay(), 0, 'a second run finds nothing new');
    await waitForDeliveriesMade(server, [siem.id, plain.id, elsewhere.id]);

    const events = receiver
      .hitsFor('/audit-siem')
      .map((hit) => {
        assert.equal(hit.headers['guard-event'], 'audit.event');
        return constructGuardEvent(hit.body, hit.headers, siem.secret);
      })
      .filter((e): e is Extract<GuardEvent, { event_type: 'audit.event' }> => e.event_type === 'audit.event');
    assert.equal(events.length, 2, 'one event per entry');
    for (const e of events) {
      const entry = entries.find((x) => x.id === e.data.id);
      assert.ok(entry, `the event of entry ${e.data.id}`);
      assert.equal(e.data.action, entry.action);
      assert.equal(e.tenant_id, t.tenantId);
      assert.equal(e.data.tenant_id, t.tenantId);
      assert.equal(e.data.actor_role, 'admin');
      assert.match(e.data.event_id, /^evt_[0-9a-f]{32}$/);
      assert.ok(e.console_url.endsWith('/console/support/audit'), e.console_url);
    }
    const created = events.find((e) => e.data.action === 'user.create');
    assert.equal(created?.data.target, added.json.id);
    assert.equal(receiver.hitsFor('/audit-plain').length, 0, 'an endpoint that did not subscribe receives none');

    const otherEvents = receiver
      .hitsFor('/audit-other')
      .map((hit) => constructGuardEvent(hit.body, hit.headers, elsewhere.secret));
    assert.ok(otherEvents.length >= 1);
    assert.ok(
      otherEvents.every((e) => e.tenant_id === other.tenantId),
      'another tenant’s endpoint receives its own entries only',
    );

    // The delivery log names the event type.
    const log = await apiCall(server, 'GET', `/v1/webhooks/deliveries?endpoint_id=${siem.id}`, t.adminToken);
    assert.equal(log.status, 200, log.text);
    assert.deepEqual(
      log.json.deliveries.map((d: { event_type: string; status: string }) => [d.event_type, d.status]),
      [
        ['audit.event', 'succeeded'],
        ['audit.event', 'succeeded'],
      ],
    );
  });

  it('leaves entries older than its window, and tenants with no subscribed endpoint', async () => {
    const t = await newTenant(server);
    const quiet = await newTenant(server);
    const siem = await createEndpoint(server, t.adminToken, {
      url: receiver.url('/audit-window'),
      event_types: ['audit.event'],
    });
    const old = new Date(server.clock.now().getTime() - AUDIT_RELAY_LOOKBACK_MS - 60_000).toISOString();
    await server.deps.db
      .insertInto('audit_log')
      .values([
        {
          id: 'au_too_old',
          at: old,
          actor_id: 'u_x',
          actor_role: 'admin',
          tenant_id: t.tenantId,
          action: 'user.role',
          target: 'u_y',
        },
        {
          id: 'au_unheard',
          at: server.clock.now().toISOString(),
          actor_id: 'u_z',
          actor_role: 'admin',
          tenant_id: quiet.tenantId,
          action: 'user.role',
          target: 'u_w',
        },
      ])
      .execute();
    await relay();
    await waitForDeliveriesMade(server, [siem.id]);
    assert.equal(receiver.hitsFor('/audit-window').length, 0);
    const rows = await server.deps.db
      .selectFrom('signals')
      .select('event_data')
      .where('event_type', '=', 'audit.event')
      .where('tenant_id', 'in', [t.tenantId, quiet.tenantId])
      .execute();
    assert.deepEqual(rows, [], 'no event row is written for them');
  });
});
