// The export and import commands' IO (main.ts parses, transfer/ does the work): which data
// dir, database and store they open, the data dir locks they take (a serving guard-server
// must be stopped first: the export is then one consistent state, and nothing writes to the
// target while it fills), and the archive file (0600: it holds the master key and every
// secret of the deployment).

import { createReadStream, createWriteStream } from 'node:fs';
import { access, link, mkdir, rm, unlink } from 'node:fs/promises';
import type { Readable, Writable } from 'node:stream';
import type { ServerConfig } from './config.ts';
import { openDatabase } from './db/index.ts';
import { lockDataDir } from './kernel/data-dir-lock.ts';
import { loadMasterKey } from './kernel/master-key.ts';
import { SERVER_VERSION } from './kernel/version.ts';
import { openObjectStore } from './objects/index.ts';
import { exportData, importData, type TransferSummary } from './transfer/index.ts';

/** Presigned URLs are not made by export or import: the stores need no public URL. */
const NO_PUBLIC_URL = () => {
  throw new Error('export and import issue no presigned URLs');
};

async function withLock<T>(dataDir: string, fn: () => Promise<T>): Promise<T> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  const lock = await lockDataDir(dataDir);
  try {
    return await fn();
  } finally {
    await lock.release();
  }
}

/** `guard-server export --out FILE|-`: the deployment of `config` as an archive. */
export async function runExport(config: ServerConfig, out: string): Promise<TransferSummary> {
  if (config.database.engine !== 'sqlite')
    throw new Error(
      'export reads an embedded deployment (SQLite in --data-dir); a PostgreSQL database is backed up with pg_dump',
    );
  return withLock(config.dataDir, async () => {
    const db = await openDatabase(config, { migrations: 'latest' });
    const masterKey = loadMasterKey(config);
    const store = await openObjectStore(config.objectStore, config.dataDir, {
      key: masterKey.derive('presign'),
      publicUrl: NO_PUBLIC_URL,
    });
    // A file appears under its name only once complete; never over an existing one.
    const partial = `${out}.partial`;
    if (
      out !== '-' &&
      (await access(out).then(
        () => true,
        () => false,
      ))
    )
      throw new Error(`${out} exists: export never overwrites a file`);
    const sink: Writable = out === '-' ? process.stdout : createWriteStream(partial, { flags: 'wx', mode: 0o600 });
    try {
      const summary = await exportData(
        { db, store, dataDir: config.dataDir, serverVersion: SERVER_VERSION, now: () => new Date() },
        sink,
      );
      if (out !== '-') {
        await link(partial, out); // fails if `out` appeared meanwhile
        await unlink(partial);
      }
      return summary;
    } catch (error) {
      if (out !== '-') await rm(partial, { force: true });
      throw error;
    } finally {
      store.close();
      await db.destroy();
    }
  });
}

/** `guard-server import --in FILE|-`: an archive into the (empty) deployment of `config`. */
export async function runImport(config: ServerConfig, from: string): Promise<TransferSummary> {
  return withLock(config.dataDir, async () => {
    const archive: Readable = from === '-' ? process.stdin : createReadStream(from);
    let opened: Awaited<ReturnType<typeof openTarget>> | undefined;
    const openTarget = async () => {
      // An empty target gets this release's schema (PostgreSQL too: import is a migration).
      const db = await openDatabase(config, { migrations: 'latest' });
      const masterKey = loadMasterKey(config);
      const store = await openObjectStore(config.objectStore, config.dataDir, {
        key: masterKey.derive('presign'),
        publicUrl: NO_PUBLIC_URL,
      });
      return { db, store };
    };
    try {
      return await importData(archive, {
        dataDir: config.dataDir,
        now: () => new Date(),
        open: async () => {
          opened = await openTarget();
          return opened;
        },
      });
    } finally {
      archive.destroy();
      opened?.store.close();
      await opened?.db.destroy();
    }
  });
}

/** What the commands print on stderr when done. */
export function describeSummary(verb: 'exported' | 'imported', s: TransferSummary): string {
  const rows = Object.entries(s.tables)
    .map(([table, n]) => `${table} ${n}`)
    .join(', ');
  const missing =
    s.missingObjects.length > 0
      ? `\n${s.missingObjects.length} bundle(s) had no object in the source store (their download answers 410 as before): ${s.missingObjects.join(', ')}`
      : '';
  return `guard-server: ${verb} ${s.objects} object(s), ${s.objectBytes} bytes; rows: ${rows}${missing}\n`;
}
