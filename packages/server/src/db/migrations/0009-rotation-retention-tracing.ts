// Issue 14, items 1, 6 and 7. Secret rotation: the secret being replaced, sealed like the
// current one, kept until its grace period ends (then erased), and the test event that
// proves the new one. Each attempt records the Guard-Signature and traceparent it was
// sent with (the attempt view shows them as sent, whatever the secret is now). A signal
// keeps the agent's traceparent, and when its payload was erased. A tenant may keep its
// delivery log for fewer days than the server's default (or more, up to its maximum).

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function rotationRetentionTracing(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_sealed', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('previous_secret_expires_at', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('rotation_started_at', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('rotation_proof_signal_id', t.text).execute();
      await db.schema.alterTable('webhook_attempts').addColumn('signature', t.text).execute();
      await db.schema.alterTable('webhook_attempts').addColumn('traceparent', t.text).execute();
      await db.schema.alterTable('signals').addColumn('traceparent', t.text).execute();
      await db.schema.alterTable('signals').addColumn('erased_at', t.text).execute();
      await db.schema.alterTable('tenants').addColumn('delivery_retention_days', 'integer').execute();
    },
  };
}
