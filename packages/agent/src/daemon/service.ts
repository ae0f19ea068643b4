// The daemon's calls to the service (docs/guard-agent-daemon.md, "Protocol"), each one try:
// the daemon's loops decide when to try again (backoff.ts). Every call carries the agent API
// key from enrollment.json; every answer is checked (answers.ts) before it is used.
//   heartbeat  POST /v1/agent/heartbeat
//   poll       GET  /v1/agent/commands?wait=SECONDS   (abortable: SIGTERM ends it at once)
//   ack        POST /v1/agent/commands/{id}/ack
//   report     POST /v1/agent/commands/{id}/report

import type {
  AgentCommand,
  CommandReport,
  CommandState,
  HeartbeatRequest,
  HeartbeatResponse,
} from '@guard/contract/bundle-requests';
import type { Enrollment } from '@guard/contract/wire';
import { type HttpDeps, parseJson, send, statusError } from '../http/index.ts';
import { parseCommandList, parseCommandState, parseHeartbeatAnswer } from './answers.ts';

export interface ServiceClient {
  heartbeat(body: HeartbeatRequest): Promise<HeartbeatResponse>;
  poll(waitSeconds: number, signal: AbortSignal): Promise<AgentCommand[]>;
  ack(id: string): Promise<CommandState>;
  report(id: string, body: CommandReport, signal?: AbortSignal): Promise<CommandState>;
}

export function serviceClient(http: HttpDeps, enrollment: Pick<Enrollment, 'base_url' | 'api_key'>): ServiceClient {
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
    return parse(parseJson(res, step));
  }
  const command = (id: string) => `/v1/agent/commands/${encodeURIComponent(id)}`;
  return {
    heartbeat: (body) => call('heartbeat', 'POST', '/v1/agent/heartbeat', parseHeartbeatAnswer, body),
    poll: (waitSeconds, signal) =>
      call('poll', 'GET', `/v1/agent/commands?wait=${waitSeconds}`, parseCommandList, undefined, signal),
    ack: (id) => call('acknowledge', 'POST', `${command(id)}/ack`, (v) => parseCommandState(v, 'acknowledge')),
    report: (id, body, signal) =>
      call(
        `report ${body.state}`,
        'POST',
        `${command(id)}/report`,
        (v) => parseCommandState(v, `report ${body.state}`),
        body,
        signal,
      ),
  };
}
