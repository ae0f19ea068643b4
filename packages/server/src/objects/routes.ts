// PUT <presigned URL>: the object-storage side of the upload, served by guard-server.
// Auth is the URL signature alone; an Authorization header of any scheme is refused (as S3
// refuses two auth mechanisms), so a client that leaks its API key here fails loudly in tests.
// Limits (upload-limits.ts): PUTs in flight are capped in total and per tenant (429 with
// Retry-After, which the agent honours), and a body that stops arriving is aborted.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ApiErrorBody } from '@guard/contract';
import { Type } from 'typebox';
import type { Db } from '../db/index.ts';
import { ApiError, isStorageFull } from '../kernel/errors.ts';
import { type HttpLimits, releaseBodyDeadline } from '../kernel/http-limits.ts';
import type { MasterKey } from '../kernel/master-key.ts';
import { checkGrant, OBJECTS_PATH } from './presign.ts';
import { ObjectMismatchError, type ObjectStore } from './store.ts';
import { idleGuarded, UPLOAD_RETRY_AFTER_SECONDS, UploadIdleError, UploadSlots } from './upload-limits.ts';
import { UploadsRepository } from './uploads-repository.ts';

/**
 * The wildcard is the object key and the query carries the grant (presign.ts): checkGrant
 * reads and verifies both, so they have no schema (which would also add them to the API docs).
 */
interface PresignedPut {
  Params: { '*': string };
  Querystring: Record<string, unknown>;
}

/** What the embedded store's upload route needs of the server. */
export interface ObjectRoutesDeps {
  db: Db;
  now: () => Date;
  store: ObjectStore;
  /** The presign key is derived from it. */
  masterKey: MasterKey;
  config: { limits: HttpLimits };
}

export const objectRoutes: FastifyPluginAsyncTypebox<ObjectRoutesDeps> = async (app, deps) => {
  const presignKey = deps.masterKey.derive('presign');
  const uploads = new UploadsRepository(deps.db);
  // The body is the object's raw bytes, streamed by the handler: no parser, no body limit here.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));
  const { limits } = deps.config;
  const slots = new UploadSlots({ max: limits.maxUploads, maxPerTenant: limits.maxUploadsPerTenant });

  // Before anything reads the header as a credential (the app's preHandler would answer 401
  // to a scheme other than Bearer): whatever it holds, it has no place on this request.
  app.addHook('onRequest', async (req) => {
    if (req.headers.authorization !== undefined)
      throw new ApiError(400, 'authorization_not_allowed', 'a presigned PUT must not carry an Authorization header');
  });

  app.put<PresignedPut>(
    `${OBJECTS_PATH}*`,
    {
      schema: {
        tags: ['objects'],
        summary: 'Upload an object through a presigned URL (no Authorization header)',
        response: { 200: Type.Object({ object_key: Type.String(), size: Type.Integer() }), '4xx': ApiErrorBody },
      },
    },
    async (req, reply) => {
      const objectKey = req.params['*'];
      const check = checkGrant(presignKey, objectKey, req.query, deps.now());
      if (!check.ok) throw new ApiError(check.code === 'malformed_url' ? 400 : 403, check.code, check.message);
      const { grant } = check;
      if (req.headers['transfer-encoding'] !== undefined || req.headers['content-length'] === undefined)
        throw new ApiError(
          411,
          'length_required',
          'send the body with an exact Content-Length (chunked uploads are refused)',
        );
      const length = Number(req.headers['content-length']);
      if (length !== grant.size)
        throw new ApiError(400, 'size_mismatch', `Content-Length is ${length}, the presigned size is ${grant.size}`);
      const upload = await uploads.find(grant.tenantId, objectKey);
      if (!upload) throw new ApiError(404, 'not_found', 'no upload was presigned for this object');
      if (upload.state === 'registered')
        throw new ApiError(409, 'already_registered', 'this object is already registered');
      if (!slots.acquire(grant.tenantId)) {
        reply.header('retry-after', String(UPLOAD_RETRY_AFTER_SECONDS));
        throw new ApiError(
          429,
          'too_many_uploads',
          `too many uploads in progress (${slots.inFlight(grant.tenantId)} of this tenant, ${slots.inFlight()} in all); retry in ${UPLOAD_RETRY_AFTER_SECONDS} s`,
        );
      }
      try {
        // From here the body is governed by the idle timeout, not the API's body deadline.
        releaseBodyDeadline(req.raw);
        await deps.store.put(objectKey, idleGuarded(req.raw, limits.uploadIdleTimeoutMs), {
          size: grant.size,
          sha256: grant.sha256,
        });
      } catch (error) {
        if (error instanceof ObjectMismatchError) throw new ApiError(400, error.reason, error.message);
        if (error instanceof UploadIdleError) {
          // The partial file is gone (put removed it); the connection, with the rest of the
          // body never read, closes after this answer.
          req.log.info({ objectKey, idleSeconds: error.idleMs / 1000 }, 'upload aborted: the body stopped arriving');
          reply.header('connection', 'close');
          throw new ApiError(408, 'upload_idle_timeout', `the upload was aborted: ${error.message}`);
        }
        if (isStorageFull(error)) {
          // The partial file is gone (put removed it); the rest of the body is never read, so
          // the connection closes after the 507 (error-responses.ts).
          reply.header('connection', 'close');
          throw error;
        }
        if (req.raw.destroyed || req.raw.readableAborted)
          throw new ApiError(400, 'incomplete_body', 'the connection closed before the whole body arrived');
        throw error;
      } finally {
        slots.release(grant.tenantId);
      }
      // The slot may have been collected while the body streamed (its URL expired mid-PUT):
      // then the object would belong to nothing, so it is removed and the PUT refused.
      if (!(await uploads.markStored(grant.tenantId, objectKey))) {
        await deps.store.delete(objectKey);
        throw new ApiError(
          410,
          'upload_expired',
          'the upload slot expired and was collected while the body was being sent',
        );
      }
      req.log.info({ objectKey, size: grant.size }, 'object stored');
      return reply.code(200).send({ object_key: objectKey, size: grant.size });
    },
  );
};
