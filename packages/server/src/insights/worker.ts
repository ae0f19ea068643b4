// Analyses stored bundles, as many at a time per process as the archive pool has threads, as
// named steps: claim (a lease on the next queued bundle, tenants taken in turn) → read the
// archive once through the object store, in a thread of the pool (analysis/archive-pool.ts:
// off the event loop, within a deadline, a CPU budget and a heap limit) → gather what the service knows around it →
// build the findings (analysis/findings.ts) → record them. Woken when a bundle is registered; otherwise it looks
// for work every pollMs, so bundles queued before a restart, or by another replica, are taken.
// Whatever a bundle holds, the worst it gets is one "could not analyse" finding: nothing it
// contains can stop the worker or harm the service.

import { parseManifest } from '@guard/contract';
import {
  type ArchivePool,
  buildFindings,
  couldNotAnalyse,
  newestVersion,
  ruleSpecs,
  Unanalysable,
} from '../analysis/index.ts';
import type { Db } from '../db/index.ts';
import { BackgroundLoop } from '../kernel/background-loop.ts';
import type { Logger } from '../kernel/logger.ts';
import type { ObjectStore } from '../objects/index.ts';
import { runnableRules } from './analyzer-rules.ts';
import { AnalyzerRulesRepository } from './analyzer-rules-repository.ts';
import { type ClaimedBundle, InsightsRepository, MAX_ATTEMPTS } from './insights-repository.ts';

export interface InsightsWorkerDeps {
  db: Db;
  store: ObjectStore;
  /** Where archives are read: a bundle at a time per thread. */
  archives: ArchivePool;
  now: () => Date;
  log: Logger;
}

export interface InsightsWorkerOptions {
  /** One bundle's analysis ends after this (Unanalysable: "did not finish within"). */
  timeoutMs: number;
  /** Looks for queued bundles this often when nothing woke it. */
  pollMs: number;
  /** Bundles analysed at once (the archive pool's threads). */
  concurrency: number;
}

export const INSIGHTS_TIMEOUT_MS = 10 * 60_000;
export const INSIGHTS_POLL_MS = 5_000;
/** A bundle's thread may run this long (a 2 GiB bundle's analysis takes a few seconds). */
export const INSIGHTS_CPU_BUDGET_MS = 60_000;
/** A bundle's thread's heap: the scan keeps bounded tables, the archive streams past. */
export const INSIGHTS_THREAD_MEMORY_MB = 128;
/** Analysis threads: one core is left to the API (at least one thread, at most four). */
export const insightsThreads = (cores: number) => Math.max(1, Math.min(4, cores - 1));
/** The lease outlasts the deadline: a lease never lapses under a live analysis. */
const LEASE_MARGIN_MS = 60_000;

export class InsightsWorker {
  readonly #deps: InsightsWorkerDeps;
  readonly #options: InsightsWorkerOptions;
  readonly #jobs: InsightsRepository;
  readonly #rules: AnalyzerRulesRepository;
  readonly #loop: BackgroundLoop;
  #stop = new AbortController();

  constructor(deps: InsightsWorkerDeps, options: InsightsWorkerOptions) {
    this.#deps = deps;
    this.#options = options;
    this.#jobs = new InsightsRepository(deps.db);
    this.#rules = new AnalyzerRulesRepository(deps.db);
    this.#loop = new BackgroundLoop(
      async () => {
        await this.#work();
        return options.pollMs;
      },
      { what: 'bundle analysis', retryMs: options.pollMs, log: deps.log },
    );
  }

  async start(options: { releaseLeases: boolean }): Promise<void> {
    if (options.releaseLeases) await this.#jobs.releaseLeases();
    this.#stop = new AbortController();
    this.#loop.start();
  }

  /** Look for work now (a bundle was registered). */
  wake(): void {
    this.#loop.wake();
  }

  /** Stops: an analysis under way is abandoned and its bundle handed back for the next start. */
  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#loop.stop();
  }

  /** Settles once nothing is queued (for tests). */
  async idle(): Promise<void> {
    await this.#loop.idle();
  }

  /** `concurrency` claim loops, each taking bundles until none is queued. */
  async #work(): Promise<void> {
    await Promise.all(Array.from({ length: this.#options.concurrency }, () => this.#claimLoop()));
  }

  async #claimLoop(): Promise<void> {
    while (this.#loop.running) {
      const at = this.#deps.now();
      const claimed = await this.#jobs.claim(at, new Date(at.getTime() + this.#options.timeoutMs + LEASE_MARGIN_MS));
      if (!claimed) return;
      await this.#analyse(claimed);
    }
  }

  async #analyse(job: ClaimedBundle): Promise<void> {
    const { log } = this.#deps;
    const failed = (reason: string, member?: string) =>
      this.#jobs.finish(
        job,
        { state: 'failed', findings: [couldNotAnalyse(reason, member)], summary: null },
        this.#deps.now(),
      );
    if (job.attempts > MAX_ATTEMPTS) {
      log.warn({ bundleId: job.bundleId, attempts: job.attempts - 1 }, 'bundle analysis given up');
      await failed(`its analysis was started ${MAX_ATTEMPTS} times and never finished`);
      return;
    }
    const started = Date.now();
    try {
      const manifest = parseManifest(JSON.parse(job.manifest));
      const object = await this.#deps.store.open(job.objectKey);
      if (!object) {
        await failed('the bundle file is no longer in the object store');
        return;
      }
      const rules = runnableRules((await this.#rules.list()).rules, log);
      const facts = await this.#deps.archives.readArchive(object.body, manifest, {
        deadlineMs: this.#options.timeoutMs,
        signal: this.#stop.signal,
        rules: ruleSpecs(rules),
      });
      const [requestCreatedAt, versions, previous] = await Promise.all([
        manifest.request_id ? this.#jobs.requestCreatedAt(job.agentId, manifest.request_id) : undefined,
        this.#jobs.tenantVersions(job.tenantId),
        this.#jobs.previous(job.agentId, { uploadedAt: job.uploadedAt, bundleId: job.bundleId }),
      ]);
      const { findings, summary } = buildFindings(facts, {
        manifest,
        uploadedAt: job.uploadedAt,
        requestCreatedAt,
        newestTenantVersion: newestVersion([...versions, manifest.agent_version]),
        previous,
        rules,
      });
      await this.#jobs.finish(job, { state: 'done', findings, summary }, this.#deps.now());
      log.info({ bundleId: job.bundleId, findings: findings.length, ms: Date.now() - started }, 'bundle analysed');
    } catch (error) {
      if (this.#stop.signal.aborted) {
        await this.#jobs.release(job.bundleId, job.attempts - 1);
        return;
      }
      if (error instanceof Unanalysable) {
        log.warn({ bundleId: job.bundleId, reason: error.message }, 'bundle could not be analysed');
        await failed(error.message, error.member);
        return;
      }
      log.error({ err: error, bundleId: job.bundleId }, 'bundle analysis failed unexpectedly');
      await failed('the analysis failed unexpectedly (the service logged why)');
    }
  }
}
