// POST /v1/agents/enroll: an agent exchanges an enrolment token for its own API key
// (DESIGN §3 contract — enrolment). The key is returned once and stored hashed.

import type { EnrollRequest, EnrollResponse } from '@guard/contract';
import type { FastifyBaseLogger } from 'fastify';
import { hashSecret, newId, newSecret } from '../auth/index.ts';
import { ApiError } from '../kernel/errors.ts';
import type { EnrollmentTokensRepository } from './tokens-repository.ts';

export async function enrollAgent(
  tokens: EnrollmentTokensRepository,
  body: EnrollRequest,
  now: string,
  log: FastifyBaseLogger,
): Promise<EnrollResponse> {
  const apiKey = newSecret('agentKey');
  const agentId = newId('ag');
  const tenantId = await tokens.enroll(
    hashSecret(body.token),
    {
      id: agentId,
      api_key_hash: hashSecret(apiKey),
      hostname: body.hostname ?? '',
      environment: body.environment ?? '',
      agent_version: body.agent_version ?? '',
      enrolled_at: now,
      revoked_at: null,
      last_seen_at: null,
      uptime_seconds: null,
      agent_uptime_seconds: null,
      last_heartbeat_at: null,
    },
    now,
  );
  if (!tenantId)
    throw new ApiError(401, 'invalid_enrollment_token', 'the enrolment token is unknown, expired, revoked or used up');
  log.info({ agentId, tenantId }, 'agent enrolled');
  return { agent_id: agentId, tenant_id: tenantId, api_key: apiKey };
}
