// Detection in `guard-agent daemon` (DESIGN §3, contract — detection; docs/detection.md):
// three detectors turn host events into signals, which wait in a durable spool until the
// service has taken them, in order.
//   auth_log        the syslog file (log-follower.ts) or the journal (journal-source.ts):
//                   sudo, sshd and useradd lines (auth-lines.ts), brute force (limits.ts)
//   file_integrity  the watch list's content hashes (file-integrity.ts)
//   exec            the eBPF exec probe (exec-probe.ts): an exec of a file under /tmp, /var/tmp, /dev/shm
// A detector that cannot start is reported (status(), the daemon log, probe-status.json) and
// tried again later; the others run. The tenant's policy (from the service) turns types off
// and overrides severities; the flood limit bounds what one type sends a minute.

import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AUTH_HINTS, type AuthEvent, parseAuthLine, parseAuthMessage } from './auth-lines.ts';
import { expandWatchList, RESCAN_MS, scanFiles, watchDirectories } from './file-integrity.ts';
import { followJournal } from './journal-source.ts';
import { BRUTEFORCE_WINDOW_MS, BruteforceWindow, FloodLimit } from './limits.ts';
import { type FollowPosition, followLog } from './log-follower.ts';
import {
  authSignal,
  bruteforceSignal,
  DEFAULT_SEVERITY,
  DETECTION_TYPES,
  type DetectionType,
  execSignal,
  fileSignal,
  type SignalBody,
} from './signals.ts';
import { type Changes, DetectionStore } from './store.ts';
import { Passwd } from './users.ts';

export const WRITABLE_DIRS = ['/tmp/', '/var/tmp/', '/dev/shm/'] as const;
/** How long a detector that failed waits before it is tried again. */
export const RETRY_DETECTOR_MS = 60_000;
/** A position with no new signal is written at most this often (a busy log with nothing to match). */
const POSITION_EVERY_MS = 1000;
const FLUSH_EVERY_MS = 5000;
export const STATUS_FILE = 'probe-status.json';

export interface DetectConfig {
  /** A syslog file, 'journal', or false (off). */
  authLog: string | false;
  watch: string[];
  exec: boolean;
  floodPerMinute: number;
}

export type DetectorName = 'auth_log' | 'file_integrity' | 'exec';
export interface DetectorStatus {
  name: DetectorName;
  state: 'running' | 'failed' | 'disabled' | 'starting';
  reason?: string;
  last_event_at?: string;
}

export interface DetectionPolicy {
  version: string;
  signal_types: Partial<Record<DetectionType, { enabled: boolean; severity: number; overridden?: boolean }>>;
}

export type SendOutcome = { ok: true } | { ok: false; retry: boolean; error: string };

/** Signals the spool sends in one POST when it holds more than one (the service takes up to 256). */
export const SIGNAL_BATCH = 100;

export interface DetectionLog {
  info(msg: string, attrs?: Record<string, string | number | boolean | null | undefined>): void;
  warn(msg: string, attrs?: Record<string, string | number | boolean | null | undefined>): void;
  error(msg: string, attrs?: Record<string, string | number | boolean | null | undefined>): void;
}

export interface DetectionOptions {
  stateDir: string;
  config: DetectConfig;
  log: DetectionLog;
  now: () => Date;
  /** POST /v1/signals with the Idempotency-Key; ok, or why not and whether another try may help. */
  send: (body: SignalBody, key: string, signal: AbortSignal) => Promise<SendOutcome>;
  /**
   * POST /v1/signals with a batch; `batchRefused`: send these one at a time (a service before
   * batches, or a signal it refuses). Absent: one at a time always.
   */
  sendBatch?: (
    items: readonly { body: SignalBody; key: string }[],
    signal: AbortSignal,
  ) => Promise<SendOutcome | { ok: false; retry: false; error: string; batchRefused: true }>;
  /** The wait before the n-th try again of a failed send. */
  retryDelay: (failures: number) => number;
  signal: AbortSignal;
  /** Tests: where the exec probe's helper is, /etc/passwd, extra journalctl arguments. */
  execHelperPath?: string;
  passwdPath?: string;
  journalArgs?: readonly string[];
}

const pause = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

