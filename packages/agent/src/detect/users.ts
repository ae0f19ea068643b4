// User names and uids from /etc/passwd, for the identities of signals. Read again when the
// file changes (checked at most every RECHECK_MS); a host where it cannot be read gives no names.

import { readFileSync, statSync } from 'node:fs';

const RECHECK_MS = 5000;

export class Passwd {
  readonly #path: string;
  #byName = new Map<string, number>();
  #byUid = new Map<number, string>();
  #mtime = -1;
  #checked = 0;

  constructor(path = '/etc/passwd') {
    this.#path = path;
  }

  #refresh(): void {
    const now = Date.now();
    if (now - this.#checked < RECHECK_MS) return;
    this.#checked = now;
    try {
      const mtime = statSync(this.#path).mtimeMs;
      if (mtime === this.#mtime) return;
      this.#mtime = mtime;
      this.#byName = new Map();
      this.#byUid = new Map();
      for (const line of readFileSync(this.#path, 'utf8').split('\n')) {
        const [name, , uid] = line.split(':');
        const n = Number(uid);
        if (!name || !Number.isSafeInteger(n)) continue;
        this.#byName.set(name, n);
        if (!this.#byUid.has(n)) this.#byUid.set(n, name);
      }
    } catch {
      // unreadable: no names
    }
  }

  uidOf = (name: string): number | undefined => {
    this.#refresh();
    return this.#byName.get(name);
  };

  nameOf = (uid: number): string | undefined => {
    this.#refresh();
    return this.#byUid.get(uid);
  };
}
