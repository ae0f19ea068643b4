// `guard-server import`: reads an export archive (archive-format.ts) into an empty target —
// the database `--database` names (or the SQLite file of `--data-dir`) and the configured
// object store — as it streams:
//   1. the manifest: a format and version this release reads;
//   2. the master key: written to the target data dir, or checked against the one there
//      (endpoint secrets and custom headers are sealed under it: another key could not open
//      them); only then is the target opened, and it must hold no tenant and no user;
//   3. the objects: each put into the store, which refuses one whose size or SHA-256 is not
//      the manifest's (so a bundle downloads byte-identical after the move);
//   4. the rows: all tables in one transaction, parents first, so a failure leaves the
//      database as empty as it was; the counts are checked against the manifest before it
//      commits.

import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import tar from 'tar-stream';
import { type Database, type Db, engineOf } from '../db/index.ts';
import type { ObjectStore } from '../objects/index.ts';
import { ensurePartitions } from '../webhooks/index.ts';
import {
  ARCHIVE_FORMAT,
  ARCHIVE_VERSION,
  type ArchiveManifest,
  type ArchiveObject,
  MANIFEST_ENTRY,
  MASTER_KEY_ENTRY,
  OBJECTS_PREFIX,
  TABLES,
  TABLES_PREFIX,
  type TableName,
} from './archive-format.ts';
import type { TransferSummary } from './export.ts';

export class ImportError extends Error {}

export interface ImportTarget {
  db: Db;
  store: ObjectStore;
}

/** Rows per INSERT (SQLite allows 32766 bound values; the widest table, bundle_requests, has 20 columns). */
const INSERT_BATCH = 500;
/** The largest manifest or ndjson part read into memory. */
const MAX_TEXT_ENTRY_BYTES = 256 * 1024 * 1024;

/** One member of the archive being read: its header, and its bytes as a stream. */
type Entry = AsyncIterable<Buffer> & { header: { name: string } };

async function text(entry: Entry): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of entry) {
    size += (chunk as Buffer).length;
    if (size > MAX_TEXT_ENTRY_BYTES) throw new ImportError(`${entry.header.name} is too large`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parseManifest(raw: string): ArchiveManifest {
  let doc: ArchiveManifest;
  try {
    doc = JSON.parse(raw) as ArchiveManifest;
  } catch {
    throw new ImportError('the archive manifest is not JSON');
  }
  if (doc?.format !== ARCHIVE_FORMAT) throw new ImportError('not a guard-server export archive');
  if (doc.version !== ARCHIVE_VERSION)
    throw new ImportError(`export format version ${doc.version}; this release reads version ${ARCHIVE_VERSION}`);
  return doc;
}

/**
 * Writes the archive's master key into the target data dir, or checks it is the one already
 * there. True when it wrote it (so a refused import can take it back).
 */
async function placeMasterKey(dataDir: string, key: Buffer): Promise<boolean> {
  const path = join(dataDir, 'master.key');
  const existing = await readFile(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined;
    throw error;
  });
  if (existing === undefined) {
    await writeFile(path, key, { flag: 'wx', mode: 0o600 });
    return true;
  }
  if (existing.toString().trim() !== key.toString().trim())
    throw new ImportError(
      `${path} holds another master key than the exported one: the imported endpoint secrets could not be decrypted with it (import into a data dir without master.key, or with the same one)`,
    );
  return false;
}

async function assertEmpty(db: Db): Promise<void> {
  for (const table of ['tenants', 'users'] as const) {
    const row = await db
      .selectFrom(table)
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    if (Number(row.n) > 0)
      throw new ImportError(`the target database already has ${table}: import only into an empty deployment`);
  }
}

async function insertRows(trx: Kysely<Database>, table: TableName, rows: Record<string, unknown>[]): Promise<void> {
  for (let i = 0; i < rows.length; i += INSERT_BATCH)
    await trx
      .insertInto(table)
      .values(rows.slice(i, i + INSERT_BATCH) as never)
      .execute();
}

/**
 * PostgreSQL keeps deliveries and attempts in monthly partitions (a row of a month without one
 * lands in the default partition, which then blocks that month's): they are made for every
 * month from the oldest imported row's to two months ahead, before any row goes in.
 */
async function makePartitions(db: Db, oldest: string | null, now: Date): Promise<void> {
  const from = oldest ? new Date(oldest) : now;
  for (let m = new Date(Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), 1)); m <= now; ) {
    await ensurePartitions(db, m);
    m = new Date(Date.UTC(m.getUTCFullYear(), m.getUTCMonth() + 1, 1));
  }
  await ensurePartitions(db, now);
}

