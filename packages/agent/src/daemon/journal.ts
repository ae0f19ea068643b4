// The daemon's record of the bundle requests it took: <state_dir>/daemon/requests.json (mode
// 0600, replaced atomically). It is what makes commands idempotent across restarts: a request
// is written here before it is acknowledged, each step before it is reported, so
//  - a command handed out again (a lost answer, a restart) is recognised and never collected twice;
//  - a request that was being worked on when the daemon stopped (SIGTERM, a crash, a reboot)
//    is reported `interrupted` by the next start;
//  - a report the service did not get (it was away) is sent again until it is confirmed.
// `reported` is the last state the service confirmed; the reporter sends what differs.

import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export type JournalState = 'taken' | 'collecting' | 'uploading' | 'done' | 'failed' | 'interrupted' | 'refused';

/** States the service is told of (taken is acknowledged; refused needs no report). */
export const REPORTED_STATES: readonly JournalState[] = ['collecting', 'uploading', 'done', 'failed', 'interrupted'];
const FINAL_STATES: readonly JournalState[] = ['done', 'failed', 'interrupted', 'refused'];

export interface JournalEntry {
  id: string;
  state: JournalState;
  /** The last state the service confirmed, or null. */
  reported: JournalState | null;
  updated_at: string;
  bundle_id?: string;
  error?: { code: string; message: string };
  step?: string;
  reason?: string;
  /** The bundle file collected for it, while the daemon may still need it. */
  bundle_path?: string;
}

/** Entries kept: the newest by update; a request older than these is long finished. */
const KEEP = 200;
const FILE = 'requests.json';

export function isFinal(state: JournalState): boolean {
  return FINAL_STATES.includes(state);
}

export class Journal {
  readonly #dir: string;
  readonly #entries: Map<string, JournalEntry>;
  #writing: Promise<void> = Promise.resolve();

  private constructor(dir: string, entries: JournalEntry[]) {
    this.#dir = dir;
    this.#entries = new Map(entries.map((e) => [e.id, e]));
  }

  /** Opens the journal in <stateDir>/daemon; a file that cannot be read as one is set aside (`.corrupt`). */
  static async open(stateDir: string, warn: (msg: string) => void): Promise<Journal> {
    const dir = join(stateDir, 'daemon');
    await mkdir(dir, { recursive: true, mode: 0o700 });
    let text: string;
    try {
      text = await readFile(join(dir, FILE), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Journal(dir, []);
      throw error;
    }
    try {
      const doc = JSON.parse(text) as { requests?: unknown };
      if (!Array.isArray(doc.requests)) throw new Error('no requests list');
      const entries = doc.requests.filter(
        (e): e is JournalEntry => typeof e?.id === 'string' && typeof e?.state === 'string',
      );
      return new Journal(dir, entries);
    } catch (error) {
      warn(`the request journal ${join(dir, FILE)} is not readable (${(error as Error).message}); set aside`);
      await rename(join(dir, FILE), join(dir, `${FILE}.corrupt`)).catch(() => {});
      return new Journal(dir, []);
    }
  }

  get(id: string): JournalEntry | undefined {
    return this.#entries.get(id);
  }

  /** Entries whose state the service has not confirmed, oldest first. */
  unreported(): JournalEntry[] {
    return [...this.#entries.values()]
      .filter((e) => REPORTED_STATES.includes(e.state) && e.reported !== e.state)
      .sort((a, b) => a.updated_at.localeCompare(b.updated_at));
  }

  /** Entries a stopped run left unfinished (taken, collecting, uploading). */
  unfinished(): JournalEntry[] {
    return [...this.#entries.values()].filter((e) => !isFinal(e.state));
  }

  /** Records a change of an entry (merged over what it held) and writes the file. */
  async update(id: string, change: Partial<Omit<JournalEntry, 'id'>>, at: Date): Promise<JournalEntry> {
    const before = this.#entries.get(id);
    const entry: JournalEntry = {
      ...(before ?? { id, state: 'taken', reported: null }),
      ...change,
      id,
      updated_at: at.toISOString(),
    };
    this.#entries.set(id, entry);
    await this.#write();
    return entry;
  }

  /** Writes are serialised: each writes the whole (small) journal to a temp file, then renames it. */
  #write(): Promise<void> {
    const next = this.#writing.then(async () => {
      const entries = [...this.#entries.values()].sort((a, b) => b.updated_at.localeCompare(a.updated_at));
      for (const old of entries.slice(KEEP)) this.#entries.delete(old.id);
      const temp = join(this.#dir, `${FILE}.tmp`);
      await writeFile(temp, `${JSON.stringify({ version: 1, requests: entries.slice(0, KEEP) }, null, 1)}\n`, {
        mode: 0o600,
      });
      await rename(temp, join(this.#dir, FILE));
    });
    this.#writing = next.catch(() => {});
    return next;
  }
}
