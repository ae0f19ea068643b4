// The daemon's hand-written checks (answers.ts) against the contract's schemas: both accept the
// same valid answers and both refuse each field made wrong or left out.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CommandList, CommandState, HeartbeatResponse } from '@guard/contract/bundle-requests';
import { firstFault, type JsonSchema } from '@guard/contract/schema-check';
import { parseCommandList, parseCommandState, parseHeartbeatAnswer } from './answers.ts';

const command = {
  id: 'brq_1',
  type: 'support_bundle',
  request_id: 'brq_1',
  state: 'delivered',
  acknowledged: false,
  created_at: '2026-11-21T10:00:00.000Z',
  expires_at: '2026-11-21T11:00:00.000Z',
};
const heartbeat = { server_time: '2026-11-21T10:00:00.000Z', heartbeat_seconds: 60, poll_wait_seconds: 25 };
const state = { id: 'brq_1', state: 'collecting' };

const WRONG: unknown[] = [undefined, null, 42, 'x', [], {}, true, -1, 0];

/** Every document with one field (at any depth) replaced by each wrong value, or left out. */
function mutations(doc: unknown): unknown[] {
  if (Array.isArray(doc)) return doc.flatMap((item, i) => mutations(item).map((m) => doc.with(i, m)));
  if (typeof doc !== 'object' || doc === null) return WRONG;
  const out: unknown[] = [];
  for (const [key, value] of Object.entries(doc)) {
    for (const m of [...WRONG, ...(typeof value === 'object' && value !== null ? mutations(value) : [])]) {
      const copy: Record<string, unknown> = { ...doc };
      if (m === undefined) delete copy[key];
      else copy[key] = m;
      out.push(copy);
    }
  }
  return out;
}

function agrees(schema: JsonSchema, parse: (v: unknown) => unknown, valid: unknown): void {
  assert.equal(firstFault(schema, valid), undefined);
  assert.doesNotThrow(() => parse(valid));
  let refused = 0;
  for (const doc of mutations(valid)) {
    const schemaSays = firstFault(schema, doc) === undefined;
    let weSay = true;
    try {
      parse(doc);
    } catch {
      weSay = false;
    }
    assert.equal(weSay, schemaSays, `disagree on ${JSON.stringify(doc)}`);
    if (!weSay) refused++;
  }
  assert.ok(refused > 5, `only ${refused} mutations refused`);
}

describe('the daemon checks the service’s answers as the contract’s schemas do', () => {
  it('heartbeat answer', () => agrees(HeartbeatResponse, parseHeartbeatAnswer, heartbeat));
  it('command list (with no command, one, two)', () => {
    agrees(CommandList, parseCommandList, { commands: [] });
    agrees(CommandList, parseCommandList, { commands: [command] });
    const { acknowledged: _, ...noAck } = command;
    agrees(CommandList, parseCommandList, { commands: [noAck, { ...command, id: 'brq_2', state: 'collecting' }] });
  });
  it('command state', () => agrees(CommandState, (v) => parseCommandState(v, 'report'), state));

  it('numbers that steer the loops are clamped: no spinning, no sleeping for a day', () => {
    assert.deepEqual(parseHeartbeatAnswer({ ...heartbeat, heartbeat_seconds: 1, poll_wait_seconds: 500 }), {
      ...heartbeat,
      heartbeat_seconds: 5,
      poll_wait_seconds: 30,
    });
    assert.equal(parseHeartbeatAnswer({ ...heartbeat, heartbeat_seconds: 86_400 }).heartbeat_seconds, 3600);
  });

  it('a refusal names the field', () => {
    assert.throws(
      () => parseCommandList({ commands: [{ ...command, type: 'reboot' }] }),
      /poll failed: unexpected answer from the service \(commands\[0\]\.type is not support_bundle\)/,
    );
  });
});

describe('a command id becomes part of a file name', () => {
  it('is refused unless letters, digits, _ and - (no path, no dot, not empty, not too long)', () => {
    for (const id of ['../../etc/cron.d/x', 'a/b', '..', '.hidden', '', 'x'.repeat(129), 'brq 1', 'brq_1\n']) {
      const list = { commands: [{ ...command, id }] };
      assert.throws(() => parseCommandList(list), /id is not a command id/, JSON.stringify(id));
      assert.notEqual(firstFault(CommandList, list), undefined, JSON.stringify(id));
    }
    assert.equal(
      parseCommandList({ commands: [{ ...command, id: 'brq_0193a1b2c3d4e5f6-x' }] })[0].id,
      'brq_0193a1b2c3d4e5f6-x',
    );
  });
});