/**
 * Imports `archive` into the target `open` returns, once the master key is in `dataDir`.
 * `open` is called once, after the key is placed: opening a target may create a key.
 */
export async function importData(
  archive: Readable,
  options: { dataDir: string; open: () => Promise<ImportTarget>; now: () => Date },
): Promise<TransferSummary> {
  const extract = tar.extract();
  archive.pipe(extract);
  archive.on('error', (error) => extract.destroy(error));
  const entries = extract[Symbol.asyncIterator]();
  const next = async (): Promise<Entry | undefined> => {
    const r = await entries.next();
    return r.done ? undefined : (r.value as Entry);
  };

  let entry = await next();
  if (entry?.header.name !== MANIFEST_ENTRY) throw new ImportError('the archive does not start with its manifest');
  const manifest = parseManifest(await text(entry));
  entry = await next();
  if (entry?.header.name !== MASTER_KEY_ENTRY)
    throw new ImportError('the archive has no master key after its manifest');
  const placed = await placeMasterKey(options.dataDir, Buffer.from(await text(entry)));
  const target = await options.open();
  try {
    await assertEmpty(target.db);
  } catch (error) {
    // Not this deployment's key to leave behind.
    if (placed) await rm(join(options.dataDir, 'master.key'), { force: true });
    throw error;
  }

  const expected = new Map<string, ArchiveObject>(manifest.objects.map((o) => [o.key, o]));
  let objects = 0;
  let objectBytes = 0;
  entry = await next();
  while (entry?.header.name.startsWith(OBJECTS_PREFIX)) {
    const key = entry.header.name.slice(OBJECTS_PREFIX.length);
    const want = expected.get(key);
    if (!want) throw new ImportError(`the archive holds an object its manifest does not list: ${key}`);
    await target.store.put(key, entry, { size: want.size, sha256: want.sha256 });
    expected.delete(key);
    objects += 1;
    objectBytes += want.size;
    entry = await next();
  }
  if (expected.size > 0)
    throw new ImportError(`the archive ends its objects without ${expected.size} the manifest lists`);

  if (engineOf(target.db) === 'postgres') await makePartitions(target.db, manifest.oldest_delivery_at, options.now());
  const counts = Object.fromEntries(TABLES.map((t) => [t, 0])) as Record<TableName, number>;
  await target.db.transaction().execute(async (trx) => {
    let order = 0;
    while (entry) {
      const name = entry.header.name;
      if (!name.startsWith(TABLES_PREFIX)) throw new ImportError(`unexpected entry ${name} among the tables`);
      const table = name.slice(TABLES_PREFIX.length).split('/')[0] as TableName;
      const at = TABLES.indexOf(table);
      if (at < 0) throw new ImportError(`the archive has rows of an unknown table ${table}`);
      if (at < order) throw new ImportError(`table ${table} comes after a table that refers to it`);
      order = at;
      const rows = (await text(entry))
        .split('\n')
        .filter((line) => line !== '')
        .map((line) => JSON.parse(line) as Record<string, unknown>);
      await insertRows(trx, table, rows);
      counts[table] += rows.length;
      entry = await next();
    }
    // An archive of an earlier release lacks the tables it did not have yet.
    for (const table of TABLES)
      if (counts[table] !== (manifest.tables[table] ?? 0))
        throw new ImportError(
          `${table}: ${counts[table]} rows in the archive, the manifest says ${manifest.tables[table]}`,
        );
  });
  return { tables: counts, objects, objectBytes, missingObjects: manifest.missing_objects };
}
