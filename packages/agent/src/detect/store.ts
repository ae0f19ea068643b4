// Detection's durable state, one SQLite file `<state_dir>/detect/state.db` (node:sqlite, WAL,
// a 256 KiB page cache: the daemon's memory goal is tight and the working set is a few rows):
//   positions  where each source was read up to (the auth log's inode and offset, the journal's cursor)
//   files      the watched files' content hashes and owners (the baseline)
//   spool      signals not yet accepted by the service, in order (seq), each with its idempotency key
//   meta       the store's instance id, the last policy, counts of signals dropped while the spool was full
// A source's new position and the signals its lines made are written in one transaction, so a
// restart neither sends a signal twice nor misses a line: either both were kept or neither.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import type { SignalBody } from './signals.ts';

/** At most this many signals wait for the service; more are counted, not kept (docs/detection.md). */
export const SPOOL_MAX = 10_000;

export interface FileBaseline {
  sha256: string | null;
  uid: number | null;
}

export interface SpooledSignal {
  seq: number;
  /** The Idempotency-Key of its POST: the store's instance id and the signal's sequence number. */
  key: string;
  body: SignalBody;
}

export interface Changes {
  position?: { source: string; state: unknown };
  files?: [path: string, baseline: FileBaseline | null][];
  signals?: SignalBody[];
  meta?: [key: string, value: string][];
}

/** The store's file under state_dir. */
export const STORE_FILE = join('detect', 'state.db');

/**
 * What waits in the spool, read without the daemon (support-bundle collect's system.json): the
 * store opened read-only (WAL lets a reader in while the daemon writes). undefined when there
 * is no store (the daemon never ran).
 */
export function readSpool(stateDir: string): { depth: number; max: number; dropped?: number } | undefined {
  const path = join(stateDir, STORE_FILE);
  if (!existsSync(path)) return undefined;
  const db = new DatabaseSync(path, { readOnly: true });
  try {
    db.exec('PRAGMA busy_timeout = 2000');
    const depth = Number((db.prepare('SELECT count(*) AS n FROM spool').get() as { n: number }).n);
    const dropped = (db.prepare("SELECT value FROM meta WHERE key LIKE 'dropped:%'").all() as { value: string }[])
      .map((r) => Number(r.value))
      .reduce((a, b) => a + b, 0);
    return { depth, max: SPOOL_MAX, ...(dropped > 0 ? { dropped } : {}) };
  } finally {
    db.close();
  }
}

export class DetectionStore {
  readonly #db: DatabaseSync;
  readonly #instance: string;
  readonly #q: Record<
    | 'getPosition'
    | 'setPosition'
    | 'getFiles'
    | 'setFile'
    | 'deleteFile'
    | 'insert'
    | 'peek'
    | 'remove'
    | 'depth'
    | 'getMeta'
    | 'setMeta'
    | 'getDropped'
    | 'deleteDropped',
    StatementSync
  >;
  #depth: number;

  private constructor(db: DatabaseSync) {
    this.#db = db;
    db.exec(`
      PRAGMA journal_mode = WAL;
      PRAGMA synchronous = FULL;
      PRAGMA busy_timeout = 5000;
      PRAGMA cache_size = -256;
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS positions (source TEXT PRIMARY KEY, state TEXT NOT NULL);
      CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, sha256 TEXT, uid INTEGER);
      CREATE TABLE IF NOT EXISTS spool (seq INTEGER PRIMARY KEY AUTOINCREMENT, body TEXT NOT NULL);
    `);
    this.#q = {
      getPosition: db.prepare('SELECT state FROM positions WHERE source = ?'),
      setPosition: db.prepare(
        'INSERT INTO positions (source, state) VALUES (?, ?) ON CONFLICT (source) DO UPDATE SET state = excluded.state',
      ),
      getFiles: db.prepare('SELECT path, sha256, uid FROM files'),
      setFile: db.prepare(
        'INSERT INTO files (path, sha256, uid) VALUES (?, ?, ?) ON CONFLICT (path) DO UPDATE SET sha256 = excluded.sha256, uid = excluded.uid',
      ),
      deleteFile: db.prepare('DELETE FROM files WHERE path = ?'),
      insert: db.prepare('INSERT INTO spool (body) VALUES (?)'),
      peek: db.prepare('SELECT seq, body FROM spool ORDER BY seq LIMIT ?'),
      remove: db.prepare('DELETE FROM spool WHERE seq = ?'),
      depth: db.prepare('SELECT count(*) AS n FROM spool'),
      getMeta: db.prepare('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ),
      getDropped: db.prepare("SELECT key, value FROM meta WHERE key LIKE 'dropped:%'"),
      deleteDropped: db.prepare("DELETE FROM meta WHERE key LIKE 'dropped:%'"),
    };
    let instance = this.meta('instance');
    if (!instance) {
      instance = randomUUID();
      this.#q.setMeta.run('instance', instance);
    }
    this.#instance = instance;
    this.#depth = Number((this.#q.depth.get() as { n: number }).n);
  }

