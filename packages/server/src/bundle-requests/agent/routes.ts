// The agent-facing protocol of `guard-agent daemon` (docs/guard-agent-daemon.md), every call
// with the agent's API key:
//   POST /v1/agent/heartbeat               {agent_version, hostname, uptime_seconds, agent_uptime_seconds?,
//                                          detectors?, spool_depth?}
//                                          → {server_time, heartbeat_seconds, poll_wait_seconds, detection}
//   GET  /v1/agent/commands?wait=SECONDS&detection_version=V
//                                          long poll (wait ≤ 30 s): answered at once when the agent
//                                          has a command, when a request for it is created, when the
//                                          tenant's detection policy is not version V (or changes
//                                          while held), or after the wait with none; every answer
//                                          carries the policy (`detection`). A command not
//                                          acknowledged is handed out again by the next poll.
//   POST /v1/agent/commands/{id}/ack       the agent took it (it no longer expires) → {id, state}
//   POST /v1/agent/commands/{id}/report    {state: collecting|uploading|done|failed|interrupted,
//                                          bundle_id?, error?, step?, reason?} → {id, state};
//                                          the same report again is accepted and changes nothing
// Refusals: 404 for another agent's or an unknown request, 409 request_expired /
// request_finished / invalid_transition / bundle_mismatch.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  type AgentCommand,
  CommandList,
  CommandReport,
  CommandState,
  HeartbeatRequest,
  HeartbeatResponse,
} from '@guard/contract';
import { Type } from 'typebox';
import { requireAgent } from '../../auth/index.ts';
import type { BundleRequestTable } from '../../db/index.ts';
import { agentPolicyView, versionOf } from '../../detection/index.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { Applied } from '../bundle-requests-repository.ts';
import { RECHECK_MS } from '../command-hub.ts';
import type { RequestsContext } from '../context.ts';

/** The longest a command poll is held; well under every proxy's and load balancer's idle timeout. */
export const MAX_POLL_WAIT_SECONDS = 30;
/** What the daemon is told to use: its poll wait, and the time between heartbeats. */
export const POLL_WAIT_SECONDS = 25;
export const HEARTBEAT_SECONDS = 60;

const PollQuery = Type.Object({
  wait: Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: MAX_POLL_WAIT_SECONDS,
      default: 0,
      description: 'seconds to hold the poll when there is no command (0: answer at once)',
    }),
  ),
  detection_version: Type.Optional(
    Type.String({
      maxLength: 64,
      description:
        'the detection policy version the agent applies: the poll answers at once when the policy is another',
    }),
  ),
});

function commandView(row: BundleRequestTable): AgentCommand {
  return {
    id: row.id,
    type: 'support_bundle',
    request_id: row.id,
    state: row.state,
    acknowledged: row.acknowledged_at !== null,
    created_at: row.created_at,
    expires_at: row.expires_at,
  };
}

/** The answer to an acknowledgement or report, or the refusal as an API error. */
function answer(applied: Applied): CommandState {
  if (applied.outcome === 'missing') throw notFound('command');
  if (applied.outcome === 'refused')
    throw new ApiError(409, applied.code, `${applied.message} (request ${applied.row.id} is ${applied.row.state})`);
  return { id: applied.row.id, state: applied.row.state };
}

export const agentCommandRoutes: FastifyPluginAsyncTypebox<RequestsContext> = async (app, ctx) => {
  // Shutdown: held polls answer at once rather than holding the server for their wait.
  app.addHook('preClose', async () => ctx.hub.close());

  app.post(
    '/v1/agent/heartbeat',
    {
      schema: {
        tags: ['agent'],
        summary:
          "guard-agent daemon's heartbeat (agent key): its version, hostname, uptimes, detectors and spool; it counts " +
          "as seen; the answer carries the tenant's detection policy",
        body: HeartbeatRequest,
        response: { 200: HeartbeatResponse, ...ErrorResponses },
      },
    },
    async (req) => {
      const agent = requireAgent(req);
      const at = ctx.now();
      await ctx.agents.heartbeat(
        agent.agentId,
        {
          agentVersion: req.body.agent_version,
          hostname: req.body.hostname,
          uptimeSeconds: req.body.uptime_seconds,
          agentUptimeSeconds: req.body.agent_uptime_seconds ?? null,
          detectors: req.body.detectors ?? null,
          spoolDepth: req.body.spool_depth ?? null,
        },
        at,
      );
      return {
        server_time: at.toISOString(),
        heartbeat_seconds: HEARTBEAT_SECONDS,
        poll_wait_seconds: POLL_WAIT_SECONDS,
        detection: agentPolicyView(await ctx.detection.get(agent.tenantId)),
      };
    },
  );

  app.get(
    '/v1/agent/commands',
    {
      schema: {
        tags: ['agent'],
        summary:
          'Long poll for commands (agent key): answered at once when there is one, else when one is created, when ' +
          'the detection policy is not `detection_version` (or changes while held), or after `wait` seconds with none; ' +
          'every answer carries the detection policy',
        querystring: PollQuery,
        response: { 200: CommandList, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const agent = requireAgent(req);
      // Real time, not ctx.now: the wait is a property of this connection, not of the data.
      const deadline = Date.now() + (req.query.wait ?? 0) * 1000;
      const gone = new AbortController();
      reply.raw.once('close', () => gone.abort());
      // The policy version the agent has: the one it names, else the one this poll began with.
      let known = req.query.detection_version;
      for (;;) {
        const rows = await ctx.requests.commandsFor(agent.agentId, ctx.now());
        const policy = await ctx.detection.get(agent.tenantId);
        known ??= versionOf(policy);
        const left = deadline - Date.now();
        if (rows.length > 0 || versionOf(policy) !== known || left <= 0 || gone.signal.aborted || ctx.hub.closed)
          return { commands: rows.map(commandView), detection: agentPolicyView(policy) };
        await ctx.hub.wait(agent.agentId, Math.min(RECHECK_MS, left), gone.signal, agent.tenantId);
      }
    },
  );

  app.post(
    '/v1/agent/commands/:id/ack',
    {
      schema: {
        tags: ['agent'],
        summary: 'Acknowledge a command (agent key): the agent took it; it no longer expires',
        params: IdParams,
        response: { 200: CommandState, ...ErrorResponses },
      },
    },
    async (req) => {
      const agent = requireAgent(req);
      return answer(await ctx.requests.acknowledge(agent.agentId, req.params.id, ctx.now()));
    },
  );

  app.post(
    '/v1/agent/commands/:id/report',
    {
      schema: {
        tags: ['agent'],
        summary: 'Report a step or the outcome of a command (agent key); a repeated report changes nothing',
        params: IdParams,
        body: CommandReport,
        response: { 200: CommandState, ...ErrorResponses },
      },
    },
    async (req) => {
      const agent = requireAgent(req);
      const { id } = req.params;
      if (req.body.state === 'done' && req.body.bundle_id !== undefined) {
        const requestId = await ctx.requests.requestIdOfBundle(agent.agentId, req.body.bundle_id);
        if (requestId === undefined)
          throw new ApiError(409, 'bundle_mismatch', `this agent registered no bundle ${req.body.bundle_id}`);
        if (requestId !== id)
          throw new ApiError(
            409,
            'bundle_mismatch',
            `bundle ${req.body.bundle_id} answers ${requestId === null ? 'no request' : `request ${requestId}`}, not ${id}`,
          );
      }
      const state = answer(await ctx.requests.report(agent.agentId, id, req.body, ctx.now()));
      req.log.info({ requestId: id, agentId: agent.agentId, state: state.state }, 'bundle request report');
      return state;
    },
  );
};
