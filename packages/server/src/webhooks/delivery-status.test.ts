import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { DeliveryState } from '../db/index.ts';
import { DELIVERY_STATUSES, deliveryStatus, statusCondition } from './delivery-status.ts';

describe('delivery status words', () => {
  const cases: [DeliveryState, number, string][] = [
    ['pending', 0, 'pending'],
    ['delivering', 0, 'pending'],
    ['pending', 1, 'retrying'],
    ['delivering', 3, 'retrying'],
    ['succeeded', 1, 'succeeded'],
    ['succeeded', 4, 'succeeded'],
    ['failed', 8, 'failed'],
    ['failed', 0, 'failed'],
  ];
  for (const [state, attempts, word] of cases)
    it(`${state} after ${attempts} attempts reads ${word}`, () => {
      assert.equal(deliveryStatus({ state, attempts }), word);
    });

  it('each status word selects exactly the rows that read as it', () => {
    for (const status of DELIVERY_STATUSES) {
      const c = statusCondition(status);
      for (const [state, attempts] of cases) {
        const selected = c.states.includes(state) && (c.attempted === undefined || c.attempted === attempts > 0);
        assert.equal(selected, deliveryStatus({ state, attempts }) === status, `${status}: ${state}/${attempts}`);
      }
    }
  });
});
