// Support bundle intake (DESIGN §4) and reads for support staff (DESIGN §6).
//   POST /v1/support/bundle/upload-url   agent key → presigned PUT URL (15 min)
//   POST /v1/support/bundle/register     agent key → bundle record (idempotent)
//   GET  /v1/support/bundles[/{id}[/download]]  support (all tenants) or the tenant's admins/members
// Every read is audited.

import { randomBytes } from 'node:crypto';
import {
  ApiErrorBody,
  type BundleManifest,
  PRESIGN_TTL_SECONDS,
  parseManifest,
  RegisterRequest,
  RegisterResponse,
  UploadUrlRequest,
  UploadUrlResponse,
} from '@guard/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { requireAgent, requireUser } from '../auth/principal.ts';
import { newId } from '../auth/secrets.ts';
import type { Db } from '../db/index.ts';
import type { BundleTable } from '../db/tables.ts';
import type { AppDeps } from '../deps.ts';
import { ApiError, badRequest, isUniqueViolation, notFound } from '../errors.ts';
import { presignedUrl } from '../objects/presign.ts';
import { BeforeParam, beforeFilter, cursorOf, parseBefore } from '../pagination.ts';
import { audit } from './audit.ts';

const BundleSummary = Type.Object({
  bundle_id: Type.String(),
  tenant_id: Type.String(),
  agent_id: Type.String(),
  hostname: Type.String(),
  filename: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  uploaded_at: Type.String(),
  agent_version: Type.String(),
  trigger: Type.String(),
});
const BundleDetail = Type.Object({
  ...BundleSummary.properties,
  object_key: Type.String(),
  manifest: Type.Object({
    bundle_version: Type.Integer(),
    agent_version: Type.String(),
    generated_at: Type.String(),
    trigger: Type.String(),
    contents: Type.Array(Type.Object({ name: Type.String(), size: Type.Integer(), sha256: Type.String() })),
    trimmed_segments: Type.Array(Type.String()),
    redaction: Type.Object({
      pattern: Type.String(),
      values_masked: Type.Integer(),
      members: Type.Record(Type.String(), Type.Integer()),
      extra_keys: Type.Optional(Type.Array(Type.String())),
    }),
    collection_errors: Type.Array(Type.Object({ source: Type.String(), message: Type.String() })),
  }),
});
const ListQuery = Type.Object({
  tenant_id: Type.Optional(Type.String({ maxLength: 64 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const errors = { '4xx': ApiErrorBody };

/** Object keys are ours: bundles/<tenant>/<date>/<random>.tar.zst; the filename is kept apart. */
function newObjectKey(tenantId: string, now: Date): string {
  return `bundles/${tenantId}/${now.toISOString().slice(0, 10)}/${randomBytes(16).toString('hex')}.tar.zst`;
}

/**
 * Bytes a tenant holds against its quota: registered bundles, objects stored but not yet
 * registered (until collected), and presigned slots whose URL is still valid (reservations:
 * parallel presigns cannot overshoot the quota together).
 */
async function bytesHeld(db: Db, tenantId: string, now: Date): Promise<number> {
  const { rows } = await sql<{ held: number | null }>`
    select
      coalesce((select sum(size) from bundles where tenant_id = ${tenantId}), 0)
      + coalesce((select sum(size) from uploads where tenant_id = ${tenantId}
          and (state = 'stored' or (state = 'presigned' and expires_at > ${now.toISOString()}))), 0) as held`.execute(
    db,
  );
  return Number(rows[0]?.held ?? 0);
}

function summary(row: BundleTable & { hostname: string }) {
  const manifest = JSON.parse(row.manifest) as BundleManifest;
  return {
    bundle_id: row.id,
    tenant_id: row.tenant_id,
    agent_id: row.agent_id,
    hostname: row.hostname,
    filename: row.filename,
    size: row.size,
    sha256: row.sha256,
    uploaded_at: row.uploaded_at,
    agent_version: manifest.agent_version,
    trigger: manifest.trigger,
  };
}

export async function supportRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  const { db } = deps;
  const presignKey = deps.masterKey.derive('presign');

  app.post(
    '/v1/support/bundle/upload-url',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Presign the upload of a bundle (agent key)',
        body: UploadUrlRequest,
        response: { 200: UploadUrlResponse, ...errors },
      },
    },
    async (req) => {
      const agent = requireAgent(req);
      const body = req.body as UploadUrlRequest;
      if (body.size > deps.config.maxBundleBytes)
        throw new ApiError(413, 'bundle_too_large', `bundles may be at most ${deps.config.maxBundleBytes} bytes`);
      const now = deps.now();
      const expires = Math.floor(now.getTime() / 1000) + PRESIGN_TTL_SECONDS;
      const objectKey = newObjectKey(agent.tenantId, now);
      const quota = deps.config.limits.tenantQuotaBytes;
      // The quota check and the reservation are one transaction: on the embedded database it
      // holds the only connection, so concurrent presigns are counted one after the other.
      await db.transaction().execute(async (trx) => {
        if (quota > 0) {
          const held = await bytesHeld(trx, agent.tenantId, now);
          if (held + body.size > quota)
            throw new ApiError(
              403,
              'quota_exceeded',
              `the tenant's bundles and uploads in progress hold ${held} of its ${quota} bytes; a bundle of ${body.size} bytes does not fit (ask the operator to raise --tenant-quota-bytes)`,
            );
        }
        await trx
          .insertInto('uploads')
          .values({
            object_key: objectKey,
            tenant_id: agent.tenantId,
            agent_id: agent.agentId,
            filename: body.filename,
            size: body.size,
            sha256: body.sha256,
            expires_at: new Date(expires * 1000).toISOString(),
            state: 'presigned',
            created_at: now.toISOString(),
          })
          .execute();
      });
      const url = presignedUrl(deps.publicUrl(), presignKey, {
        method: 'PUT',
        objectKey,
        tenantId: agent.tenantId,
        size: body.size,
        sha256: body.sha256,
        expires,
      });
      return {
        url,
        object_key: objectKey,
        expires_at: new Date(expires * 1000).toISOString(),
        headers: { 'content-type': 'application/octet-stream' },
      };
    },
  );

  app.post(
    '/v1/support/bundle/register',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Register an uploaded bundle (agent key, idempotent)',
        body: RegisterRequest,
        response: { 200: RegisterResponse, 201: RegisterResponse, ...errors },
      },
    },
    async (req, reply) => {
      const agent = requireAgent(req);
      const body = req.body as RegisterRequest;
      // Only an object presigned for the caller's tenant exists for it: others' are "not found".
      const upload = await db
        .selectFrom('uploads')
        .selectAll()
        .where('object_key', '=', body.object_key)
        .where('tenant_id', '=', agent.tenantId)
        .executeTakeFirst();
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
      const existing = await db
        .selectFrom('bundles')
        .selectAll()
        .where('object_key', '=', body.object_key)
        .where('tenant_id', '=', agent.tenantId)
        .executeTakeFirst();
      const stored = await deps.store.verify(body.object_key);
      if (!stored)
        throw new ApiError(409, 'object_missing', 'the object has not been uploaded (or its upload expired)');
      if (stored.size !== body.size || stored.sha256 !== body.sha256)
        throw new ApiError(409, 'checksum_mismatch', 'the stored object does not match the size and sha256 given');
      if (existing)
        return reply
          .code(200)
          .send({ bundle_id: existing.id, object_key: existing.object_key, uploaded_at: existing.uploaded_at });
      const row: BundleTable = {
        id: newId('bdl'),
        tenant_id: agent.tenantId,
        agent_id: agent.agentId,
        object_key: body.object_key,
        filename: upload.filename,
        size: body.size,
        sha256: body.sha256,
        manifest: JSON.stringify(manifest),
        uploaded_at: deps.now().toISOString(),
      };
      try {
        await db.transaction().execute(async (trx) => {
          await trx.insertInto('bundles').values(row).execute();
          await trx
            .updateTable('uploads')
            .set({ state: 'registered' })
            .where('object_key', '=', body.object_key)
            .execute();
        });
      } catch (error) {
        if (!isUniqueViolation(error)) throw error;
        // A concurrent register won: answer with its record.
        const first = await db
          .selectFrom('bundles')
          .selectAll()
          .where('object_key', '=', body.object_key)
          .executeTakeFirstOrThrow();
        return reply
          .code(200)
          .send({ bundle_id: first.id, object_key: first.object_key, uploaded_at: first.uploaded_at });
      }
      req.log.info({ bundleId: row.id, tenantId: row.tenant_id, size: row.size }, 'bundle registered');
      return reply.code(201).send({ bundle_id: row.id, object_key: row.object_key, uploaded_at: row.uploaded_at });
    },
  );

  /** Support staff read every tenant; a tenant's admins and members read their own. */
  const readable = (req: Parameters<typeof requireUser>[0], tenantFilter?: string) => {
    const user = requireUser(req, ['support', 'admin', 'member']);
    const tenantId = user.role === 'support' ? (tenantFilter ?? null) : user.tenantId;
    return { user, tenantId };
  };
  const bundleQuery = () =>
    db
      .selectFrom('bundles')
      .innerJoin('agents', 'agents.id', 'bundles.agent_id')
      .selectAll('bundles')
      .select('agents.hostname');

  app.get(
    '/v1/support/bundles',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'List bundles, newest first (audited)',
        querystring: ListQuery,
        response: {
          200: Type.Object({
            bundles: Type.Array(BundleSummary),
            next_before: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errors,
        },
      },
    },
    async (req) => {
      const q = req.query as { tenant_id?: string; limit?: number; before?: string };
      const { user, tenantId } = readable(req, q.tenant_id);
      const limit = q.limit ?? 50;
      let query = bundleQuery().orderBy('bundles.uploaded_at', 'desc').orderBy('bundles.id', 'desc').limit(limit);
      if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
      const before = parseBefore(q.before);
      if (before) query = query.where(beforeFilter('bundles.uploaded_at', 'bundles.id', before));
      const rows = await query.execute();
      await audit(deps, user, 'bundle.list', tenantId ?? '*', tenantId);
      const last = rows.at(-1);
      return {
        bundles: rows.map(summary),
        next_before: rows.length === limit && last ? cursorOf(last.uploaded_at, last.id) : null,
      };
    },
  );

  const findBundle = async (req: Parameters<typeof requireUser>[0]) => {
    const { user, tenantId } = readable(req);
    const { id } = req.params as { id: string };
    let query = bundleQuery().where('bundles.id', '=', id);
    if (tenantId !== null) query = query.where('bundles.tenant_id', '=', tenantId);
    const row = await query.executeTakeFirst();
    if (!row) throw notFound('bundle');
    return { user, row };
  };

  app.get(
    '/v1/support/bundles/:id',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Show a bundle and its manifest summary (audited)',
        params: IdParams,
        response: { 200: BundleDetail, ...errors },
      },
    },
    async (req) => {
      const { user, row } = await findBundle(req);
      await audit(deps, user, 'bundle.show', row.id, row.tenant_id);
      return { ...summary(row), object_key: row.object_key, manifest: JSON.parse(row.manifest) };
    },
  );

  app.get(
    '/v1/support/bundles/:id/download',
    { schema: { tags: ['support bundles'], summary: 'Download a bundle file (audited)', params: IdParams } },
    async (req, reply) => {
      const { user, row } = await findBundle(req);
      const object = await deps.store.open(row.object_key);
      if (!object) throw new ApiError(410, 'object_gone', 'the bundle file is no longer in the object store');
      await audit(deps, user, 'bundle.download', row.id, row.tenant_id);
      const name = row.filename.replace(/[^A-Za-z0-9._-]/g, '_');
      return reply
        .header('content-type', 'application/zstd')
        .header('content-length', object.size)
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('x-content-sha256', row.sha256)
        .send(object.body);
    },
  );
}
