// Endpoint routes (DESIGN §5 contract — endpoint API; the console uses it too). Admins write;
// admins and members read. The secret is returned once, at creation.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireTenantUser } from '../../auth/index.ts';
import { ErrorResponses, IdParams } from '../../kernel/route-schemas.ts';
import type { WebhookContext } from '../context.ts';
import { createEndpoint, deleteEndpoint, listEndpoints, showEndpoint, updateEndpoint } from './crud.ts';
import { completeRotation, proveRotation, rotateSecret } from './rotation.ts';
import {
  CreatedEndpoint,
  CreateEndpoint,
  EndpointList,
  EndpointView,
  RotatedSecret,
  RotateSecret,
  TestEventSent,
  UpdateEndpoint,
} from './schemas.ts';
import { sendTestEvent } from './test-event.ts';

export const endpointRoutes: FastifyPluginAsyncTypebox<WebhookContext> = async (app, ctx) => {
  app.post(
    '/v1/webhooks/endpoints',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Create an endpoint (admin); the response carries its secret, once',
        body: CreateEndpoint,
        response: { 201: CreatedEndpoint, ...ErrorResponses },
      },
    },
    async (req, reply) => reply.code(201).send(await createEndpoint(ctx, requireTenantUser(req, ['admin']), req.body)),
  );

  app.get(
    '/v1/webhooks/endpoints',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: "List the tenant's endpoints (never their secrets)",
        response: { 200: EndpointList, ...ErrorResponses },
      },
    },
    async (req) => listEndpoints(ctx, requireTenantUser(req, ['admin', 'member'])),
  );

  app.get(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Show an endpoint (never its secret)',
        params: IdParams,
        response: { 200: EndpointView, ...ErrorResponses },
      },
    },
    async (req) => showEndpoint(ctx, requireTenantUser(req, ['admin', 'member']), req.params.id),
  );

  app.patch(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Edit an endpoint: name, url, headers, enabled (admin)',
        params: IdParams,
        body: UpdateEndpoint,
        response: { 200: EndpointView, ...ErrorResponses },
      },
    },
    async (req) => updateEndpoint(ctx, requireTenantUser(req, ['admin']), req.params.id, req.body),
  );

  app.delete(
    '/v1/webhooks/endpoints/:id',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Delete an endpoint and its delivery history (admin)',
        params: IdParams,
        response: { 204: Type.Null(), ...ErrorResponses },
      },
    },
    async (req, reply) => {
      await deleteEndpoint(ctx, requireTenantUser(req, ['admin']), req.params.id);
      return reply.code(204).send(null);
    },
  );

  app.post(
    '/v1/webhooks/endpoints/:id/test',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary: 'Send a signal_created test event to this endpoint (admin)',
        params: IdParams,
        response: { 202: TestEventSent, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply.code(202).send(await sendTestEvent(ctx, requireTenantUser(req, ['admin']), req.params.id)),
  );

  app.post(
    '/v1/webhooks/endpoints/:id/rotate-secret',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'Rotate the secret (admin; audited): the response carries the new secret, once. For grace_seconds ' +
          '(default 86400, at most 604800) deliveries are signed with the new and the old secret, newest first',
        params: IdParams,
        body: RotateSecret,
        response: { 200: RotatedSecret, ...ErrorResponses },
      },
      // No body at all takes the defaults, as `{}` does.
      preValidation: async (req) => {
        req.body ??= {};
      },
    },
    async (req) => rotateSecret(ctx, requireTenantUser(req, ['admin']), req.params.id, req.body),
  );

  app.post(
    '/v1/webhooks/endpoints/:id/rotate-secret/verify',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'Prove the new secret (admin; audited): send a test event signed with the new secret alone; ' +
          '409 no_rotation outside a grace period',
        params: IdParams,
        response: { 202: TestEventSent, ...ErrorResponses },
      },
    },
    async (req, reply) =>
      reply.code(202).send(await proveRotation(ctx, requireTenantUser(req, ['admin']), req.params.id)),
  );

  app.post(
    '/v1/webhooks/endpoints/:id/rotate-secret/complete',
    {
      config: { scope: 'webhooks' },
      schema: {
        tags: ['webhooks'],
        summary:
          'End the grace period now and erase the old secret (admin; audited); 409 rotation_not_proven until ' +
          'the receiver answered the proof test event with a 2xx',
        params: IdParams,
        response: { 200: EndpointView, ...ErrorResponses },
      },
    },
    async (req) => completeRotation(ctx, requireTenantUser(req, ['admin']), req.params.id),
  );
};
