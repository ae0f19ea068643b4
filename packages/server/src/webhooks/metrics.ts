// Prometheus metrics of webhook delivery (/metrics). One registry per app, so several
// servers in one test process do not share counters. Queue depth and the age of the oldest
// due delivery are read from the database at scrape time: they stay true across replicas.

import { sql } from 'kysely';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { Db } from '../db/index.ts';

export interface WebhookMetrics {
  registry: Registry;
  deliveries: Counter<'outcome'>;
  attemptDuration: Histogram<string>;
}

export function createMetrics(db: Db, now: () => Date): WebhookMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'guard_server_' });
  const deliveries = new Counter({
    name: 'guard_webhook_deliveries_total',
    help: 'Webhook delivery attempts by outcome: succeeded, retrying (failed, will retry), failed (gave up)',
    labelNames: ['outcome'],
    registers: [registry],
  });
  const attemptDuration = new Histogram({
    name: 'guard_webhook_attempt_duration_seconds',
    help: 'Duration of webhook HTTP attempts, from send to response (or error)',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15],
    registers: [registry],
  });
  new Gauge({
    name: 'guard_webhook_queue_depth',
    help: 'Deliveries waiting or in flight, by state',
    labelNames: ['state'],
    registers: [registry],
    async collect() {
      // Literal states, so SQLite can answer from the partial indexes (migration 0004).
      const { rows } = await sql<{ state: string; n: number }>`
        select 'pending' as state, count(*) as n from webhook_deliveries where state = 'pending'
        union all
        select 'delivering', count(*) from webhook_deliveries where state = 'delivering'`.execute(db);
      this.reset();
      this.set({ state: 'pending' }, 0);
      this.set({ state: 'delivering' }, 0);
      for (const r of rows) this.set({ state: r.state }, Number(r.n));
    },
  });
  new Gauge({
    name: 'guard_webhook_oldest_due_seconds',
    help: 'Age of the oldest pending delivery that is due (0 when none): how far delivery lags',
    registers: [registry],
    async collect() {
      const nowIso = now().toISOString();
      const row = (
        await sql<{ oldest: string | null }>`
          select min(next_attempt_at) as oldest from webhook_deliveries
          where state = 'pending' and next_attempt_at <= ${nowIso}`.execute(db)
      ).rows[0];
      this.set(row?.oldest ? Math.max(0, (now().getTime() - Date.parse(row.oldest as string)) / 1000) : 0);
    },
  });
  return { registry, deliveries, attemptDuration };
}
