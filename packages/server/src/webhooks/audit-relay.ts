// Audit log entries to webhooks (issue 22, item 7): the opt-in operational event `audit.event`,
// whose data is the entry (id, at, actor id and role, action, target, tenant), delivered to the
// tenant's enabled endpoints that subscribe to it through the same outbox, queue and worker as
// signals (signed, retried, logged), so a SIEM receives the audit trail like signals.
//
// Why a relay here, not a call in audit(): the webhooks capability writes audit entries itself
// (endpoint failing, disabled, replays), so audit/ must not import webhooks/ (no cycles), and an
// entry is often written inside the transaction of the change it records, which may still roll
// back. So this relay, on the maintenance timer (--gc-interval, a minute by default; one replica
// at a time: db exclusiveJob), reads the committed entries of the last AUDIT_RELAY_LOOKBACK_MS of
// the tenants that have a subscribed endpoint, and writes each one's event once.
//
// Once: the event's id derives from the entry's (kernel/ids.ts derivedTimeOrderedId), so an
// entry whose event row exists is skipped, and a second writer would hit the primary key. No
// stored cursor is needed, and an entry committed late (a long transaction, another replica's
// clock a little behind) is still found while it is inside the window. What the window accepts:
// entries of a server stopped for longer than it are not relayed, and a tenant that subscribes
// its first endpoint receives the window's recent entries. Entries of no tenant (support staff
// listing every tenant's bundles) go nowhere.

import type { AuditEvent } from '@guard/webhooks';
import { sql } from 'kysely';
import type { AuditTable, Db, SignalTable } from '../db/index.ts';
import { derivedTimeOrderedId } from '../kernel/ids.ts';
import { EVENT_BITS } from './subscriptions.ts';

export const EVENT_AUDIT = 'audit.event';
/** How far back the relay looks for entries without their event: well over the maintenance interval. */
export const AUDIT_RELAY_LOOKBACK_MS = 60 * 60 * 1000;
/** Entries read per query. */
const RELAY_PAGE_ROWS = 500;

/** The event row of an audit entry (a synthetic signals row, like every operational event). */
export function auditEventRow(entry: AuditTable & { tenant_id: string }, at: string): SignalTable {
  const data: AuditEvent['data'] = {
    event_id: derivedTimeOrderedId('evt', Date.parse(entry.at), entry.id),
    id: entry.id,
    at: entry.at,
    actor_id: entry.actor_id,
    actor_role: entry.actor_role,
    action: entry.action,
    target: entry.target,
    tenant_id: entry.tenant_id,
  };
  return {
    id: data.event_id,
    tenant_id: entry.tenant_id,
    agent_id: null,
    server_id: 'guard',
    server_name: 'guard-server',
    signal_type: EVENT_AUDIT,
    severity: 1,
    description: `${entry.action} of ${entry.target} by ${entry.actor_id} (${entry.actor_role})`,
    identity_id: entry.actor_id,
    identity_name: entry.actor_role,
    environment: 'guard',
    created_at: entry.at,
    received_at: at,
    is_test: 1,
    event_type: EVENT_AUDIT,
    event_data: JSON.stringify(data),
  };
}

/**
 * Writes the event of every entry of the window not relayed yet, for tenants with a subscribed
 * enabled endpoint; returns how many. `write` is the signal outbox's (fan-out to subscribers).
 */
export async function relayAuditEntries(
  db: Db,
  write: (event: SignalTable) => Promise<unknown>,
  now: Date,
): Promise<number> {
  const since = new Date(now.getTime() - AUDIT_RELAY_LOOKBACK_MS).toISOString();
  const subscribed = db
    .selectFrom('webhook_endpoints')
    .select('tenant_id')
    .where('enabled', '=', 1)
    .where(sql<boolean>`(${sql.ref('event_mask')} & ${EVENT_BITS['audit.event']}) <> 0`);
  let after: { at: string; id: string } | undefined;
  let relayed = 0;
  for (;;) {
    let page = db
      .selectFrom('audit_log')
      .selectAll()
      .where('at', '>=', since)
      .where('tenant_id', 'in', subscribed)
      .orderBy('at')
      .orderBy('id')
      .limit(RELAY_PAGE_ROWS);
    if (after) {
      const { at, id } = after;
      page = page.where((eb) => eb.or([eb('at', '>', at), eb.and([eb('at', '=', at), eb('id', '>', id)])]));
    }
    const entries = (await page.execute()) as (AuditTable & { tenant_id: string })[];
    if (entries.length === 0) return relayed;
    const rows = entries.map((e) => auditEventRow(e, now.toISOString()));
    const written = await db
      .selectFrom('signals')
      .select('id')
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    const done = new Set(written.map((r) => r.id));
    const fresh = rows.filter((r) => !done.has(r.id));
    // One group commit for the page (the outbox batches what arrives in one turn).
    await Promise.all(fresh.map((r) => write(r)));
    relayed += fresh.length;
    if (entries.length < RELAY_PAGE_ROWS) return relayed;
    const last = entries[entries.length - 1];
    after = { at: last.at, id: last.id };
  }
}
