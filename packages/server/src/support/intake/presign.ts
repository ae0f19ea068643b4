// POST /v1/support/bundle/upload-url: a presigned PUT URL for one bundle, valid 15 minutes,
// bound to the caller's tenant, the exact size and the SHA-256 (DESIGN §4). The store makes
// the URL: guard-server's own (embedded store) or S3's (an S3 store), with the headers the
// PUT must carry.

import { randomBytes } from 'node:crypto';
import { PRESIGN_TTL_SECONDS, type UploadUrlRequest, type UploadUrlResponse } from '@guard/contract';
import type { AgentPrincipal } from '../../auth/index.ts';
import { ApiError } from '../../kernel/errors.ts';
import type { SupportContext } from '../context.ts';

/** Object keys are ours: bundles/<tenant>/<date>/<random>.tar.zst; the filename is kept apart. */
function newObjectKey(tenantId: string, now: Date): string {
  return `bundles/${tenantId}/${now.toISOString().slice(0, 10)}/${randomBytes(16).toString('hex')}.tar.zst`;
}

export async function presignUpload(
  ctx: SupportContext,
  agent: AgentPrincipal,
  body: UploadUrlRequest,
): Promise<UploadUrlResponse> {
  if (body.size > ctx.maxBundleBytes)
    throw new ApiError(413, 'bundle_too_large', `bundles may be at most ${ctx.maxBundleBytes} bytes`);
  const now = ctx.now();
  const expires = Math.floor(now.getTime() / 1000) + PRESIGN_TTL_SECONDS;
  const objectKey = newObjectKey(agent.tenantId, now);
  const quota = ctx.tenantQuotaBytes;
  const reservation = await ctx.uploads.reserve(
    agent.tenantId,
    {
      object_key: objectKey,
      agent_id: agent.agentId,
      filename: body.filename,
      size: body.size,
      sha256: body.sha256,
      expires_at: new Date(expires * 1000).toISOString(),
      created_at: now.toISOString(),
    },
    { quotaBytes: quota, now },
  );
  if (!reservation.reserved)
    throw new ApiError(
      403,
      'quota_exceeded',
      `the tenant's bundles and uploads in progress hold ${reservation.heldBytes} of its ${quota} bytes; a bundle of ${body.size} bytes does not fit (ask the operator to raise --tenant-quota-bytes)`,
    );
  const { url, headers } = await ctx.store.presignPut(
    { objectKey, tenantId: agent.tenantId, size: body.size, sha256: body.sha256, expires },
    now,
  );
  return { url, object_key: objectKey, expires_at: new Date(expires * 1000).toISOString(), headers };
}
