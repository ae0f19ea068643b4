// `guard-agent daemon`: the agent's long-running side for console-pushed bundles
// (docs/guard-agent-daemon.md). Three loops over one stop signal:
//   heartbeat  every heartbeat_seconds (the service says how long): version, hostname, uptimes;
//   commands   long-poll the service; take each support_bundle command it hands out — written to
//              the journal, acknowledged — and run it (job-runner.ts), one at a time; no poll
//              while a bundle is being made;
//   reports    send the journal's steps and outcomes the service has not confirmed, in order.
// Every call that fails for the service being away is tried again after reconnectDelay
// (backoff.ts); a refused agent key ends the daemon (exit 1: re-enrol). On stop (SIGTERM,
// SIGINT) the poll is cut, a running job is killed (no partial bundle ever sits at the output
// path), the request is recorded `interrupted` and reported within STOP_REPORT_MS.

import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { AgentCommand, CommandReport, HeartbeatRequest } from '@guard/contract/bundle-requests';
import { AgentError } from '../errors.ts';
import { describeNetworkError, HttpStatusError, isNetworkError } from '../http/index.ts';
import { sweepAbandonedWorkDirs } from '../work-dirs.ts';
import { reconnectDelay } from './backoff.ts';
import type { JobEvent, JobInput } from './job-protocol.ts';
import type { JobHandle } from './job-runner.ts';
import { isFinal, Journal, type JournalEntry, type JournalState } from './journal.ts';
import type { DaemonLog } from './log.ts';
import type { ServiceClient } from './service.ts';

/** Until the service says otherwise (its heartbeat answer). */
export const DEFAULT_POLL_WAIT_SECONDS = 25;
export const DEFAULT_HEARTBEAT_SECONDS = 60;
/** When a poll hands out only commands already dealt with, the next poll waits this long. */
export const KNOWN_COMMANDS_PAUSE_MS = 5000;
/** On stop, how long the daemon tries to tell the service what became of its requests. */
export const STOP_REPORT_MS = 3000;

export interface DaemonOptions {
  stateDir: string;
  service: ServiceClient;
  /** Starts the process of one request (job-runner.ts; tests may stand in). */
  startJob: (
    input: Omit<JobInput, 'configPath' | 'configExplicit' | 'version'>,
    onEvent: (e: JobEvent) => void,
  ) => JobHandle;
  /** What each heartbeat reports, read when it is sent. */
  heartbeat: () => HeartbeatRequest;
  log: DaemonLog;
  now: () => Date;
  random: () => number;
  /** Aborted by SIGTERM or SIGINT; its reason names the signal. */
  stop: AbortSignal;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });
}

/** A refusal of this call that another try will not change (the request expired, is finished, unknown). */
function isRefusal(error: unknown): error is HttpStatusError {
  return error instanceof HttpStatusError && (error.status === 404 || error.status === 409 || error.status === 400);
}

function describe(error: unknown): string {
  if (error instanceof HttpStatusError) return error.describe();
  if (isNetworkError(error)) return describeNetworkError(error);
  return error instanceof Error ? error.message : String(error);
}

const REPORTS: Record<JournalState, CommandReport['state'] | undefined> = {
  taken: undefined,
  refused: undefined,
  collecting: 'collecting',
  uploading: 'uploading',
  done: 'done',
  failed: 'failed',
  interrupted: 'interrupted',
};

export async function runDaemon(options: DaemonOptions): Promise<void> {
  await new Daemon(options).run();
}

class Daemon {
  readonly #o: DaemonOptions;
  /** Aborted on stop or on a fatal refusal: every loop and wait ends. */
  readonly #halt = new AbortController();
  #fatal: AgentError | undefined;
  #journal!: Journal;
  #pollWaitSeconds = DEFAULT_POLL_WAIT_SECONDS;
  #heartbeatMs = DEFAULT_HEARTBEAT_SECONDS * 1000;
  /** Set while the service cannot be reached: one warning per outage, one note when it is back. */
  #away = false;
  #kickReports: () => void = () => {};
  #reportsSettled: (() => void)[] = [];

