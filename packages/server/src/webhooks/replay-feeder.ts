// The replay feeder: re-queues the deliveries of running replays (replays-repository.ts) at a
// bounded rate per replay, and only while the endpoint has little due work waiting, so that a
// replay never starves live traffic: a replay has at most `window` deliveries queued or in
// flight (half the endpoint's concurrency: the other half is always free for live ones), and
// it pauses while the endpoint's due deliveries back up. Every
// replica runs one; on PostgreSQL a replay's row is locked while it is fed, so replicas take
// turns, and the rate (counted from the row's fed_at) holds for all of them together.

import { BackgroundLoop } from '../kernel/background-loop.ts';
import type { ReplaysRepository } from './replays-repository.ts';

export interface ReplayFeederOptions {
  /** Deliveries per second per replay, at most. */
  rate: number;
  /** At most this many of a replay's deliveries are queued or in flight, and are due at the endpoint (live ones included), before more are re-queued. */
  window: number;
  /** How often a running replay is fed. */
  intervalMs: number;
  /** How often the table is looked at for replays started elsewhere (other replicas). */
  idleMs: number;
}

export interface ReplayFeederDeps {
  replays: ReplaysRepository;
  now: () => Date;
  /** Tells the delivery worker that deliveries are due. */
  wakeDeliveries: () => void;
  log: { error(obj: object, msg: string): void };
}

/** Deliveries a replay may re-queue now: its rate since it was last fed, at most a tenth of a second's worth (and one). */
export function feedBudget(rate: number, fedAt: string | null, nowMs: number, intervalMs: number): number {
  const burst = Math.max(1, Math.ceil((rate * Math.max(intervalMs, 100)) / 1000));
  if (fedAt === null) return burst;
  return Math.min(burst, Math.floor((rate * Math.max(0, nowMs - Date.parse(fedAt))) / 1000));
}

export class ReplayFeeder {
  private readonly deps: ReplayFeederDeps;
  private readonly options: ReplayFeederOptions;
  private readonly loop: BackgroundLoop;

  constructor(deps: ReplayFeederDeps, options: ReplayFeederOptions) {
    this.deps = deps;
    this.options = options;
    this.loop = new BackgroundLoop(() => this.pass(), {
      what: 'feeding webhook replays',
      retryMs: options.idleMs,
      log: deps.log,
    });
  }

  start(): void {
    this.loop.start();
  }

  async stop(): Promise<void> {
    await this.loop.stop();
  }

  /** A replay was started here: feed it now rather than at the next idle look. */
  wake(): void {
    this.loop.wake();
  }

  /** Feeds each running replay; the next pass comes after intervalMs while any runs, else idleMs. */
  private async pass(): Promise<number> {
    let busy = false;
    try {
      const { replays, now } = this.deps;
      const { rate, window, intervalMs } = this.options;
      let fed = 0;
      for (const id of await replays.running()) {
        busy = true;
        const at = now();
        const r = await replays.feed(id, at, window, (fedAt) => feedBudget(rate, fedAt, at.getTime(), intervalMs));
        fed += r.queued;
      }
      if (fed > 0) this.deps.wakeDeliveries();
    } catch (error) {
      this.deps.log.error({ err: error }, 'feeding webhook replays failed');
    }
    return busy ? this.options.intervalMs : this.options.idleMs;
  }
}
