// `guard-server export`: a deployment's data as one streamed tar archive (archive-format.ts),
// to move an embedded deployment to PostgreSQL and S3 (`guard-server import`). It runs with
// the server stopped (main.ts takes the data dir's lock), so the rows and the objects it reads
// are one consistent state. Memory stays bounded: objects stream from the store, rows go out
// in parts of ROWS_PER_PART.

import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import tar from 'tar-stream';
import type { Db } from '../db/index.ts';
import type { ObjectStore } from '../objects/index.ts';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  type ArchiveManifest,
  type ArchiveObject,
  MANIFEST_ENTRY,
  MASTER_KEY_ENTRY,
  OBJECTS_PREFIX,
  ROWS_PER_PART,
  TABLES,
  type TableName,
  tablePartName,
} from './archive-format.ts';

export interface ExportSource {
  db: Db;
  store: ObjectStore;
  /** Holds master.key. */
  dataDir: string;
  serverVersion: string;
  now: () => Date;
}

export interface TransferSummary {
  tables: Record<TableName, number>;
  objects: number;
  objectBytes: number;
  missingObjects: string[];
}

/** Tables of the database that are not the migrator's own. */
async function tablesOf(db: Db): Promise<string[]> {
  const tables = await db.introspection.getTables();
  return tables.map((t) => t.name).filter((name) => !name.startsWith('kysely_'));
}

/** Only registered uploads move: a slot in progress would point at nothing in the new store. */
function rowFilter(table: TableName): string {
  return table === 'uploads' ? `and state = 'registered'` : '';
}

/** The rows of `table`, in parts of at most ROWS_PER_PART, by rowid. */
async function* rowParts(db: Db, table: TableName): AsyncGenerator<Record<string, unknown>[]> {
  let after = -1;
  for (;;) {
    const { rows } = await sql<Record<string, unknown>>`
      select rowid as "__rowid", * from ${sql.table(table)}
      where rowid > ${after} ${sql.raw(rowFilter(table))} order by rowid limit ${ROWS_PER_PART}`.execute(db);
    if (rows.length === 0) return;
    after = Number(rows[rows.length - 1].__rowid);
    yield rows.map(({ __rowid: _, ...row }) => ({ ...row }));
  }
}

async function countRows(db: Db, table: TableName): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    select count(*) as n from ${sql.table(table)} where 1 = 1 ${sql.raw(rowFilter(table))}`.execute(db);
  return Number(rows[0].n);
}

function addEntry(pack: tar.Pack, name: string, body: Buffer | string): Promise<void> {
  return new Promise((resolve, reject) => {
    pack.entry({ name, mode: 0o600 }, body, (error) => (error ? reject(error) : resolve()));
  });
}

export async function exportData(source: ExportSource, out: Writable): Promise<TransferSummary> {
  const { db, store } = source;
  const unknown = (await tablesOf(db)).filter((t) => !(TABLES as readonly string[]).includes(t));
  if (unknown.length > 0)
    throw new Error(`the database has tables this export does not know: ${unknown.join(', ')} (a newer schema?)`);

  const tables = {} as Record<TableName, number>;
  for (const table of TABLES) tables[table] = await countRows(db, table);

  // The objects of registered bundles, each checked against its row before it is promised. A
  // deleted bundle's row moves as the record of it; its object is gone and is not looked for.
  const objects: ArchiveObject[] = [];
  const missing: string[] = [];
  const bundles = await db
    .selectFrom('bundles')
    .select(['object_key', 'size', 'sha256'])
    .where('deleted_at', 'is', null)
    .orderBy('object_key')
    .execute();
  for (const b of bundles) {
    const stored = await store.verify(b.object_key);
    if (stored && stored.size === b.size && stored.sha256 === b.sha256)
      objects.push({ key: b.object_key, size: b.size, sha256: b.sha256 });
    else missing.push(b.object_key);
  }

  const oldest = await sql<{ at: string | null }>`
    select min(at) as at from (select min(created_at) as at from webhook_deliveries
      union all select min(started_at) from webhook_attempts)`.execute(db);
  const manifest: ArchiveManifest = {
    format: ARCHIVE_FORMAT,
    version: ARCHIVE_VERSION,
    server_version: source.serverVersion,
    exported_at: source.now().toISOString(),
    tables,
    objects,
    missing_objects: missing,
    oldest_delivery_at: oldest.rows[0]?.at ?? null,
  };
  const pack = tar.pack();
  const written = pipeline(pack, out);
  written.catch(() => {}); // awaited below; a failure of the sink also fails the entries
  let objectBytes = 0;
  try {
    await addEntry(pack, MANIFEST_ENTRY, `${JSON.stringify(manifest, null, 2)}\n`);
    await addEntry(pack, MASTER_KEY_ENTRY, await readFile(join(source.dataDir, 'master.key')));
    for (const object of objects) {
      const opened = await store.open(object.key);
      if (!opened || opened.size !== object.size) throw new Error(`object ${object.key} changed during the export`);
      const entry = pack.entry({ name: `${OBJECTS_PREFIX}${object.key}`, size: object.size, mode: 0o600 });
      await pipeline(opened.body, entry);
      objectBytes += object.size;
    }
    for (const table of TABLES) {
      let part = 0;
      for await (const rows of rowParts(db, table))
        await addEntry(pack, tablePartName(table, ++part), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    }
    pack.finalize();
  } catch (error) {
    pack.destroy(error as Error);
    throw error;
  }
  await written;
  return { tables, objects: objects.length, objectBytes, missingObjects: missing };
}
