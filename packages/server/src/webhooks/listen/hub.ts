// The listen streams of this process, and the one loop that feeds them (`guard listen`;
// docs/guard-listen.md). Every event of a tenant is a row of `signals`, whichever replica
// wrote it, so the hub follows that table instead of any process's memory: a signal created
// on replica A reaches a stream held by replica B through the database they share.
//
// - One poll per pollMs for all the tenants with a stream here (not one per stream): the keys
//   of their rows received within the last lateCommitMs, in pages. A key the hub has not seen
//   is new: its row is read and offered to the tenant's streams, each of which keeps what its
//   filter and floor take. Why a window rather than a cursor: received_at (and the id) is
//   stamped before the row's transaction commits, so a row can appear after a later-stamped
//   one (a group commit waiting its turn, another replica's clock). A row that commits more
//   than lateCommitMs after it was stamped is missed; the outbox commits within milliseconds.
// - A stream starts with a catch-up read of its own (stream.ts): a fresh one from now, a
//   resumed one (Last-Event-ID) from lateCommitMs before that event, if the event is within
//   resumeWindowMs and at most resumeMaxEvents; otherwise it is told of the gap. A resumed
//   stream may repeat the events of those few seconds: clients deduplicate on the id (the CLI
//   does).
// - Bounds: streamsPerTenant and streamsTotal open streams in this process (429 beyond);
//   the credential a stream was opened with is checked again every recheckMs (a revoked
//   token or session, or a user no longer admin, ends it); close() ends every stream with
//   `bye` (shutdown), so nothing holds the server's graceful close.

import { randomUUID } from 'node:crypto';
import type { EventType } from '@guard/contract/endpoint-rules';
import type { SignalTable } from '../../db/index.ts';
import { BackgroundLoop } from '../../kernel/background-loop.ts';
import { ApiError } from '../../kernel/errors.ts';
import { buildEnvelope } from '../envelope.ts';
import type { FeedKey, ListenFeed } from './feed-repository.ts';
import { ListenStream, type SseOutput } from './stream.ts';

export interface ListenLimits {
  streamsPerTenant: number;
  streamsTotal: number;
  /** How often the hub looks for new rows while any stream is open. */
  pollMs: number;
  /** How long after its received_at a row may still become visible and be sent. */
  lateCommitMs: number;
  /** How far back Last-Event-ID may resume from. */
  resumeWindowMs: number;
  /** At most this many events are sent to catch up a resumed stream (the newest). */
  resumeMaxEvents: number;
  heartbeatMs: number;
  /** The SSE `retry` a client waits before reconnecting. */
  retryMs: number;
  /** Bytes that may wait for a client that does not read before it is cut off. */
  maxBufferedBytes: number;
  /** How often the credential of each stream is checked again. */
  recheckMs: number;
  /** Keys read per page of a poll, and at most per poll (the rest waits for the next). */
  keysPerPage: number;
  keysPerPoll: number;
}

/** docs/guard-listen.md, "Limits". */
export const LISTEN_LIMITS: ListenLimits = {
  streamsPerTenant: 10,
  streamsTotal: 200,
  pollMs: 250,
  lateCommitMs: 10_000,
  resumeWindowMs: 15 * 60_000,
  resumeMaxEvents: 1000,
  heartbeatMs: 15_000,
  retryMs: 2000,
  maxBufferedBytes: 4 * 1024 * 1024,
  recheckMs: 15_000,
  keysPerPage: 5000,
  keysPerPoll: 100_000,
};

/** Seconds a stream refused for the caps is told to wait (Retry-After). */
export const LISTEN_RETRY_AFTER_SECONDS = 10;

/** The poll's pause while no stream is open (a new stream wakes it). */
const IDLE_MS = 60_000;

export interface ListenHubDeps {
  feed: ListenFeed;
  now: () => Date;
  /** Base of console links in envelopes (--public-url). */
  consoleBaseUrl: () => string;
  log: { error(obj: object, msg: string): void; info(obj: object, msg: string): void };
}

/** A place for one stream, taken before the response is hijacked; given back once. */
export interface Admission {
  tenantId: string;
  release(): void;
}

/** Where a stream starts (resumePoint). */
export interface ResumePoint {
  /** Rows received before this (ISO 8601) are not the stream's. */
  floor: string;
  /** The Last-Event-ID resumed from; null: a fresh stream. */
  resumedFrom: string | null;
  /** When that event was received. */
  resumedAt?: string;
  /** Why events may have been missed, told to the client first. */
  gap: string | undefined;
}

export interface OpenRequest {
  events: readonly EventType[];
  /** Whether the credential the stream was opened with still may listen. */
  stillAuthorised: () => Promise<boolean>;
}

