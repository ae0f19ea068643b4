// POST /v1/support/bundle/register: records an uploaded bundle (DESIGN §4). Only an object
// presigned for the caller (tenant and agent) can be registered, and only once it is stored
// whole with the size and SHA-256 given; registering twice returns the first record.

import { type BundleManifest, parseManifest, type RegisterRequest, type RegisterResponse } from '@guard/contract';
import type { FastifyBaseLogger } from 'fastify';
import { type AgentPrincipal, newId } from '../../auth/index.ts';
import { ApiError, badRequest, notFound } from '../../kernel/errors.ts';
import type { SupportContext } from '../context.ts';

export async function registerBundle(
  ctx: SupportContext,
  agent: AgentPrincipal,
  body: RegisterRequest,
  log: FastifyBaseLogger,
): Promise<{ created: boolean; record: RegisterResponse }> {
  // Only an object presigned for the caller's tenant exists for it: others' are "not found".
  const upload = await ctx.uploads.find(agent.tenantId, body.object_key);
  if (!upload) throw notFound('upload');
  // A presigned object belongs to the agent that asked for it, not to its whole tenant.
  if (upload.agent_id !== agent.agentId)
    throw new ApiError(
      403,
      'agent_mismatch',
      'this object was presigned for another agent; only the agent that presigned it may register it',
    );
  if (upload.size !== body.size || upload.sha256 !== body.sha256)
    throw new ApiError(409, 'checksum_mismatch', 'size or sha256 differs from what was presigned for this object');
  let manifest: BundleManifest;
  try {
    manifest = parseManifest(body.manifest);
  } catch (error) {
    throw badRequest((error as Error).message, 'invalid_manifest');
  }
  const existing = await ctx.bundles.findByObjectKey(agent.tenantId, body.object_key);
  const stored = await ctx.store.verify(body.object_key);
  if (!stored) throw new ApiError(409, 'object_missing', 'the object has not been uploaded (or its upload expired)');
  if (stored.size !== body.size || stored.sha256 !== body.sha256)
    throw new ApiError(409, 'checksum_mismatch', 'the stored object does not match the size and sha256 given');
  if (existing) return { created: false, record: recordOf(existing) };
  const { bundle, created } = await ctx.bundles.register(agent.tenantId, {
    id: newId('bdl'),
    agent_id: agent.agentId,
    object_key: body.object_key,
    filename: upload.filename,
    size: body.size,
    sha256: body.sha256,
    manifest: JSON.stringify(manifest),
    uploaded_at: ctx.now().toISOString(),
  });
  // created false: a concurrent register won, and its record is the answer.
  if (created) {
    log.info({ bundleId: bundle.id, tenantId: bundle.tenant_id, size: bundle.size }, 'bundle registered');
    ctx.wakeInsights();
  }
  return { created, record: recordOf(bundle) };
}

function recordOf(bundle: { id: string; object_key: string; uploaded_at: string }): RegisterResponse {
  return { bundle_id: bundle.id, object_key: bundle.object_key, uploaded_at: bundle.uploaded_at };
}
