// What the crash tests check of the receipts after a kill (delivery-crash, replicas-crash):
// every (signal, endpoint) pair of every signal that exists arrives, and pairs and
// Guard-Delivery ids map one to one — duplicates allowed, each with its pair's id (spec 2.6:
// at least once, the same Guard-Delivery on a retry). Before the analysis the server's
// delivery queue must be empty: late duplicates (attempts whose outcome the kill lost) and
// the last pairs of a signal nobody acknowledged arrive before that, never after.

import assert from 'node:assert/strict';
import type { Receipt } from '../../../bench/lib-tls.ts';
import { sleep } from './harness.ts';

const pairOf = (r: { signalId: string; path: string }) => `${r.signalId} ${r.path}`;

/**
 * Waits (at most `maxMs`) until every pair of every signal that exists has arrived: the
 * acknowledged ones (`known`), and any cut-off one that the receiver has shown to exist.
 * Returns how many pairs are still missing (0: all arrived).
 */
export async function waitForEveryPair(
  receipts: readonly Receipt[],
  known: ReadonlySet<string>,
  paths: readonly string[],
  maxMs: number,
  pollMs: number,
): Promise<number> {
  const missing = (): number => {
    const seen = new Set(receipts.map(pairOf));
    const signals = new Set(known);
    for (const r of receipts) if (r.signalId) signals.add(r.signalId);
    let n = 0;
    for (const s of signals) for (const p of paths) if (!seen.has(`${s} ${p}`)) n++;
    return n;
  };
  const deadline = performance.now() + maxMs;
  let left = missing();
  while (left > 0 && performance.now() < deadline) {
    await sleep(pollMs);
    left = missing();
  }
  return left;
}

/**
 * Asserts that every receipt went to one of `paths` with a delivery id of `deliveryId`'s form,
 * that every pair of `known` arrived, that each pair came under one Guard-Delivery and each id
 * served one pair, and that at most `cutOff` signals nobody acknowledged were delivered.
 */
export function assertOneIdPerPair(
  receipts: readonly Receipt[],
  known: ReadonlySet<string>,
  paths: readonly string[],
  cutOff: number,
  deliveryId: RegExp,
): { pairs: number; orphans: number; duplicates: number; duplicatedPairs: number; counts: Map<string, number> } {
  const deliveryOfPair = new Map<string, Set<string>>();
  const pairOfDelivery = new Map<string, Set<string>>();
  for (const r of receipts) {
    assert.ok(paths.includes(r.path), `unexpected path ${r.path}`);
    assert.match(r.signalId, /^sig_/, 'every body is an envelope with a signal id');
    assert.match(r.delivery, deliveryId);
    const pair = pairOf(r);
    if (!deliveryOfPair.has(pair)) deliveryOfPair.set(pair, new Set());
    deliveryOfPair.get(pair)?.add(r.delivery);
    if (!pairOfDelivery.has(r.delivery)) pairOfDelivery.set(r.delivery, new Set());
    pairOfDelivery.get(r.delivery)?.add(pair);
  }
  for (const s of known)
    for (const p of paths) assert.ok(deliveryOfPair.has(`${s} ${p}`), `pair ${s} ${p} never arrived`);
  const split = [...deliveryOfPair].filter(([, ids]) => ids.size !== 1);
  assert.deepEqual(split.slice(0, 5), [], 'a pair arrived under more than one Guard-Delivery');
  const shared = [...pairOfDelivery].filter(([, pairs]) => pairs.size !== 1);
  assert.deepEqual(shared.slice(0, 5), [], 'a Guard-Delivery was used for more than one pair');
  const orphans = [...new Set(receipts.map((r) => r.signalId))].filter((s) => !known.has(s));
  assert.ok(orphans.length <= cutOff, `${orphans.length} unacknowledged signals but only ${cutOff} cut-off POSTs`);
  const counts = new Map<string, number>();
  for (const r of receipts) counts.set(r.delivery, (counts.get(r.delivery) ?? 0) + 1);
  return {
    pairs: deliveryOfPair.size,
    orphans: orphans.length,
    duplicates: receipts.length - deliveryOfPair.size,
    duplicatedPairs: [...counts.values()].filter((n) => n > 1).length,
    counts,
  };
}

/**
 * Deliveries waiting or in flight, as a server's /metrics shows them (guard_webhook_queue_depth,
 * read from the database at the scrape: the same from every replica).
 */
export async function queueDepth(metricsUrl: string): Promise<number> {
  const res = await fetch(metricsUrl);
  assert.equal(res.status, 200, `GET ${metricsUrl}: ${res.status}`);
  const text = await res.text();
  const depths = [...text.matchAll(/^guard_webhook_queue_depth\{state="(?:pending|delivering)"\} (\d+)$/gm)];
  assert.equal(depths.length, 2, `no queue depth by state in ${metricsUrl}`);
  return depths.reduce((n, m) => n + Number(m[1]), 0);
}

/**
 * Waits (at most `maxMs`) until the delivery queue is empty: every delivery made, each only once
 * its receiver answered, so every request the servers will send has arrived. Returns the
 * deliveries still waiting or in flight (0: none).
 */
export async function waitForEmptyQueue(metricsUrl: string, maxMs: number, pollMs: number): Promise<number> {
  const deadline = performance.now() + maxMs;
  let left = await queueDepth(metricsUrl);
  while (left > 0 && performance.now() < deadline) {
    await sleep(pollMs);
    left = await queueDepth(metricsUrl);
  }
  return left;
}
