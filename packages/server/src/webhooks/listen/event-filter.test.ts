import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EVENT_TYPES } from '@guard/contract/endpoint-rules';
import { listenTypesOf, parseEventFilter, TRIGGER_SERVER_ID, wants } from './event-filter.ts';

const row = (event_type: string, is_test: number, server_id = 'ag_1') => ({ event_type, is_test, server_id });

describe('listen event filter', () => {
  it('carries every event type when none is named', () => {
    const all = [...EVENT_TYPES];
    assert.deepEqual(parseEventFilter(undefined), all);
    assert.deepEqual(parseEventFilter(''), all);
    assert.deepEqual(parseEventFilter(' '), all);
  });

  it('takes a comma-separated list, spaces around names allowed, in the catalogue order, once each', () => {
    assert.deepEqual(parseEventFilter('endpoint.failing, signal_created,signal_created'), [
      'signal_created',
      'endpoint.failing',
    ]);
  });

  it('refuses an unknown name, naming it and the known ones', () => {
    assert.throws(() => parseEventFilter('signal_created,nope'), {
      status: 400,
      code: 'unknown_event_type',
      message: new RegExp(`"nope".*${EVENT_TYPES.join(', ').replaceAll('.', '\\.')}`),
    });
    assert.throws(() => parseEventFilter('signal_created,'), { code: 'unknown_event_type', message: /""/ });
  });

  it('names each stored row as endpoints subscribe to it; a triggered event as signal_created and test', () => {
    assert.deepEqual(listenTypesOf(row('signal_created', 0)), ['signal_created']);
    assert.deepEqual(listenTypesOf(row('signal_created', 1, 'test')), ['test']);
    assert.deepEqual(listenTypesOf(row('signal_created', 1, TRIGGER_SERVER_ID)), ['signal_created', 'test']);
    assert.deepEqual(listenTypesOf(row('endpoint.failing', 1, 'guard')), ['endpoint.failing']);
    assert.equal(wants(new Set(['signal_created']), row('signal_created', 1, TRIGGER_SERVER_ID)), true);
    assert.equal(wants(new Set(['signal_created']), row('signal_created', 1, 'test')), false);
    assert.equal(wants(new Set(['endpoint.disabled']), row('endpoint.failing', 1, 'guard')), false);
  });
});
