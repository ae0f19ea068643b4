// Issue 21, items 1 to 3. An endpoint may present a client certificate (mTLS: the PEM chain
// in clear, its key sealed like the secret), trust a CA bundle of its own instead of the
// system store, and authenticate to its receiver (HTTP Basic or OAuth2 client credentials:
// the whole setting sealed, as it holds a password or a client secret). The client
// certificate's expiry is kept beside it, with the threshold last announced
// (endpoint.certificate_expiring: 30, 7, 1 days before; 0: none yet). Each attempt also
// records the Standard Webhooks signature it was sent with (webhook-signature), beside the
// Guard-Signature that 0009 records.

import type { Kysely, Migration } from 'kysely';
import type { Engine } from '../engine.ts';
import { columnTypes } from './column-types.ts';

export function endpointTlsAuthStandardWebhooks(engine: Engine): Migration {
  const t = columnTypes(engine);
  return {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable('webhook_endpoints').addColumn('tls_client_certificate', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('tls_client_key_sealed', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('tls_ca_certificates', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('auth_sealed', t.text).execute();
      await db.schema.alterTable('webhook_endpoints').addColumn('tls_client_certificate_expires_at', t.text).execute();
      await db.schema
        .alterTable('webhook_endpoints')
        .addColumn('tls_client_certificate_alerted', 'integer', (c) => c.notNull().defaultTo(0))
        .execute();
      await db.schema.alterTable('webhook_attempts').addColumn('standard_signature', t.text).execute();
    },
  };
}