  constructor(options: DaemonOptions) {
    this.#o = options;
    options.stop.addEventListener('abort', () => this.#halt.abort(), { once: true });
    if (options.stop.aborted) this.#halt.abort();
  }

  get #halted(): boolean {
    return this.#halt.signal.aborted;
  }

  async run(): Promise<void> {
    const { log } = this.#o;
    this.#journal = await Journal.open(this.#o.stateDir, (m) => log.warn(m));
    await this.#recover();
    log.info('guard-agent daemon started', { state_dir: this.#o.stateDir });
    const beats = this.#heartbeatLoop();
    const reports = this.#reportLoop();
    try {
      await this.#commandLoop();
    } finally {
      this.#halt.abort();
      this.#kickReports();
      await Promise.all([beats, reports]);
    }
    await this.#finalReports();
    if (this.#fatal) throw this.#fatal;
    log.info('guard-agent daemon stopped', { reason: String(this.#o.stop.reason ?? 'stopped') });
  }

  /** What a stopped run left unfinished is `interrupted` now, and will be reported so. */
  async #recover(): Promise<void> {
    for (const entry of this.#journal.unfinished()) {
      await this.#journal.update(
        entry.id,
        {
          state: 'interrupted',
          reason: `guard-agent stopped while the request was ${entry.state}; it was not finished`,
        },
        this.#o.now(),
      );
      await this.#removeBundle(entry);
      this.#o.log.warn('a request the previous run did not finish is reported interrupted', { request_id: entry.id });
    }
    await sweepAbandonedWorkDirs(join(this.#o.stateDir, 'support'));
  }

  // --- calls that fail ---------------------------------------------------------------------

  /** A failed call: a refused key stops the daemon; anything else is the service being away. */
  #failed(what: string, error: unknown): void {
    if (error instanceof HttpStatusError && (error.status === 401 || error.status === 403)) {
      this.#fatal ??= new AgentError(
        'server',
        `${what} failed: ${error.describe()}; the service refused the agent API key: re-enroll with guard-agent enroll`,
      );
      this.#halt.abort();
      return;
    }
    if (!this.#away) {
      this.#away = true;
      this.#o.log.warn('the service cannot be reached; trying again with backoff', {
        call: what,
        error: describe(error),
      });
    }
  }

  #reached(): void {
    if (this.#away) {
      this.#away = false;
      this.#o.log.info('the service is reachable again');
    }
  }

  // --- heartbeat ---------------------------------------------------------------------------

  async #heartbeatLoop(): Promise<void> {
    let failures = 0;
    while (!this.#halted) {
      try {
        // The stop cuts a heartbeat in flight: a service that holds it would otherwise hold the
        // stop until the call's idle timeout.
        const answer = await this.#o.service.heartbeat(this.#o.heartbeat(), this.#halt.signal);
        this.#pollWaitSeconds = answer.poll_wait_seconds;
        this.#heartbeatMs = answer.heartbeat_seconds * 1000;
        failures = 0;
        this.#reached();
      } catch (error) {
        if (this.#halted) break;
        this.#failed('heartbeat', error);
        failures++;
      }
      const wait =
        failures > 0 ? Math.min(reconnectDelay(failures, this.#o.random), this.#heartbeatMs) : this.#heartbeatMs;
      await pause(wait, this.#halt.signal);
    }
  }

  // --- commands ----------------------------------------------------------------------------

  async #commandLoop(): Promise<void> {
    let failures = 0;
    while (!this.#halted) {
      await this.#reportsDone();
      if (this.#halted) break;
      let commands: AgentCommand[];
      try {
        commands = await this.#o.service.poll(this.#pollWaitSeconds, this.#halt.signal);
        failures = 0;
        this.#reached();
      } catch (error) {
        if (this.#halted) break;
        this.#failed('poll', error);
        await pause(reconnectDelay(++failures, this.#o.random), this.#halt.signal);
        continue;
      }
      let acted = false;
      for (const command of commands) {
        if (this.#halted) break;
        if (await this.#handle(command)) acted = true;
      }
      if (commands.length > 0 && !acted) await pause(KNOWN_COMMANDS_PAUSE_MS, this.#halt.signal);
    }
  }

  /** Deals with one command; false when it was already dealt with (the journal knows it). */
  async #handle(command: AgentCommand): Promise<boolean> {
    const { log, now } = this.#o;
    const known = this.#journal.get(command.id);
    if (known) {
      // Handed out again: never run twice. The service evidently lacks its outcome (a lost
      // acknowledgement or report): the recorded one is sent again.
      if (!isFinal(known.state)) await this.#journal.update(command.id, { state: 'interrupted' }, now());
      else if (known.state !== 'refused') await this.#journal.update(command.id, { reported: null }, now());
      this.#kickReports();
      return false;
    }
    if (command.acknowledged || command.state === 'collecting' || command.state === 'uploading') {
      // Taken by an earlier run whose journal is gone: it may have collected already.
      await this.#journal.update(
        command.id,
        {
          state: 'interrupted',
          reported: null,
          reason: 'an earlier run of guard-agent took this request and did not finish it',
        },
        now(),
      );
      this.#kickReports();
      return true;
    }
    // Journal first, then acknowledge: a crash in between is recognised at the next start.
    await this.#journal.update(command.id, { state: 'taken', reported: null }, now());
    const taken = await this.#acknowledge(command.id);
    if (taken === 'refused') {
      await this.#journal.update(command.id, { state: 'refused' }, now());
      return true;
    }
    if (taken === 'halted') {
      await this.#journal.update(
        command.id,
        { state: 'interrupted', reason: `guard-agent was stopped (${this.#stopReason()}) before it began` },
        now(),
      );
      return true;
    }
    log.info('collecting a support bundle', { request_id: command.id });
    await this.#runJob(command.id);
    return true;
  }

  async #acknowledge(id: string): Promise<'ok' | 'refused' | 'halted'> {
    let failures = 0;
    while (!this.#halted) {
      try {
        await this.#o.service.ack(id, this.#halt.signal);
        this.#reached();
        return 'ok';
      } catch (error) {
        if (isRefusal(error)) {
          this.#o.log.warn('the service withdrew the request before it was taken', {
            request_id: id,
            error: error.describe(),
          });
          return 'refused';
        }
        if (this.#halted) break;
        this.#failed('acknowledge', error);
        await pause(reconnectDelay(++failures, this.#o.random), this.#halt.signal);
      }
    }
    return 'halted';
  }

  #stopReason(): string {
    const reason = this.#o.stop.reason;
    return typeof reason === 'string' ? reason : this.#fatal ? 'the agent key was refused' : 'stopped';
  }

  async #runJob(id: string): Promise<void> {
    const { log, now } = this.#o;
    const out = join(this.#o.stateDir, 'support', `${Math.floor(now().getTime() / 1000)}-${id}.tar.zst`);
    let state: JournalState = 'collecting';
    await this.#journal.update(id, { state, bundle_path: out }, now());
    this.#kickReports();
    let outcome: Partial<JournalEntry> | undefined;
    let events = Promise.resolve();
    const onEvent = (event: JobEvent) => {
      events = events.then(async () => {
        if (event.type === 'collected') {
          log.info('bundle collected', {
            request_id: id,
            size: event.size,
            sha256: event.sha256,
            collection_errors: event.collection_errors,
          });
        } else if (event.type === 'uploading') {
          state = 'uploading';
          await this.#journal.update(id, { state }, now());
          this.#kickReports();
        } else if (event.type === 'done') {
          outcome = { state: 'done', bundle_id: event.bundle_id };
        } else {
          outcome = {
            state: 'failed',
            error: { code: event.code, message: event.message },
            step: event.step,
          };
        }
      });
    };
    const job = this.#o.startJob({ requestId: id, out }, onEvent);
    const kill = () => job.kill();
    this.#halt.signal.addEventListener('abort', kill, { once: true });
    const exit = await job.exited;
    this.#halt.signal.removeEventListener('abort', kill);
    await events;
    if (!outcome) {
      outcome = this.#halted
        ? { state: 'interrupted', reason: `guard-agent was stopped (${this.#stopReason()}) while ${state}` }
        : {
            state: 'failed',
            step: state === 'collecting' ? 'collect' : 'upload',
            error: {
              code: 'job_crashed',
              message: `the process making the bundle ended without an outcome (${exit.signal ? `signal ${exit.signal}` : `exit code ${exit.code}`}) while ${state}`,
            },
          };
      await sweepAbandonedWorkDirs(join(this.#o.stateDir, 'support'));
    }
    // A bundle the upload failed to send is kept for the operator; any other is not needed now.
    const keep = outcome.state === 'failed' && outcome.step !== 'collect' && outcome.error !== undefined;
    if (keep && outcome.error)
      outcome.error = {
        ...outcome.error,
        message: `${outcome.error.message} (the bundle is kept at ${out}: guard-agent support-bundle upload ${out} sends it)`,
      };
    const entry = await this.#journal.update(id, { ...outcome, bundle_path: keep ? out : undefined }, now());
    if (!keep) await rm(out, { force: true });
    log[entry.state === 'done' ? 'info' : 'warn'](`support bundle request ${entry.state}`, {
      request_id: id,
      bundle_id: entry.bundle_id,
      step: entry.step,
      error: entry.error?.message,
      reason: entry.reason,
    });
    this.#kickReports();
  }

  async #removeBundle(entry: JournalEntry): Promise<void> {
    if (entry.bundle_path) await rm(entry.bundle_path, { force: true });
  }

  // --- reports -----------------------------------------------------------------------------

  /** Resolves when every journal state is confirmed by the service (or the daemon halts). */
  #reportsDone(): Promise<void> {
    if (this.#halted || this.#journal.unreported().length === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.#reportsSettled.push(resolve);
      this.#kickReports();
    });
  }

  #settle(): void {
    for (const resolve of this.#reportsSettled.splice(0)) resolve();
  }

  async #reportLoop(): Promise<void> {
    let failures = 0;
    while (!this.#halted) {
      const next = this.#journal.unreported()[0];
      if (!next) {
        this.#settle();
        await new Promise<void>((resolve) => {
          this.#kickReports = resolve;
          if (this.#halted) resolve();
        });
        this.#kickReports = () => {};
        continue;
      }
      const sent = await this.#sendReport(next);
      if (sent) {
        failures = 0;
        continue;
      }
      if (this.#halted) break;
      await pause(reconnectDelay(++failures, this.#o.random), this.#halt.signal);
    }
    this.#settle();
  }

  /** Sends one entry's state; true when the service confirmed or refused it for good. */
  async #sendReport(entry: JournalEntry, signal?: AbortSignal): Promise<boolean> {
    const state = REPORTS[entry.state];
    if (!state) return true;
    const body: CommandReport = { state };
    if (entry.bundle_id && state === 'done') body.bundle_id = entry.bundle_id;
    if (state === 'failed') {
      body.error = entry.error ?? { code: 'failed', message: entry.reason ?? 'failed' };
      if (entry.step) body.step = entry.step as CommandReport['step'];
    }
    if (entry.reason && (state === 'interrupted' || state === 'failed')) body.reason = entry.reason.slice(0, 2000);
    if (body.error) body.error = { code: body.error.code.slice(0, 64), message: body.error.message.slice(0, 2000) };
    try {
      await this.#o.service.report(entry.id, body, signal);
      this.#reached();
    } catch (error) {
      if (!isRefusal(error)) {
        if (!signal?.aborted) this.#failed(`report ${state}`, error);
        return false;
      }
      this.#o.log.warn('the service refused a report; it is not sent again', {
        request_id: entry.id,
        state,
        error: error.describe(),
      });
    }
    // Only what is still the entry's state is confirmed (a later step may have been recorded meanwhile).
    const now = this.#journal.get(entry.id);
    if (now?.state === entry.state) await this.#journal.update(entry.id, { reported: entry.state }, this.#o.now());
    return true;
  }

  /** On stop: one try each, within STOP_REPORT_MS, for what the service has not been told. */
  async #finalReports(): Promise<void> {
    const pending = this.#journal.unreported();
    if (pending.length === 0 || this.#fatal) return;
    const budget = AbortSignal.timeout(STOP_REPORT_MS);
    for (const entry of pending) {
      if (budget.aborted) break;
      await this.#sendReport(entry, budget);
    }
    const left = this.#journal.unreported().length;
    if (left > 0) this.#o.log.warn('reports not yet confirmed are sent at the next start', { reports: left });
  }
}
