// The listen hub against a real database of this run's engine, with streams writing to an
// in-memory output and a clock the test sets: rows that commit out of order, credentials that
// stop holding, a client that does not read, a resume with more to catch up than it may send,
// the stream caps and the shutdown. Each wait is for something written to a stream.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SseMessage, SseParser } from '../../../../listen/src/sse-parser.ts';
import { testSignal } from '../../../test/signals.ts';
import { openTestDatabase, type TestDatabase } from '../../../test/test-database.ts';
import type { SignalTable } from '../../db/index.ts';
import { timeOrderedId } from '../../kernel/ids.ts';
import { ListenFeed } from './feed-repository.ts';
import { type Admission, LISTEN_LIMITS, ListenHub, type ListenLimits } from './hub.ts';
import type { SseOutput } from './stream.ts';

const T0 = Date.parse('2026-11-21T12:00:00.000Z');

/** What a stream wrote, parsed as a client reads it. */
class Output implements SseOutput {
  readonly messages: SseMessage[] = [];
  writableLength = 0;
  destroyed = false;
  ended = false;
  /** When set, nothing written is taken off the buffer: a client that does not read. */
  stalled = false;
  readonly #parser = new SseParser();
  #waiters: (() => void)[] = [];

  write(chunk: string): boolean {
    if (this.stalled) this.writableLength += Buffer.byteLength(chunk);
    this.messages.push(...this.#parser.push(chunk));
    this.#wake();
    return true;
  }
  end(): void {
    this.ended = true;
    this.#wake();
  }
  destroy(): void {
    this.destroyed = true;
    this.#wake();
  }
  #wake(): void {
    const w = this.#waiters;
    this.#waiters = [];
    for (const f of w) f();
  }
  /** Waits for `cond`; fails when the stream ends first, or (a bound on failure only) after 20 s. */
  async until(cond: () => boolean, what: string): Promise<void> {
    const deadline = Date.now() + 20_000;
    while (!cond()) {
      if (this.ended || this.destroyed)
        throw new Error(`the stream ended before ${what}: ${JSON.stringify(this.messages)}`);
      if (Date.now() > deadline) throw new Error(`no ${what} after 20 s: ${JSON.stringify(this.messages)}`);
      await new Promise<void>((r) => {
        this.#waiters.push(r);
        setTimeout(r, 1000).unref();
      });
    }
  }
  async gone(): Promise<void> {
    while (!this.ended && !this.destroyed) await new Promise<void>((r) => this.#waiters.push(r));
  }
  ids(): string[] {
    return this.messages.filter((m) => !['ready', 'gap', 'bye'].includes(m.event)).map((m) => m.lastEventId);
  }
  waitForId(id: string): Promise<void> {
    return this.until(() => this.ids().includes(id), `event ${id}`);
  }
}

describe('ListenHub', () => {
  let test: TestDatabase;
  let feed: ListenFeed;
  let nowMs = T0;
  const now = () => new Date(nowMs);
  const hubs: ListenHub[] = [];
  const log = { error() {}, info() {} };

  const makeHub = (limits: Partial<ListenLimits> = {}) => {
    const hub = new ListenHub(
      { feed, now, consoleBaseUrl: () => 'https://guard.example', log },
      { ...LISTEN_LIMITS, pollMs: 5, ...limits },
    );
    hubs.push(hub);
    return hub;
  };

  let tenantSeq = 0;
  const newTenant = async () => {
    const id = `t_hub${++tenantSeq}`;
    await test.db.insertInto('tenants').values({ id, name: id, created_at: now().toISOString() }).execute();
    return id;
  };
  /** A signal of `tenant` received at `atMs` (default now), written now. */
  const write = async (tenant: string, atMs = nowMs): Promise<SignalTable> => {
    const row = testSignal(tenant, new Date(atMs), timeOrderedId('sig', atMs));
    await test.db.insertInto('signals').values(row).execute();
    return row;
  };
  const open = async (
    hub: ListenHub,
    tenant: string,
    options: { lastEventId?: string; events?: string[]; stillAuthorised?: () => Promise<boolean> } = {},
  ) => {
    const out = new Output();
    const admission: Admission = hub.admit(tenant);
    const from = await hub.resumePoint(tenant, options.lastEventId);
    const stream = await hub.start(
      out,
      admission,
      {
        events: (options.events ?? ['signal_created', 'test']) as never,
        stillAuthorised: options.stillAuthorised ?? (async () => true),
      },
      from,
    );
    return { out, stream };
  };

  before(async () => {
    test = await openTestDatabase('listen-hub');
    feed = new ListenFeed(test.db);
  });
  after(async () => {
    for (const h of hubs) await h.close();
    await test.close();
  });

  it('sends a row that commits after a later-stamped one was sent, within the late-commit window', async () => {
    const hub = makeHub();
    const tenant = await newTenant();
    const { out } = await open(hub, tenant);
    nowMs += 1000;
    const later = await write(tenant, nowMs);
    await out.waitForId(later.id);
    // Stamped before `later`, committed after it was sent: a group commit waiting its turn.
    const earlier = await write(tenant, nowMs - 500);
    await out.waitForId(earlier.id);
    assert.deepEqual(out.ids(), [later.id, earlier.id]);
  });

  it('sends each row once to every stream of its tenant, and none to the streams of others', async () => {
    const hub = makeHub();
    const [one, two] = [await newTenant(), await newTenant()];
    const a1 = await open(hub, one);
    const a2 = await open(hub, one);
    const b = await open(hub, two);
    nowMs += 1000;
    const rows = [await write(one, nowMs), await write(two, nowMs + 1), await write(one, nowMs + 2)];
    nowMs += 2;
    await a1.out.waitForId(rows[2].id);
    await a2.out.waitForId(rows[2].id);
    await b.out.waitForId(rows[1].id);
    // Another row of each after a second poll: nothing of the first three comes again.
    nowMs += 1;
    const last = [await write(one), await write(two)];
    await a1.out.waitForId(last[0].id);
    await a2.out.waitForId(last[0].id);
    await b.out.waitForId(last[1].id);
    assert.deepEqual(a1.out.ids(), [rows[0].id, rows[2].id, last[0].id]);
    assert.deepEqual(a2.out.ids(), [rows[0].id, rows[2].id, last[0].id]);
    assert.deepEqual(b.out.ids(), [rows[1].id, last[1].id]);
  });

  it('ends a stream whose credential no longer holds (bye: credentials_revoked)', async () => {
    const hub = makeHub({ recheckMs: 5 });
    const tenant = await newTenant();
    let allowed = true;
    const { out } = await open(hub, tenant, { stillAuthorised: async () => allowed });
    assert.equal(hub.open(tenant), 1);
    allowed = false;
    await out.gone();
    const bye = out.messages[out.messages.length - 1];
    assert.equal(bye.event, 'bye');
    assert.equal(JSON.parse(bye.data).reason, 'credentials_revoked');
    assert.equal(hub.open(tenant), 0);
  });

  it('cuts off a client that does not read once more than maxBufferedBytes wait for it', async () => {
    const hub = makeHub({ maxBufferedBytes: 2000 });
    const tenant = await newTenant();
    const { out } = await open(hub, tenant);
    out.stalled = true;
    nowMs += 1000;
    for (let i = 0; i < 10; i++) await write(tenant, nowMs + i);
    await out.gone();
    assert.equal(out.destroyed, true);
    assert.equal(hub.open(tenant), 0);
  });

  it('catches a resumed stream up on the newest resumeMaxEvents only, after a gap notice', async () => {
    const hub = makeHub({ resumeMaxEvents: 3 });
    const tenant = await newTenant();
    nowMs += 60_000;
    const first = await write(tenant);
    const rows: SignalTable[] = [];
    for (let i = 1; i <= 5; i++) rows.push(await write(tenant, nowMs + i));
    nowMs += 10;
    const { out } = await open(hub, tenant, { lastEventId: first.id });
    // A row after the catch-up, through the live feed, which reads the window again: the two
    // rows the catch-up left out are not sent then either.
    const next = await write(tenant);
    await out.waitForId(next.id);
    assert.equal(out.messages[1].event, 'gap');
    assert.match(JSON.parse(out.messages[1].data).message, /more than 3 events/);
    assert.deepEqual(out.ids(), [...rows.slice(2).map((r) => r.id), next.id]);
  });

  it('tells a resume older than the window as a gap and starts from now', async () => {
    const hub = makeHub({ resumeWindowMs: 60_000 });
    const tenant = await newTenant();
    const old = await write(tenant);
    nowMs += 61_000;
    const { out } = await open(hub, tenant, { lastEventId: old.id });
    await out.until(() => out.messages.some((m) => m.event === 'gap'), 'the gap notice');
    assert.match(JSON.parse(out.messages[1].data).message, /older than the resume window/);
    const next = await write(tenant);
    await out.waitForId(next.id);
    assert.deepEqual(out.ids(), [next.id]);
  });

  it('admits streamsPerTenant per tenant and streamsTotal in all (429), a place coming back when a stream ends', async () => {
    const hub = makeHub({ streamsPerTenant: 2, streamsTotal: 3 });
    const [one, two] = [await newTenant(), await newTenant()];
    const s1 = await open(hub, one);
    await open(hub, one);
    assert.throws(() => hub.admit(one), { status: 429, code: 'too_many_streams' });
    await open(hub, two);
    assert.throws(() => hub.admit(two), { status: 429, code: 'too_many_streams', message: /this server holds 3/ });
    s1.stream.end('client_closed');
    assert.equal(hub.open(), 2);
    await open(hub, two);
    assert.equal(hub.open(two), 2);
  });

  it('ends every stream with bye (shutdown) on close, and refuses new ones (503)', async () => {
    const hub = makeHub();
    const tenant = await newTenant();
    const { out } = await open(hub, tenant);
    await hub.close();
    assert.equal(out.ended, true);
    assert.equal(JSON.parse(out.messages[out.messages.length - 1].data).reason, 'shutdown');
    assert.throws(() => hub.admit(tenant), { status: 503 });
    assert.equal(hub.open(), 0);
  });
});
