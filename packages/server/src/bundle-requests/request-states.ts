// The life of a bundle request (DESIGN §4 contract — bundle requests), as a pure function of
// its current state and what happened; the repository applies the answer with a conditional
// update. States only move forward:
//
//   queued → delivered → collecting → uploading → done
//                  └────────┴────────────┴──────→ failed | interrupted   (the agent reports it)
//   queued | delivered, not acknowledged, at expires_at → expired        (the agent never took it)
//
// A poll hands a request out (queued → delivered); a lost answer is handed out again until the
// agent acknowledges it. Once acknowledged the agent owns it, and it does not expire: the
// agent reports each step and the outcome, or `interrupted` when it stops. Reports are
// idempotent: the same state again is accepted and changes nothing, so an agent may resend a
// report whose answer it did not get. Anything else that goes backwards is refused.

import type { BundleRequestState, CommandReport } from '@guard/contract';

const ORDER: Record<BundleRequestState, number> = {
  queued: 0,
  delivered: 1,
  collecting: 2,
  uploading: 3,
  done: 4,
  failed: 4,
  expired: 4,
  interrupted: 4,
};

/** Why a request expired, as its `reason` says. */
export const EXPIRED_REASON =
  'the agent did not take the request before it expired (is guard-agent daemon running on the server, and can it reach the service?)';

export function isTerminal(state: BundleRequestState): boolean {
  return ORDER[state] === 4;
}

/** What the rules look at. */
export interface RequestPosition {
  state: BundleRequestState;
  acknowledged: boolean;
  expiresAt: string;
}

export type RequestEvent = { kind: 'acknowledge' } | { kind: 'report'; report: CommandReport } | { kind: 'expire' };

/** The columns a change writes (times are `at`). */
export interface RequestChange {
  state: BundleRequestState;
  acknowledge?: boolean;
  /** Which per-state time to stamp: collecting_at, uploading_at or finished_at. */
  stamp?: 'collecting_at' | 'uploading_at' | 'finished_at';
  bundleId?: string;
  error?: { code: string; message: string };
  step?: string;
  reason?: string;
}

export type Decision =
  | { outcome: 'change'; change: RequestChange }
  /** Nothing to write: the event was already applied (a resent report, a second acknowledgement). */
  | { outcome: 'same' }
  | { outcome: 'refuse'; code: string; message: string }
  /** Not taken in time: the request expires now, and the event is refused. */
  | { outcome: 'expire_first' };

/** A request not yet acknowledged whose expiry has passed. */
export function isDue(p: RequestPosition, at: Date): boolean {
  return (
    (p.state === 'queued' || p.state === 'delivered') && !p.acknowledged && Date.parse(p.expiresAt) <= at.getTime()
  );
}

export function decide(p: RequestPosition, event: RequestEvent, at: Date): Decision {
  if (event.kind === 'expire')
    return isDue(p, at)
      ? {
          outcome: 'change',
          change: {
            state: 'expired',
            stamp: 'finished_at',
            reason: EXPIRED_REASON,
          },
        }
      : { outcome: 'same' };
  if (isDue(p, at)) return { outcome: 'expire_first' };
  if (isTerminal(p.state)) {
    if (event.kind === 'report' && event.report.state === p.state) return { outcome: 'same' };
    return p.state === 'expired'
      ? { outcome: 'refuse', code: 'request_expired', message: 'the request expired before the agent took it' }
      : { outcome: 'refuse', code: 'request_finished', message: `the request is already ${p.state}` };
  }
  if (event.kind === 'acknowledge') {
    if (p.acknowledged) return { outcome: 'same' };
    return {
      outcome: 'change',
      change: { state: p.state === 'queued' ? 'delivered' : p.state, acknowledge: true },
    };
  }
  const { report } = event;
  const target = report.state as BundleRequestState;
  if (ORDER[target] < ORDER[p.state])
    return {
      outcome: 'refuse',
      code: 'invalid_transition',
      message: `the request is ${p.state}; it cannot go back to ${target}`,
    };
  if (target === p.state) return { outcome: 'same' };
  const acknowledge = !p.acknowledged || undefined;
  switch (target) {
    case 'collecting':
      return { outcome: 'change', change: { state: target, acknowledge, stamp: 'collecting_at' } };
    case 'uploading':
      return { outcome: 'change', change: { state: target, acknowledge, stamp: 'uploading_at' } };
    case 'done':
      if (!report.bundle_id)
        return { outcome: 'refuse', code: 'invalid_request', message: 'a done report carries the bundle_id' };
      return {
        outcome: 'change',
        change: { state: target, acknowledge, stamp: 'finished_at', bundleId: report.bundle_id },
      };
    case 'failed':
      if (!report.error)
        return {
          outcome: 'refuse',
          code: 'invalid_request',
          message: 'a failed report carries the error {code, message}',
        };
      return {
        outcome: 'change',
        change: {
          state: target,
          acknowledge,
          stamp: 'finished_at',
          error: report.error,
          step: report.step,
          reason: report.reason ?? report.error.message,
        },
      };
    case 'interrupted':
      return {
        outcome: 'change',
        change: {
          state: target,
          acknowledge,
          stamp: 'finished_at',
          reason: report.reason ?? 'the agent stopped while working on the request',
        },
      };
    default:
      return { outcome: 'refuse', code: 'invalid_transition', message: `an agent cannot report ${target}` };
  }
}
