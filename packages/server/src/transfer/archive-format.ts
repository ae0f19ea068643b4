// The export archive (`guard-server export`, read by `guard-server import`): one tar stream,
// in this order, so that import can check and write as it reads, in bounded memory:
//   guard-export/manifest.json          format, version, counts, and the objects to expect
//   guard-export/master.key             the master key (endpoint secrets stay decryptable)
//   guard-export/objects/<object key>   each registered bundle's object, its bytes
//   guard-export/tables/<table>/<n>.ndjson  rows, one JSON object a line, tables in the order
//                                        their foreign keys allow (parents first)
// The archive holds the master key and every secret the database holds (hashed tokens,
// sealed endpoint secrets): it is written 0600 and must be kept like the data dir itself.

export const ARCHIVE_FORMAT = 'guard-export';
export const ARCHIVE_VERSION = 1;
export const ROOT = 'guard-export';
export const MANIFEST_ENTRY = `${ROOT}/manifest.json`;
export const MASTER_KEY_ENTRY = `${ROOT}/master.key`;
export const OBJECTS_PREFIX = `${ROOT}/objects/`;
export const TABLES_PREFIX = `${ROOT}/tables/`;

/**
 * Every table, parents before children. Export refuses a database with a table not listed
 * here (a newer schema would otherwise lose it silently); a new migration's table is added.
 */
export const TABLES = [
  'tenants',
  'users',
  'mfa_recovery_codes',
  'webauthn_credentials',
  'sso_connections',
  'sso_domains',
  'scim_tokens',
  'scim_groups',
  'scim_group_members',
  'api_tokens',
  'sessions',
  'password_links',
  'enrollment_tokens',
  'agents',
  'uploads',
  'bundles',
  'bundle_batches',
  'bundle_requests',
  'collection_schedules',
  'bundle_insights',
  'audit_log',
  'signals',
  'webhook_endpoints',
  'webhook_endpoint_rates',
  'webhook_endpoint_stats',
  'webhook_replays',
  'webhook_deliveries',
  'webhook_attempts',
  'detection_policies',
  'login_failures',
  'auth_flows',
  'analyzer_rules',
] as const;
export type TableName = (typeof TABLES)[number];

/** Rows per ndjson part: each part is held in memory once (a tar entry needs its size first). */
export const ROWS_PER_PART = 5000;

export interface ArchiveObject {
  key: string;
  size: number;
  sha256: string;
}

export interface ArchiveManifest {
  format: typeof ARCHIVE_FORMAT;
  version: typeof ARCHIVE_VERSION;
  server_version: string;
  exported_at: string;
  /** Rows per table, as exported. */
  tables: Record<TableName, number>;
  /** The objects that follow, in order, with the size and SHA-256 each must have. */
  objects: ArchiveObject[];
  /** Bundles whose object the source store no longer had (their download was already 410). */
  missing_objects: string[];
  /**
   * The oldest delivery or attempt (RFC 3339), or null: a PostgreSQL target makes its monthly
   * partitions from that month on before the rows go in.
   */
  oldest_delivery_at: string | null;
}

export function tablePartName(table: TableName, part: number): string {
  return `${TABLES_PREFIX}${table}/${String(part).padStart(6, '0')}.ndjson`;
}