interface TenantFeed {
  streams: Set<ListenStream>;
  /** Ids offered already, with their received_at (pruned as they leave the late-commit window). */
  seen: Map<string, string>;
}

const iso = (ms: number) => new Date(ms).toISOString();

export class ListenHub {
  readonly #deps: ListenHubDeps;
  readonly #limits: ListenLimits;
  readonly #tenants = new Map<string, TenantFeed>();
  readonly #admitted = new Map<string, number>();
  #total = 0;
  #closing = false;
  readonly #loop: BackgroundLoop;

  constructor(deps: ListenHubDeps, limits: ListenLimits = LISTEN_LIMITS) {
    this.#deps = deps;
    this.#limits = limits;
    this.#loop = new BackgroundLoop(() => this.#poll(), {
      what: 'following new events for listen streams',
      retryMs: 1000,
      log: deps.log,
    });
  }

  /** Streams open (or being opened) in this process, in all or of one tenant. */
  open(tenantId?: string): number {
    return tenantId === undefined ? this.#total : (this.#admitted.get(tenantId) ?? 0);
  }

  /** Takes a place for a stream of `tenantId`, or throws 429 (a cap is reached) or 503 (closing). */
  admit(tenantId: string): Admission {
    if (this.#closing) throw new ApiError(503, 'shutting_down', 'the server is shutting down');
    const mine = this.#admitted.get(tenantId) ?? 0;
    const { streamsPerTenant, streamsTotal } = this.#limits;
    if (mine >= streamsPerTenant || this.#total >= streamsTotal)
      throw new ApiError(
        429,
        'too_many_streams',
        mine >= streamsPerTenant
          ? `this tenant has ${mine} listen streams open on this server, the most it allows (${streamsPerTenant}); close one, or retry in ${LISTEN_RETRY_AFTER_SECONDS} s`
          : `this server holds ${this.#total} listen streams, the most it allows; retry in ${LISTEN_RETRY_AFTER_SECONDS} s`,
      );
    this.#admitted.set(tenantId, mine + 1);
    this.#total++;
    let released = false;
    return {
      tenantId,
      release: () => {
        if (released) return;
        released = true;
        this.#total--;
        const n = (this.#admitted.get(tenantId) ?? 1) - 1;
        if (n <= 0) this.#admitted.delete(tenantId);
        else this.#admitted.set(tenantId, n);
      },
    };
  }

  /**
   * Where a stream of this tenant starts: now, or lateCommitMs before the event Last-Event-ID
   * names when it is the tenant's and within the resume window (else from now, with a gap
   * notice). Read before the response is taken over, so that a failure is still an HTTP answer.
   */
  async resumePoint(tenantId: string, lastEventId: string | undefined): Promise<ResumePoint> {
    const limits = this.#limits;
    const nowMs = this.#deps.now().getTime();
    const fresh = { floor: iso(nowMs), resumedFrom: null };
    if (lastEventId === undefined) return { ...fresh, gap: undefined };
    const at = await this.#deps.feed.receivedAt(tenantId, lastEventId);
    if (at === undefined)
      return {
        ...fresh,
        gap: `Last-Event-ID ${lastEventId} is no event of this tenant (or no longer kept): events before this stream may have been missed`,
      };
    if (Date.parse(at) < nowMs - limits.resumeWindowMs)
      return {
        ...fresh,
        gap: `Last-Event-ID ${lastEventId} is older than the resume window (${limits.resumeWindowMs / 60_000} min): events before this stream may have been missed`,
      };
    return {
      floor: iso(Date.parse(at) - limits.lateCommitMs),
      resumedFrom: lastEventId,
      resumedAt: at,
      gap: undefined,
    };
  }

  /**
   * Starts a stream on `out` (the hijacked response) with its admission: `ready`, the catch-up
   * from `from`, then the live rows. Resolves once it is live; the stream ends by itself
   * (end()). When the catch-up cannot be read the stream ends (`bye`) and this rejects.
   */
  async start(out: SseOutput, admission: Admission, request: OpenRequest, from: ResumePoint): Promise<ListenStream> {
    const { feed, now } = this.#deps;
    const limits = this.#limits;
    const tenantId = admission.tenantId;
    const { floor, resumedFrom } = from;
    let gap = from.gap;
    let recheck: NodeJS.Timeout | undefined;
    const stream = new ListenStream(out, {
      id: randomUUID(),
      tenantId,
      filter: new Set(request.events),
      floor,
      heartbeatMs: limits.heartbeatMs,
      retryMs: limits.retryMs,
      maxBufferedBytes: limits.maxBufferedBytes,
      envelope: (row: SignalTable) => JSON.stringify(buildEnvelope(row, this.#deps.consoleBaseUrl(), now())),
      onEnd: (s) => {
        clearInterval(recheck);
        admission.release();
        const tenant = this.#tenants.get(tenantId);
        tenant?.streams.delete(s);
        if (tenant?.streams.size === 0) this.#tenants.delete(tenantId);
        this.#deps.log.info({ stream: s.id, tenant: tenantId, sent: s.sent }, 'listen stream ended');
      },
    });
    // Joined before the catch-up is read: what the poll finds meanwhile waits in the stream.
    let tenant = this.#tenants.get(tenantId);
    if (!tenant) {
      tenant = { streams: new Set(), seen: new Map() };
      this.#tenants.set(tenantId, tenant);
    }
    tenant.streams.add(stream);
    if (this.#closing) {
      stream.end('shutdown', 'the server is shutting down');
      return stream;
    }
    if (from.resumedAt !== undefined && resumedFrom !== null)
      stream.remember({ id: resumedFrom, received_at: from.resumedAt });
    stream.start({
      stream_id: stream.id,
      tenant_id: tenantId,
      events: request.events,
      resumed_from: resumedFrom,
      heartbeat_seconds: limits.heartbeatMs / 1000,
    });
    this.#deps.log.info({ stream: stream.id, tenant: tenantId, resumedFrom }, 'listen stream opened');
    if (!this.#loop.running) this.#loop.start();
    else this.#loop.wake();
    recheck = setInterval(() => {
      request.stillAuthorised().then(
        (ok) => {
          if (!ok) stream.end('credentials_revoked', 'the credential this stream was opened with may no longer listen');
        },
        () => {}, // the database is away: the next check decides
      );
    }, limits.recheckMs);
    recheck.unref();
    try {
      const { rows, more } = await feed.since(tenantId, floor, limits.resumeMaxEvents);
      if (more)
        gap = `more than ${limits.resumeMaxEvents} events since Last-Event-ID ${resumedFrom}: only the newest ${limits.resumeMaxEvents} are sent`;
      stream.catchUp(rows, gap, more);
    } catch (error) {
      stream.end('server_error', 'the server could not read the events to catch up on');
      throw error;
    }
    return stream;
  }

  /** A look for new rows now (a row was written in this process). */
  wake(): void {
    this.#loop.wake();
  }

  /** Ends every stream (`bye`, reason shutdown) and stops the poll; new streams are refused. */
  async close(): Promise<void> {
    this.#closing = true;
    for (const tenant of [...this.#tenants.values()])
      for (const stream of [...tenant.streams]) stream.end('shutdown', 'the server is shutting down');
    await this.#loop.stop();
  }

  async #poll(): Promise<number> {
    if (this.#tenants.size === 0) return IDLE_MS;
    const { feed, now } = this.#deps;
    const limits = this.#limits;
    const since = iso(now().getTime() - limits.lateCommitMs);
    const floors = new Map<string, string>();
    for (const [tenantId, tenant] of this.#tenants) {
      for (const [id, at] of tenant.seen) if (at < since) tenant.seen.delete(id);
      for (const s of tenant.streams) s.forget(since);
      // Rows older than every stream's floor need not be read: no stream of the tenant takes them.
      let min: string | undefined;
      for (const s of tenant.streams) if (min === undefined || s.floor < min) min = s.floor;
      if (min !== undefined) floors.set(tenantId, min);
    }
    const fresh: FeedKey[] = [];
    let after: FeedKey | undefined;
    for (let read = 0; read < limits.keysPerPoll; ) {
      const page = await feed.recentKeys([...this.#tenants.keys()], since, after, limits.keysPerPage);
      for (const key of page) {
        const tenant = this.#tenants.get(key.tenant_id);
        if (!tenant || tenant.seen.has(key.id)) continue;
        const floor = floors.get(key.tenant_id);
        if (floor !== undefined && key.received_at < floor) tenant.seen.set(key.id, key.received_at);
        else fresh.push(key);
      }
      read += page.length;
      if (page.length < limits.keysPerPage) break;
      after = page[page.length - 1];
    }
    if (fresh.length > 0)
      for (const row of await feed.rows(fresh.map((k) => k.id))) {
        const tenant = this.#tenants.get(row.tenant_id);
        if (!tenant || tenant.seen.has(row.id)) continue;
        tenant.seen.set(row.id, row.received_at);
        for (const stream of [...tenant.streams]) stream.offer(row);
      }
    return this.#tenants.size === 0 ? IDLE_MS : limits.pollMs;
  }
}
