// Reads of bundles: support staff read every tenant's (or one, by filter); a tenant's admins
// and members read their own. Every read is audited before the data is returned.

import type { Readable } from 'node:stream';
import type { Static } from 'typebox';
import { audit } from '../../audit/index.ts';
import type { TenantUser, UserPrincipal } from '../../auth/index.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import { nextBefore, parseBefore } from '../../kernel/pagination.ts';
import type { BundleWithHost } from '../bundles-repository.ts';
import type { SupportContext } from '../context.ts';
import { bundleDeleted, deleteBundle } from '../deletion.ts';
import { type BundleListQuery, bundleSummary } from './schemas.ts';

/** The tenant a reader's query is scoped to; null (every tenant) only for support staff. */
function readerScope(user: UserPrincipal, tenantFilter?: string): string | null {
  return user.role === 'support' ? (tenantFilter ?? null) : user.tenantId;
}

export async function listBundles(ctx: SupportContext, user: UserPrincipal, query: Static<typeof BundleListQuery>) {
  const tenantId = readerScope(user, query.tenant_id);
  const limit = query.limit ?? 50;
  const instant = (t: string | undefined) => (t === undefined ? undefined : new Date(t).toISOString());
  const rows = await ctx.bundles.list(tenantId, {
    limit,
    before: parseBefore(query.before),
    agentId: query.agent_id,
    trigger: query.trigger,
    since: instant(query.since),
    until: instant(query.until),
  });
  await audit(ctx, user, 'bundle.list', tenantId ?? '*', tenantId);
  return {
    bundles: rows.map(bundleSummary),
    next_before: nextBefore(rows, limit, (b) => [b.uploaded_at, b.id]),
  };
}

/** The bundle if this user may read it (the one access rule of every bundle read), else 404. */
export async function findReadable(ctx: SupportContext, user: UserPrincipal, id: string): Promise<BundleWithHost> {
  const row = await ctx.bundles.find(readerScope(user), id);
  if (!row) throw notFound('bundle');
  return row;
}

export async function showBundle(ctx: SupportContext, user: UserPrincipal, id: string) {
  const row = await findReadable(ctx, user, id);
  await audit(ctx, user, 'bundle.show', row.id, row.tenant_id);
  if (row.deleted_at != null) return bundleSummary(row);
  return { ...bundleSummary(row), object_key: row.object_key, manifest: JSON.parse(row.manifest) };
}

/** A presigned download URL lives this long: enough to follow the redirect, not to share it. */
export const DOWNLOAD_URL_TTL_SECONDS = 60;
export const BUNDLE_CONTENT_TYPE = 'application/zstd';

/** The name a download is saved under: the agent's file name, made safe for a header. */
export function downloadFilename(bundle: { filename: string }): string {
  return bundle.filename.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * The bundle file: a short-lived URL of the store itself (S3: a presigned GET, answered with a
 * redirect), or else the file opened for guard-server to stream; 410 when the store no longer
 * has it. Audited either way, before anything is returned.
 */
export async function openBundleFile(
  ctx: SupportContext,
  user: UserPrincipal,
  id: string,
): Promise<{ bundle: BundleWithHost } & ({ redirect: string } | { size: number; body: Readable })> {
  const bundle = await findReadable(ctx, user, id);
  if (bundle.deleted_at != null) throw bundleDeleted();
  const redirect = await ctx.store.downloadUrl(bundle.object_key, {
    filename: downloadFilename(bundle),
    contentType: BUNDLE_CONTENT_TYPE,
    expiresInSeconds: DOWNLOAD_URL_TTL_SECONDS,
    now: ctx.now(),
  });
  if (redirect !== undefined) {
    await audit(ctx, user, 'bundle.download', bundle.id, bundle.tenant_id);
    return { bundle, redirect };
  }
  const object = await ctx.store.open(bundle.object_key);
  if (!object) throw new ApiError(410, 'object_gone', 'the bundle file is no longer in the object store');
  await audit(ctx, user, 'bundle.download', bundle.id, bundle.tenant_id);
  return { bundle, size: object.size, body: object.body };
}

/**
 * Deletes one bundle of the admin's tenant (audited `bundle.delete`): 404 for another
 * tenant's, 410 bundle_deleted when it was deleted already. Answers the record as it now is.
 */
export async function deleteOwnBundle(
  ctx: SupportContext,
  admin: TenantUser,
  id: string,
  onStoreError: (error: unknown) => void,
) {
  const bundle = await ctx.bundles.find(admin.tenantId, id);
  if (!bundle) throw notFound('bundle');
  if (bundle.deleted_at != null) throw bundleDeleted();
  const deleted = await deleteBundle(ctx, bundle, { actor: admin, reason: 'admin' }, onStoreError);
  if (!deleted) throw bundleDeleted(); // a concurrent deletion won
  const now = await ctx.bundles.find(admin.tenantId, id);
  if (!now) throw notFound('bundle');
  return bundleSummary(now);
}
