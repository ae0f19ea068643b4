// The service's answers to the daemon, checked before they are used. The contract's schemas
// (@guard/contract/bundle-requests) define them; the daemon checks them by hand instead of
// loading TypeBox's checker, which costs a long-running process ~5.5 MiB of RSS for as long
// as it runs (idle 70 → 76 MiB, measured; decision 0005 weighs the same cost for one-shot
// commands). answers.test.ts holds the two to agreement on valid answers and on every field
// made wrong or left out. Numbers that steer the daemon's loops are clamped to sane ranges,
// so a faulty answer can neither make it spin nor fall asleep.

import type {
  AgentCommand,
  BundleRequestState,
  CommandState,
  HeartbeatResponse,
} from '@guard/contract/bundle-requests';
import { BUNDLE_REQUEST_STATES } from '@guard/contract/bundle-requests';
import { AgentError } from '../errors.ts';

/** A command id as the contract has it: it becomes part of a file name. */
const COMMAND_ID = /^[A-Za-z0-9_-]{1,128}$/;

export const HEARTBEAT_SECONDS_RANGE = [5, 3600] as const;
export const POLL_WAIT_SECONDS_RANGE = [1, 30] as const;

type Doc = Record<string, unknown>;

const isDoc = (v: unknown): v is Doc => typeof v === 'object' && v !== null && !Array.isArray(v);
const isText = (v: unknown): v is string => typeof v === 'string';
const isTime = (v: unknown): v is string => isText(v) && /^\d{4}-\d{2}-\d{2}T/i.test(v) && !Number.isNaN(Date.parse(v));
const isState = (v: unknown): v is BundleRequestState => BUNDLE_REQUEST_STATES.includes(v as BundleRequestState);
const isCount = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) >= 1;

function refuse(step: string, why: string): never {
  throw new AgentError('server', `${step} failed: unexpected answer from the service (${why})`);
}

const clamp = (n: number, [lo, hi]: readonly [number, number]) => Math.min(hi, Math.max(lo, n));

export function parseHeartbeatAnswer(value: unknown): HeartbeatResponse {
  const step = 'heartbeat';
  if (!isDoc(value)) refuse(step, 'not a JSON object');
  if (!isTime(value.server_time)) refuse(step, 'server_time is not a timestamp');
  if (!isCount(value.heartbeat_seconds)) refuse(step, 'heartbeat_seconds is not a positive integer');
  if (!isCount(value.poll_wait_seconds)) refuse(step, 'poll_wait_seconds is not a positive integer');
  return {
    server_time: value.server_time,
    heartbeat_seconds: clamp(value.heartbeat_seconds, HEARTBEAT_SECONDS_RANGE),
    poll_wait_seconds: clamp(value.poll_wait_seconds, POLL_WAIT_SECONDS_RANGE),
  };
}

export function parseCommandList(value: unknown): AgentCommand[] {
  const step = 'poll';
  if (!isDoc(value)) refuse(step, 'not a JSON object');
  if (!Array.isArray(value.commands)) refuse(step, 'commands is not a list');
  return value.commands.map((c: unknown, i: number) => {
    const at = `commands[${i}]`;
    if (!isDoc(c)) refuse(step, `${at} is not an object`);
    // The id names the bundle's file under state_dir: never a path (`../`), whatever the service says.
    if (!isText(c.id) || !COMMAND_ID.test(c.id)) refuse(step, `${at}.id is not a command id`);
    if (c.type !== 'support_bundle') refuse(step, `${at}.type is not support_bundle`);
    if (!isText(c.request_id)) refuse(step, `${at}.request_id is not a string`);
    if (!isState(c.state)) refuse(step, `${at}.state is not a request state`);
    if (c.acknowledged !== undefined && typeof c.acknowledged !== 'boolean')
      refuse(step, `${at}.acknowledged is not a boolean`);
    if (!isTime(c.created_at)) refuse(step, `${at}.created_at is not a timestamp`);
    if (!isTime(c.expires_at)) refuse(step, `${at}.expires_at is not a timestamp`);
    return {
      id: c.id,
      type: 'support_bundle',
      request_id: c.request_id,
      state: c.state,
      ...(c.acknowledged !== undefined ? { acknowledged: c.acknowledged as boolean } : {}),
      created_at: c.created_at,
      expires_at: c.expires_at,
    };
  });
}

export function parseCommandState(value: unknown, step: string): CommandState {
  if (!isDoc(value)) refuse(step, 'not a JSON object');
  if (!isText(value.id)) refuse(step, 'id is not a string');
  if (!isState(value.state)) refuse(step, 'state is not a request state');
  return { id: value.id, state: value.state };
}

/** The tenant's detection policy as the service sends it (answers to heartbeat and poll). */
export interface PolicyAnswer {
  version: string;
  /** `overridden`: the tenant set the severity (absent from older services: compare with the default). */
  signal_types: Record<string, { enabled: boolean; severity: number; overridden?: boolean }>;
}

/**
 * The `detection` field of a heartbeat or poll answer; undefined when absent or malformed (an
 * older service sends none; a faulty one must not stop the daemon: the last policy stays).
 */
export function parseDetectionPolicy(value: unknown): PolicyAnswer | undefined {
  if (!isDoc(value) || !isDoc(value.detection)) return undefined;
  const { version, signal_types: types } = value.detection;
  if (!isText(version) || version.length > 200 || !isDoc(types)) return undefined;
  const out: PolicyAnswer['signal_types'] = {};
  for (const [type, rule] of Object.entries(types).slice(0, 100)) {
    if (!isDoc(rule) || typeof rule.enabled !== 'boolean') return undefined;
    const severity = rule.severity;
    if (!Number.isInteger(severity) || (severity as number) < 1 || (severity as number) > 5) return undefined;
    if (rule.overridden !== undefined && typeof rule.overridden !== 'boolean') return undefined;
    out[type] = {
      enabled: rule.enabled,
      severity: severity as number,
      ...(rule.overridden === undefined ? {} : { overridden: rule.overridden }),
    };
  }
  return { version, signal_types: out };
}