  static open(stateDir: string): DetectionStore {
    mkdirSync(join(stateDir, 'detect'), { recursive: true, mode: 0o750 });
    return new DetectionStore(new DatabaseSync(join(stateDir, STORE_FILE)));
  }

  close(): void {
    if (this.#db.isOpen) this.#db.close();
  }

  get depth(): number {
    return this.#depth;
  }

  position<T>(source: string): T | undefined {
    const row = this.#q.getPosition.get(source) as { state: string } | undefined;
    return row ? (JSON.parse(row.state) as T) : undefined;
  }

  files(): Map<string, FileBaseline> {
    const rows = this.#q.getFiles.all() as { path: string; sha256: string | null; uid: number | null }[];
    return new Map(rows.map((r) => [r.path, { sha256: r.sha256, uid: r.uid === null ? null : Number(r.uid) }]));
  }

  meta(key: string): string | undefined {
    return (this.#q.getMeta.get(key) as { value: string } | undefined)?.value;
  }

  /**
   * Writes a source's position, baselines and signals in one transaction. Signals past
   * SPOOL_MAX are not kept: their count per type goes into meta `dropped:<type>`.
   */
  record(changes: Changes): { spooled: number; dropped: number } {
    let spooled = 0;
    let dropped = 0;
    this.#db.exec('BEGIN IMMEDIATE');
    try {
      if (changes.position) this.#q.setPosition.run(changes.position.source, JSON.stringify(changes.position.state));
      for (const [path, baseline] of changes.files ?? []) {
        if (baseline) this.#q.setFile.run(path, baseline.sha256, baseline.uid);
        else this.#q.deleteFile.run(path);
      }
      for (const [key, value] of changes.meta ?? []) this.#q.setMeta.run(key, value);
      for (const signal of changes.signals ?? []) {
        if (this.#depth + spooled >= SPOOL_MAX) {
          const key = `dropped:${signal.signal_type}`;
          this.#q.setMeta.run(key, String(Number(this.meta(key) ?? 0) + 1));
          dropped++;
          continue;
        }
        this.#q.insert.run(JSON.stringify(signal));
        spooled++;
      }
      this.#db.exec('COMMIT');
    } catch (error) {
      this.#db.exec('ROLLBACK');
      throw error;
    }
    this.#depth += spooled;
    return { spooled, dropped };
  }

  /** The oldest waiting signals, in order. */
  peek(limit: number): SpooledSignal[] {
    const rows = this.#q.peek.all(limit) as { seq: number; body: string }[];
    return rows.map((r) => ({
      seq: Number(r.seq),
      key: `${this.#instance}.${r.seq}`,
      body: JSON.parse(r.body) as SignalBody,
    }));
  }

  /** The signal was accepted (or refused for good): it leaves the spool. */
  remove(seq: number): void {
    const r = this.#q.remove.run(seq);
    if (Number(r.changes) > 0) this.#depth--;
  }

  /** Counts of signals dropped while the spool was full, by type; taken (reset) in the same transaction. */
  takeDropped(): Map<string, number> {
    // Statements prepared once: this runs before every send, and each prepare() holds native
    // memory until a garbage collection that a small heap may not run for long.
    const rows = this.#q.getDropped.all() as { key: string; value: string }[];
    if (rows.length > 0) this.#q.deleteDropped.run();
    return new Map(rows.map((r) => [r.key.slice('dropped:'.length), Number(r.value)]));
  }
}
