// Custom headers at rest. An endpoint's custom headers often carry a credential for the
// receiver (`Authorization: Bearer …`), so the whole name → value map is sealed like the
// endpoint secret: AES-256-GCM under the webhook key derived from the master key, with the
// endpoint id (and a purpose suffix) as associated data, so a sealed map copied onto another
// endpoint, or into its secret column, won't open.
//
// `webhook_endpoints.headers` holds either the sealed map (`v1.…`, see secret-box.ts) or, in
// rows an earlier release wrote, a JSON object in clear (`{…}`): the first character tells
// them apart, so both read correctly until sealPlaintextHeaders has rewritten the old rows.

import { type Db, engineOf, withStatements } from '../db/index.ts';
import { open, seal } from '../kernel/secret-box.ts';

/** What members read instead of a value; no stored value can equal it (values are Latin-1). */
export const MASKED_HEADER_VALUE = '\u2022\u2022\u2022\u2022';

const aad = (endpointId: string) => `${endpointId}/headers`;

export function sealHeaders(key: Buffer, endpointId: string, headers: Record<string, string>): string {
  return seal(key, JSON.stringify(headers), aad(endpointId));
}

export function openHeaders(key: Buffer, endpointId: string, stored: string): Record<string, string> {
  const json = stored.startsWith('{') ? stored : open(key, stored, aad(endpointId));
  return JSON.parse(json) as Record<string, string>;
}

/**
 * An endpoint URL as people other than admins see it: every query value and a userinfo
 * password replaced by MASKED_HEADER_VALUE (receivers take tokens there as often as in
 * headers). Names, host and path stay, so the endpoint can still be told apart.
 */
export function maskUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return MASKED_HEADER_VALUE;
  }
  if (parsed.search === '' && parsed.password === '') return url;
  const query = [...parsed.searchParams.keys()].map((k) => `${encodeURIComponent(k)}=${MASKED_HEADER_VALUE}`);
  const user = parsed.username ? `${parsed.username}${parsed.password ? `:${MASKED_HEADER_VALUE}` : ''}@` : '';
  return `${parsed.protocol}//${user}${parsed.host}${parsed.pathname}${query.length > 0 ? `?${query.join('&')}` : ''}`;
}

/** The names, each value replaced by MASKED_HEADER_VALUE. */
export function maskHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.keys(headers).map((name) => [name, MASKED_HEADER_VALUE]));
}

/**
 * Seals the header maps an earlier release stored in clear; returns how many rows it sealed.
 * Runs at start-up (it needs the master key, which migrations do not have). Each row is
 * rewritten only if it still holds the text that was read, so an edit made meanwhile wins.
 * With secure_delete the old text is zeroed in the database pages, and the WAL that still
 * holds it is checkpointed and truncated, so no copy of it stays in the data dir.
 */
export async function sealPlaintextHeaders(db: Db, key: Buffer): Promise<number> {
  if (engineOf(db) === 'postgres') {
    // No release stored them in clear on PostgreSQL; rows copied over from one are sealed the same way.
    return db.transaction().execute(async (trx) => {
      const rows = await trx
        .selectFrom('webhook_endpoints')
        .select(['id', 'headers'])
        .where('headers', 'like', '{%')
        .execute();
      for (const row of rows)
        await trx
          .updateTable('webhook_endpoints')
          .set({ headers: sealHeaders(key, row.id, JSON.parse(row.headers) as Record<string, string>) })
          .where('id', '=', row.id)
          .where('headers', '=', row.headers)
          .execute();
      return rows.length;
    });
  }
  return withStatements(db, (sql) => {
    const rows = sql.all<{ id: string; headers: string }>(
      "select id, headers from webhook_endpoints where headers like '{%'",
    );
    if (rows.length === 0) return 0;
    const secureDelete = sql.get<{ secure_delete: number }>('pragma secure_delete')?.secure_delete ?? 0;
    sql.db.exec('pragma secure_delete = on');
    try {
      sql.db.exec('BEGIN IMMEDIATE');
      try {
        for (const row of rows) {
          const headers = JSON.parse(row.headers) as Record<string, string>;
          sql.run(
            'update webhook_endpoints set headers = ? where id = ? and headers = ?',
            sealHeaders(key, row.id, headers),
            row.id,
            row.headers,
          );
        }
        sql.db.exec('COMMIT');
      } catch (error) {
        if (sql.db.isTransaction) sql.db.exec('ROLLBACK');
        throw error;
      }
      sql.db.exec('pragma wal_checkpoint(TRUNCATE)');
    } finally {
      sql.db.exec(`pragma secure_delete = ${secureDelete}`);
    }
    return rows.length;
  });
}
