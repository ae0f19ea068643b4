// Bundle reads (audited): support staff across tenants, a tenant's admins and members their own.
// Deletion: the tenant's admins, of their own tenant's bundles (audited; deletion.ts).
// The diff of two bundles is in diff.ts.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { requireTenantUser, requireUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { SupportContext } from '../context.ts';
import { BundleDiff, BundleDiffQuery, diffBundle } from './diff.ts';
import {
  BUNDLE_CONTENT_TYPE,
  deleteOwnBundle,
  downloadFilename,
  listBundles,
  openBundleFile,
  showBundle,
} from './reads.ts';
import { BundleDetail, BundleList, BundleListQuery, BundleSummary } from './schemas.ts';

const READERS = ['support', 'admin', 'member'] as const;

export const bundleRoutes: FastifyPluginAsyncTypebox<SupportContext> = async (app, ctx) => {
  app.get(
    '/v1/support/bundles',
    {
      config: { scope: 'bundles' },
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
      config: { scope: 'bundles' },
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
    '/v1/support/bundles/:id/diff',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          "Compare a bundle with another of its tenant (default: the same server's previous one): members, findings, system.json fields (audited)",
        params: IdParams,
        querystring: BundleDiffQuery,
        response: { 200: BundleDiff, ...ErrorResponses },
      },
    },
    async (req) => diffBundle(ctx, requireUser(req, READERS), req.params.id, req.query.against),
  );

  app.get(
    '/v1/support/bundles/:id/download',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary: 'Download a bundle file (audited); with an S3 store, a redirect to a presigned GET valid 60 s',
        params: IdParams,
      },
    },
    async (req, reply) => {
      const file = await openBundleFile(ctx, requireUser(req, READERS), req.params.id);
      reply.header('x-content-sha256', file.bundle.sha256).header('cache-control', 'no-store');
      if ('redirect' in file) return reply.redirect(file.redirect, 302);
      return reply
        .header('content-type', BUNDLE_CONTENT_TYPE)
        .header('content-length', file.size)
        .header('content-disposition', `attachment; filename="${downloadFilename(file.bundle)}"`)
        .send(file.body);
    },
  );

  app.delete(
    '/v1/support/bundles/:id',
    {
      config: { scope: 'bundles' },
      schema: {
        tags: ['support bundles'],
        summary:
          "Delete one of the tenant's bundles (admin; audited): its file leaves the object store and its findings go; the record stays, marked deleted. 410 bundle_deleted when it already was",
        params: IdParams,
        response: { 200: BundleSummary, ...ErrorResponses },
      },
    },
    async (req) =>
      deleteOwnBundle(ctx, requireTenantUser(req, ['admin']), req.params.id, (error) =>
        req.log.warn(
          { err: error, bundleId: req.params.id },
          'bundle deleted; its object stays until the next sweep removes it',
        ),
      ),
  );
};
