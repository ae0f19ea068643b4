// The daemon's calls to the service (docs/guard-agent-daemon.md, "Protocol"), each one try:
// the daemon's loops decide when to try again (backoff.ts). Every call carries the agent API
// key from enrollment.json; every answer is checked (answers.ts) before it is used.
//   heartbeat  POST /v1/agent/heartbeat
//   poll       GET  /v1/agent/commands?wait=SECONDS&detection_version=V   (abortable: SIGTERM ends it
//              at once; answered at once when the tenant's detection policy is no longer V)
//   ack        POST /v1/agent/commands/{id}/ack
//   report     POST /v1/agent/commands/{id}/report
//   signal     POST /v1/signals with an Idempotency-Key (detection's spool, docs/detection.md)
// The heartbeat's and the poll's answers may carry the tenant's detection policy: handed to onPolicy.

import type {
  AgentCommand,
  CommandReport,
  CommandState,
  HeartbeatRequest,
  HeartbeatResponse,
} from '@guard/contract/bundle-requests';
import type { Enrollment } from '@guard/contract/wire';
import { describeNetworkError, type HttpDeps, isNetworkError, parseJson, send, statusError } from '../http/index.ts';
import {
  type PolicyAnswer,
  parseCommandList,
  parseCommandState,
  parseDetectionPolicy,
  parseHeartbeatAnswer,
} from './answers.ts';

/** What became of one POST /v1/signals: taken, or why not and whether another try may help. */
export type SignalOutcome = { ok: true } | { ok: false; retry: boolean; error: string };

export interface ServiceClient {
  heartbeat(body: HeartbeatRequest, signal?: AbortSignal): Promise<HeartbeatResponse>;
  poll(waitSeconds: number, signal: AbortSignal): Promise<AgentCommand[]>;
  ack(id: string, signal?: AbortSignal): Promise<CommandState>;
  report(id: string, body: CommandReport, signal?: AbortSignal): Promise<CommandState>;
  postSignal(body: unknown, idempotencyKey: string, signal: AbortSignal): Promise<SignalOutcome>;
  /**
   * POST /v1/signals with a batch (a JSON array, each signal with its idempotency_key): every
   * signal taken, or why not; `batchRefused`: the service would not take this batch as a batch
   * (a service before batches, or one signal it refuses) — send them one at a time.
   */
  postSignals(
    items: readonly { body: unknown; key: string }[],
    signal: AbortSignal,
  ): Promise<SignalOutcome | { ok: false; retry: false; error: string; batchRefused: true }>;
}

/** Answers to a batch after which its signals go one at a time: no batches there, or one signal refused. */
const BATCH_REFUSED_STATUSES = new Set([400, 404, 405, 413, 415, 422]);

/** Statuses after which the same signal may be taken later; any other refusal is for good. */
const RETRY_STATUSES = new Set([401, 403, 408, 425, 429]);

export function serviceClient(
  http: HttpDeps,
  enrollment: Pick<Enrollment, 'base_url' | 'api_key'>,
  onPolicy: (policy: PolicyAnswer) => void = () => {},
): ServiceClient {
  /** The version of the last policy seen: a poll with it is answered at once when the policy changed. */
  let policyVersion: string | undefined;
  const headers = (json: boolean): Record<string, string> => ({
    authorization: `Bearer ${enrollment.api_key}`,
    accept: 'application/json',
    'user-agent': http.userAgent,
    ...(json ? { 'content-type': 'application/json' } : {}),
  });
  async function call<T>(
    step: string,
    method: 'GET' | 'POST',
    path: string,
    parse: (value: unknown) => T,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<T> {
    const res = await send(http, `${enrollment.base_url}${path}`, {
      method,
      headers: headers(body !== undefined),
      body: body === undefined ? (method === 'POST' ? '' : undefined) : JSON.stringify(body),
      signal,
    });
    if (res.status !== 200) throw await statusError(res, http.now().getTime());
    const value = parseJson(res, step);
    const policy = parseDetectionPolicy(value);
    if (policy) {
      policyVersion = policy.version;
      onPolicy(policy);
    }
    return parse(value);
  }
  const command = (id: string) => `/v1/agent/commands/${encodeURIComponent(id)}`;
  return {
    heartbeat: (body, signal) => call('heartbeat', 'POST', '/v1/agent/heartbeat', parseHeartbeatAnswer, body, signal),
    poll: (waitSeconds, signal) =>
      call(
        'poll',
        'GET',
        `/v1/agent/commands?wait=${waitSeconds}${policyVersion ? `&detection_version=${encodeURIComponent(policyVersion)}` : ''}`,
        parseCommandList,
        undefined,
        signal,
      ),
    ack: (id, signal) =>
      call('acknowledge', 'POST', `${command(id)}/ack`, (v) => parseCommandState(v, 'acknowledge'), undefined, signal),
    report: (id, body, signal) =>
      call(
        `report ${body.state}`,
        'POST',
        `${command(id)}/report`,
        (v) => parseCommandState(v, `report ${body.state}`),
        body,
        signal,
      ),
    async postSignals(items, signal) {
      try {
        const res = await send(http, `${enrollment.base_url}/v1/signals`, {
          method: 'POST',
          headers: headers(true),
          body: JSON.stringify(items.map((i) => ({ ...(i.body as object), idempotency_key: i.key }))),
          signal,
        });
        if (res.status === 200) {
          const answer = parseJson(res, 'signal batch') as { results?: unknown };
          if (Array.isArray(answer.results) && answer.results.length === items.length) return { ok: true };
          return {
            ok: false,
            retry: false,
            error: 'the batch was answered without one result per signal',
            batchRefused: true,
          };
        }
        const error = await statusError(res, http.now().getTime());
        if (BATCH_REFUSED_STATUSES.has(res.status))
          return { ok: false, retry: false, error: error.describe(), batchRefused: true };
        return { ok: false, retry: res.status >= 500 || RETRY_STATUSES.has(res.status), error: error.describe() };
      } catch (error) {
        return {
          ok: false,
          retry: true,
          error: isNetworkError(error) ? describeNetworkError(error) : (error as Error).message,
        };
      }
    },
    async postSignal(body, idempotencyKey, signal) {
      try {
        const res = await send(http, `${enrollment.base_url}/v1/signals`, {
          method: 'POST',
          headers: { ...headers(true), 'idempotency-key': idempotencyKey },
          body: JSON.stringify(body),
          signal,
        });
        if (res.status === 200 || res.status === 201 || res.status === 202) return { ok: true };
        const error = await statusError(res, http.now().getTime());
        return {
          ok: false,
          retry: res.status >= 500 || RETRY_STATUSES.has(res.status),
          error: error.describe(),
        };
      } catch (error) {
        return {
          ok: false,
          retry: true,
          error: isNetworkError(error) ? describeNetworkError(error) : (error as Error).message,
        };
      }
    },
  };
}