export class Detection {
  readonly #o: DetectionOptions;
  readonly #status = new Map<DetectorName, DetectorStatus>();
  readonly #flood: FloodLimit;
  readonly #brute = new BruteforceWindow();
  readonly #passwd: Passwd;
  #store: DetectionStore | undefined;
  #policy: DetectionPolicy | undefined;
  #wakeSender: () => void = () => {};
  #tasks: Promise<unknown>[] = [];
  #statusTimer: NodeJS.Timeout | undefined;
  #lastPosition = new Map<string, number>();
  /** Signals were dropped while the spool was full and are not yet reported (true at start: an earlier run may have). */
  #droppedPending = true;
  /** Serialises writes to the store (each detector's read waits for its commit). */
  #writes = Promise.resolve();

  constructor(options: DetectionOptions) {
    this.#o = options;
    this.#passwd = new Passwd(options.passwdPath);
    this.#flood = new FloodLimit(options.config.floodPerMinute);
    const { config } = options;
    this.#set(
      'auth_log',
      config.authLog === false ? 'disabled' : 'starting',
      config.authLog === false ? 'auth_log is off in the config' : undefined,
    );
    this.#set(
      'file_integrity',
      config.watch.length === 0 ? 'disabled' : 'starting',
      config.watch.length === 0 ? 'the watch list is empty' : undefined,
    );
    this.#set('exec', config.exec ? 'starting' : 'disabled', config.exec ? undefined : 'exec is off in the config');
  }

  /** Opens the store and starts every detector; resolves once each has started or failed. */
  async start(): Promise<void> {
    try {
      this.#store = DetectionStore.open(this.#o.stateDir);
    } catch (error) {
      const reason = `the detection state in ${join(this.#o.stateDir, 'detect')} cannot be opened: ${(error as Error).message}`;
      for (const name of this.#status.keys())
        if (this.#status.get(name)?.state !== 'disabled') this.#set(name, 'failed', reason);
      this.#o.log.error('detection cannot start', { error: reason });
      return;
    }
    const saved = this.#store.meta('policy');
    if (saved) this.#policy = JSON.parse(saved) as DetectionPolicy;
    const { config } = this.#o;
    const started: Promise<void>[] = [];
    if (config.authLog !== false) started.push(this.#runAuth(config.authLog));
    if (config.watch.length > 0) started.push(this.#runFiles(config.watch));
    if (config.exec) started.push(this.#runExec());
    this.#tasks.push(this.#sendLoop(), this.#flushLoop());
    await Promise.all(started);
    this.#writeStatus();
  }

  /** Waits for every loop to end (after the signal aborted) and closes the store. */
  async stopped(): Promise<void> {
    await Promise.allSettled(this.#tasks);
    await this.#writes;
    clearTimeout(this.#statusTimer);
    await this.#writeStatusNow();
    this.#store?.close();
  }

  status(): DetectorStatus[] {
    return [...this.#status.values()].map((s) => ({ ...s }));
  }

  get spoolDepth(): number {
    return this.#store?.depth ?? 0;
  }

  /** The tenant's policy from the service; kept in the store so a restart applies it before contact. */
  applyPolicy(policy: DetectionPolicy): void {
    if (this.#policy?.version === policy.version) return;
    this.#policy = policy;
    this.#o.log.info('detection policy applied', {
      version: policy.version,
      disabled: DETECTION_TYPES.filter((t) => policy.signal_types[t]?.enabled === false).join(',') || 'none',
    });
    void this.#write({ meta: [['policy', JSON.stringify(policy)]] });
  }

  // --- status -------------------------------------------------------------------------------

  #set(name: DetectorName, state: DetectorStatus['state'], reason?: string): void {
    const before = this.#status.get(name);
    const next: DetectorStatus = { name, state, ...(reason ? { reason } : {}) };
    if (before?.last_event_at) next.last_event_at = before.last_event_at;
    this.#status.set(name, next);
    if (before && (before.state !== state || before.reason !== reason)) {
      if (state === 'failed') this.#o.log.warn(`detector ${name} is not running`, { reason });
      else if (state === 'running') this.#o.log.info(`detector ${name} running`);
      this.#writeStatus();
    }
  }

  #sawEvent(name: DetectorName, at: Date): void {
    const s = this.#status.get(name);
    if (s) s.last_event_at = at.toISOString();
    this.#writeStatus();
  }

  #writeStatus(): void {
    if (this.#statusTimer) return;
    this.#statusTimer = setTimeout(() => {
      this.#statusTimer = undefined;
      void this.#writeStatusNow();
    }, 500);
    this.#statusTimer.unref();
  }

  /** probe-status.json in state_dir: what system.json of a bundle reports (bundle/system-info.ts). */
  async #writeStatusNow(): Promise<void> {
    const path = join(this.#o.stateDir, STATUS_FILE);
    const body = {
      updated_at: this.#o.now().toISOString(),
      detectors: this.status(),
      spool_depth: this.spoolDepth,
    };
    try {
      await writeFile(`${path}.tmp`, `${JSON.stringify(body, null, 2)}\n`, { mode: 0o640 });
      await rename(`${path}.tmp`, path);
    } catch (error) {
      this.#o.log.warn('probe-status.json cannot be written', { error: (error as Error).message });
    }
  }

  // --- from events to the spool -------------------------------------------------------------

  /** Policy, then the flood limit: what of these signals goes out on its own. */
  #admit(signals: SignalBody[], at: number): SignalBody[] {
    const out: SignalBody[] = [];
    for (const s of signals) {
      const rule = this.#policy?.signal_types[s.signal_type];
      if (rule?.enabled === false) continue;
      // The policy carries every type's severity, the default where the tenant set none: only an
      // override replaces the detector's (a shell through sudo keeps its 4 under the default 3).
      const overridden = rule !== undefined && (rule.overridden ?? rule.severity !== DEFAULT_SEVERITY[s.signal_type]);
      const signal = overridden && rule ? { ...s, severity: rule.severity } : s;
      const { send, summaries } = this.#flood.admit(signal, at);
      out.push(...summaries);
      if (send) out.push(signal);
    }
    return out;
  }

  /** Keeps changes and signals in one transaction, in the order asked. */
  #write(changes: Changes): Promise<void> {
    const write = this.#writes.then(() => {
      const store = this.#store;
      if (!store) return;
      const { dropped } = store.record(changes);
      if (dropped > 0) this.#droppedPending = true;
      if (dropped > 0)
        this.#o.log.warn('the spool is full: signals dropped (counted, reported when there is room)', { dropped });
      if ((changes.signals?.length ?? 0) > 0) this.#wakeSender();
    });
    this.#writes = write.catch(() => {});
    return write;
  }

  async #emit(signals: SignalBody[], changes: Changes = {}): Promise<void> {
    const now = this.#o.now().getTime();
    await this.#write({ ...changes, signals: this.#admit(signals, now) });
  }

  async #flushLoop(): Promise<void> {
    const { signal } = this.#o;
    while (!signal.aborted) {
      await pause(FLUSH_EVERY_MS, signal);
      const summaries = this.#flood.flush(this.#o.now().getTime());
      if (summaries.length > 0) await this.#write({ signals: summaries }).catch(() => {});
    }
  }

  // --- auth_log -----------------------------------------------------------------------------

  #authSignals(event: AuthEvent, at: Date): SignalBody[] {
    const uidOf = this.#passwd.uidOf;
    const out = [authSignal(event, at, uidOf)];
    if (event.kind === 'ssh_failed') {
      const failures = this.#brute.fail(event.address, at.getTime());
      if (failures !== undefined)
        out.push(bruteforceSignal(event.address, failures, BRUTEFORCE_WINDOW_MS / 1000, event.user, at, uidOf));
    }
    return out;
  }

  async #runAuth(source: string): Promise<void> {
    const { signal } = this.#o;
    const key = source === 'journal' ? 'journal' : `file:${source}`;
    let first = true;
    let ready!: () => void;
    const started = new Promise<void>((resolve) => {
      ready = resolve;
    });
    const problem = (message: string | undefined) => {
      this.#set('auth_log', message === undefined ? 'running' : 'failed', message);
      if (first) {
        first = false;
        ready();
      }
    };
    const loop = async () => {
      if (source === 'journal') {
        const since = this.#o.now();
        while (!signal.aborted) {
          await followJournal({
            cursor: this.#store?.position<string>(key),
            since,
            extraArgs: this.#o.journalArgs,
            onProblem: problem,
            signal,
            onEntries: async (entries, cursor) => {
              const signals: SignalBody[] = [];
              for (const e of entries) {
                const event = parseAuthMessage(e.program, e.message);
                if (event) signals.push(...this.#authSignals(event, e.at));
              }
              if (signals.length > 0) this.#sawEvent('auth_log', this.#o.now());
              await this.#emit(signals, { position: { source: key, state: cursor } });
            },
          });
          await pause(RETRY_DETECTOR_MS / 6, signal);
        }
        return;
      }
      await followLog({
        path: source,
        from: this.#store?.position<FollowPosition>(key),
        hints: AUTH_HINTS,
        onProblem: problem,
        signal,
        onLines: async (lines, position) => {
          if (first) problem(undefined);
          const at = this.#o.now();
          const signals: SignalBody[] = [];
          for (const line of lines) {
            const event = parseAuthLine(line);
            if (event) signals.push(...this.#authSignals(event, at));
          }
          const last = this.#lastPosition.get(key) ?? 0;
          if (lines.length === 0 && at.getTime() - last < POSITION_EVERY_MS) return;
          this.#lastPosition.set(key, at.getTime());
          if (signals.length > 0) this.#sawEvent('auth_log', at);
          await this.#emit(signals, { position: { source: key, state: position } });
        },
      });
    };
    this.#tasks.push(loop());
    await Promise.race([started, pause(3000, signal)]);
  }

  // --- file_integrity -----------------------------------------------------------------------

  async #runFiles(watchList: string[]): Promise<void> {
    const { signal, log } = this.#o;
    const store = this.#store;
    if (!store) return;
    const listed = new Set<string>(JSON.parse(store.meta('watch_list') ?? '[]') as string[]);
    const firstStart = store.meta('watch_list') === undefined;
    let scanning = Promise.resolve();
    const scan = () => {
      scanning = scanning.then(async () => {
        if (signal.aborted) return;
        const problems: string[] = [];
        const paths = await expandWatchList(watchList).catch((error: Error) => {
          problems.push(error.message);
          return [] as string[];
        });
        // A path is new to the watch list when the entry that yields it was not listed before.
        const silentNew = (path: string) =>
          firstStart ||
          !watchList.some((entry) => listed.has(entry) && (path === entry || path.startsWith(`${entry}/`)));
        const { events, updates } = await scanFiles(watchList, paths, store.files(), silentNew, (path, message) =>
          problems.push(`${path}: ${message}`),
        );
        const at = this.#o.now();
        const signals = events.map((e) =>
          fileSignal(
            e.path,
            e.change,
            e.before,
            e.after,
            e.uid === null ? undefined : { uid: e.uid, name: this.#passwd.nameOf(e.uid) ?? String(e.uid) },
            at,
          ),
        );
        if (signals.length > 0) this.#sawEvent('file_integrity', at);
        await this.#emit(signals, { files: updates, meta: [['watch_list', JSON.stringify(watchList)]] });
        for (const entry of watchList) listed.add(entry);
        if (problems.length > 0)
          log.warn('some watched files cannot be read', { files: problems.slice(0, 5).join('; ') });
        this.#set(
          'file_integrity',
          'running',
          problems.length > 0 ? `cannot read: ${problems.slice(0, 3).join('; ')}` : undefined,
        );
      });
      return scanning;
    };
    try {
      await scan();
    } catch (error) {
      this.#set('file_integrity', 'failed', (error as Error).message);
    }
    const unwatch = watchDirectories(watchList, () => void scan().catch(() => {}));
    this.#tasks.push(
      (async () => {
        while (!signal.aborted) {
          await pause(RESCAN_MS, signal);
          await scan().catch((error: Error) => this.#set('file_integrity', 'failed', error.message));
        }
        unwatch();
      })(),
    );
  }

  // --- exec ---------------------------------------------------------------------------------

  async #runExec(): Promise<void> {
    const { signal, log } = this.#o;
    // The exit wrapped in an object: an async function returning a promise would wait for it.
    const startOnce = async (): Promise<{ exited: Promise<string> } | undefined> => {
      const { startExecProbe } = await import('./exec-probe.ts');
      let ended!: (reason: string) => void;
      const exited = new Promise<string>((resolve) => {
        ended = resolve;
      });
      try {
        const probe = await startExecProbe({
          prefixes: [...WRITABLE_DIRS],
          helperPath: this.#o.execHelperPath,
          now: this.#o.now,
          onExit: (reason) => ended(reason),
          onEvent: (event) => {
            this.#sawEvent('exec', event.at);
            void this.#emit([execSignal(event, this.#passwd.nameOf(event.uid), event.at)]).catch((error: Error) =>
              log.error('an exec signal cannot be kept', { error: error.message }),
            );
          },
        });
        signal.addEventListener('abort', () => void probe.stop(), { once: true });
        this.#set('exec', 'running');
        return { exited };
      } catch (error) {
        this.#set('exec', 'failed', (error as Error).message);
        return undefined;
      }
    };
    const first = await startOnce();
    this.#tasks.push(
      (async () => {
        let running = first;
        while (!signal.aborted) {
          if (running) {
            const reason = await Promise.race([running.exited, pause(2 ** 31 - 1, signal).then(() => undefined)]);
            if (signal.aborted) break;
            this.#set('exec', 'failed', `the exec probe ended: ${reason}`);
          }
          await pause(RETRY_DETECTOR_MS, signal);
          if (signal.aborted) break;
          running = await startOnce();
        }
      })(),
    );
  }

  // --- the spool to the service -------------------------------------------------------------

  async #sendLoop(): Promise<void> {
    const { signal, log } = this.#o;
    let failures = 0;
    let away = false;
    /** Signals up to this sequence number go one at a time (a batch of them was refused). */
    let singlesUntil = 0;
    while (!signal.aborted) {
      const store = this.#store;
      if (!store) return;
      // Counts of dropped signals are read only when some were dropped (this run, or one before it).
      const dropped = this.#droppedPending ? store.takeDropped() : new Map<string, number>();
      this.#droppedPending = false;
      if (dropped.size > 0) {
        const at = this.#o.now().toISOString();
        store.record({
          signals: [...dropped].map(([type, n]) => ({
            signal_type: type as DetectionType,
            severity: 3,
            description: `${n} ${type} signals were dropped while the agent's spool was full (the service was unreachable for long)`,
            identity_id: '',
            identity_name: '',
            created_at: at,
          })),
        });
      }
      const waiting = store.peek(singlesUntil > 0 || !this.#o.sendBatch ? 1 : SIGNAL_BATCH);
      const next = waiting[0];
      if (!next) {
        await new Promise<void>((resolve) => {
          this.#wakeSender = resolve;
          signal.addEventListener('abort', () => resolve(), { once: true });
        });
        this.#wakeSender = () => {};
        continue;
      }
      const batch = waiting.length > 1 && this.#o.sendBatch;
      const sending = batch ? waiting : [next];
      const outcome = batch ? await batch(waiting, signal) : await this.#o.send(next.body, next.key, signal);
      if (signal.aborted) break;
      if (!batch && next.seq >= singlesUntil) singlesUntil = 0;
      if (outcome.ok) {
        for (const w of sending) store.remove(w.seq);
        failures = 0;
        if (away) {
          away = false;
          log.info('signals are sent again', { waiting: store.depth });
        }
        continue;
      }
      if (!outcome.retry) {
        if (batch) {
          // The service takes no batch, or refuses one signal of it: these go one at a time,
          // so that the others are taken and the one refused is dropped alone.
          singlesUntil = waiting.at(-1)?.seq ?? 0;
          log.info('the service took no batch; sending these signals one at a time', {
            signals: waiting.length,
            error: outcome.error,
          });
        } else {
          log.error('the service refused a signal; it is not sent again', {
            signal_type: next.body.signal_type,
            error: outcome.error,
          });
          store.remove(next.seq);
        }
        continue;
      }
      if (!away) {
        away = true;
        log.warn('signals cannot be sent now; they wait in the spool', { error: outcome.error, waiting: store.depth });
      }
      await pause(this.#o.retryDelay(++failures), signal);
    }
  }
}
