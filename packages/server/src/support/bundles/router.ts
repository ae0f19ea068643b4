// Bundle reads (audited): support staff across tenants, a tenant's admins and members their own.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../route-schemas.ts';
import type { SupportContext } from '../context.ts';
import { listBundles, openBundleFile, showBundle } from './reads.ts';
import { BundleDetail, BundleList, BundleListQuery } from './schemas.ts';

const READERS = ['support', 'admin', 'member'] as const;

export const bundleRoutes: FastifyPluginAsyncTypebox<SupportContext> = async (app, ctx) => {
  app.get(
    '/v1/support/bundles',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'List bundles, newest first (audited)',
        querystring: BundleListQuery,
        response: { 200: BundleList, ...ErrorResponses },
      },
    },
    async (req) => listBundles(ctx, requireUser(req, READERS), req.query),
  );

  app.get(
    '/v1/support/bundles/:id',
    {
      schema: {
        tags: ['support bundles'],
        summary: 'Show a bundle and its manifest summary (audited)',
        params: IdParams,
        response: { 200: BundleDetail, ...ErrorResponses },
      },
    },
    async (req) => showBundle(ctx, requireUser(req, READERS), req.params.id),
  );

  app.get(
    '/v1/support/bundles/:id/download',
    { schema: { tags: ['support bundles'], summary: 'Download a bundle file (audited)', params: IdParams } },
    async (req, reply) => {
      const { bundle, size, body } = await openBundleFile(ctx, requireUser(req, READERS), req.params.id);
      const name = bundle.filename.replace(/[^A-Za-z0-9._-]/g, '_');
      return reply
        .header('content-type', 'application/zstd')
        .header('content-length', size)
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('x-content-sha256', bundle.sha256)
        .send(body);
    },
  );
};
