// Bundle intake from agents (agent key): presign the upload, then register it.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { RegisterRequest, RegisterResponse, UploadUrlRequest, UploadUrlResponse } from '@guard/contract';
import { requireAgent } from '../../auth/index.ts';
import { ErrorResponses } from '../../kernel/route-schemas.ts';
import type { SupportContext } from '../context.ts';
import { presignUpload } from './presign.ts';
import { registerBundle } from './register.ts';

export const intakeRoutes: FastifyPluginAsyncTypebox<SupportContext> = async (app, ctx) => {
  app.post(
    '/v1/support/bundle/upload-url',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Presign the upload of a bundle (agent key)',
        body: UploadUrlRequest,
        response: { 200: UploadUrlResponse, ...ErrorResponses },
      },
    },
    async (req) => presignUpload(ctx, requireAgent(req), req.body),
  );

  app.post(
    '/v1/support/bundle/register',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Register an uploaded bundle (agent key, idempotent)',
        body: RegisterRequest,
        response: { 200: RegisterResponse, 201: RegisterResponse, ...ErrorResponses },
      },
    },
    async (req, reply) => {
      const { created, record } = await registerBundle(ctx, requireAgent(req), req.body, req.log);
      return reply.code(created ? 201 : 200).send(record);
    },
  );
};
