// Webhook endpoints API (DESIGN §5 contract — endpoint API; the console uses it too).
// Admins write; admins and members read. The secret is returned once, at creation.

import { ApiErrorBody } from '@guard/contract';
import type { FastifyInstance } from 'fastify';
import { type Static, Type } from 'typebox';
import { requireUser } from '../auth/principal.ts';
import { newId } from '../auth/secrets.ts';
import type { WebhookDeliveryTable, WebhookEndpointTable } from '../db/tables.ts';
import type { AppDeps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { timeOrderedId } from '../ids.ts';
import { BeforeParam, beforeFilter, cursorOf, parseBefore } from '../pagination.ts';
import { MASKED_HEADER_VALUE, maskHeaders, openHeaders, sealHeaders } from './endpoint-headers.ts';
import {
  HEADERS_MAX_COUNT,
  NAME_MAX_LENGTH,
  URL_MAX_LENGTH,
  validateEndpointAddress,
  validateEndpointUrl,
  validateHeaders,
} from './endpoint-rules.ts';
import { newWebhookSecret } from './envelope.ts';
import { seal } from './secret-box.ts';

const Headers = Type.Record(Type.String({ maxLength: 100 }), Type.String({ maxLength: 4096 }), {
  maxProperties: HEADERS_MAX_COUNT,
  description: 'custom headers sent with every delivery',
});
const CreateEndpoint = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH }),
    url: Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH }),
    headers: Type.Optional(Headers),
  },
  { additionalProperties: false },
);
const UpdateEndpoint = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: NAME_MAX_LENGTH })),
    url: Type.Optional(Type.String({ minLength: 1, maxLength: URL_MAX_LENGTH })),
    headers: Type.Optional(Headers),
    enabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);
const EndpointView = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  headers: Type.Record(Type.String(), Type.String(), {
    description: `custom headers; members read every value as "${MASKED_HEADER_VALUE}", admins the real value`,
  }),
  enabled: Type.Boolean(),
  disabled_reason: Type.Union([Type.String(), Type.Null()]),
  failing_since: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  updated_at: Type.String(),
});
const CreatedEndpoint = Type.Object({
  ...EndpointView.properties,
  secret: Type.String({ description: 'whsec_…: shown once, never again' }),
});
const AttemptView = Type.Object({
  attempt: Type.Integer(),
  started_at: Type.String(),
  duration_ms: Type.Integer(),
  status: Type.Union([Type.Integer(), Type.Null()]),
  error: Type.Union([Type.String(), Type.Null()]),
  response_excerpt: Type.Union([Type.String(), Type.Null()]),
});
const DeliveryView = Type.Object({
  id: Type.String({ description: 'the Guard-Delivery header of every attempt' }),
  endpoint_id: Type.String(),
  signal_id: Type.String(),
  state: Type.String({ description: 'pending, delivering, succeeded or failed' }),
  attempts: Type.Integer(),
  next_attempt_at: Type.Union([Type.String(), Type.Null()]),
  last_status: Type.Union([Type.Integer(), Type.Null()]),
  last_error: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
  completed_at: Type.Union([Type.String(), Type.Null()]),
});
const DeliveryDetail = Type.Object({ ...DeliveryView.properties, attempt_log: Type.Array(AttemptView) });
const IdParams = Type.Object({ id: Type.String({ maxLength: 64 }) });
const errors = { '4xx': ApiErrorBody };

/** `headers` are the real values for an admin, masked for anyone else. */
function endpointView(e: WebhookEndpointTable, headers: Record<string, string>, role: string) {
  return {
    id: e.id,
    name: e.name,
    url: e.url,
    headers: role === 'admin' ? headers : maskHeaders(headers),
    enabled: e.enabled === 1,
    disabled_reason: e.disabled_reason,
    failing_since: e.failing_since,
    created_at: e.created_at,
    updated_at: e.updated_at,
  };
}

function deliveryView(d: WebhookDeliveryTable) {
  return {
    id: d.id,
    endpoint_id: d.endpoint_id,
    signal_id: d.signal_id,
    state: d.state,
    attempts: d.attempts,
    next_attempt_at: d.state === 'pending' ? d.next_attempt_at : null,
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: d.created_at,
    completed_at: d.completed_at,
  };
}

function checkEndpointInput(
  body: { url?: string; headers?: Record<string, string> },
  options: { allowPrivate: boolean },
): void {
  if (body.url !== undefined) {
    const problem = validateEndpointUrl(body.url);
    if (problem) throw badRequest(problem, 'invalid_url');
    const blocked = validateEndpointAddress(body.url, options.allowPrivate);
    if (blocked) throw badRequest(blocked, 'blocked_address');
  }
  if (body.headers !== undefined) {
    const problem = validateHeaders(body.headers);
    if (problem) throw badRequest(problem, 'invalid_headers');
  }
}

export async function webhookRoutes(
  app: FastifyInstance,
  deps: AppDeps & { wakeDeliveries: () => void },
): Promise<void> {
  const { db } = deps;
  const secretKey = deps.masterKey.derive('webhook-secrets');
  const tenantOf = (user: { tenantId: string | null }) => user.tenantId as string;
  const view = (e: WebhookEndpointTable, role: string) =>
    endpointView(e, openHeaders(secretKey, e.id, e.headers), role);
  const findEndpoint = async (tenantId: string, id: string) => {
    const row = await db
      .selectFrom('webhook_endpoints')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw notFound('webhook endpoint');
    return row;
  };

  app.post(
    '/v1/webhooks/endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Create an endpoint (admin); the response carries its secret, once',
        body: CreateEndpoint,
        response: { 201: CreatedEndpoint, ...errors },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const body = req.body as Static<typeof CreateEndpoint>;
      checkEndpointInput(body, { allowPrivate: deps.config.webhookAllowPrivate });
      const id = newId('we');
      const secret = newWebhookSecret();
      const now = deps.now().toISOString();
      const row: WebhookEndpointTable = {
        id,
        tenant_id: tenantOf(user),
        name: body.name,
        url: body.url,
        headers: sealHeaders(secretKey, id, body.headers ?? {}),
        secret_sealed: seal(secretKey, secret, id),
        enabled: 1,
        disabled_reason: null,
        failing_since: null,
        created_at: now,
        updated_at: now,
      };
      await db.insertInto('webhook_endpoints').values(row).execute();
      return reply.code(201).send({ ...endpointView(row, body.headers ?? {}, user.role), secret });
    },
  );

  app.get(
    '/v1/webhooks/endpoints',
    {
      schema: {
        tags: ['webhooks'],
        summary: "List the tenant's endpoints (never their secrets)",
        response: { 200: Type.Object({ endpoints: Type.Array(EndpointView) }), ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      const rows = await db
        .selectFrom('webhook_endpoints')
        .selectAll()
        .where('tenant_id', '=', tenantOf(user))
        .orderBy('created_at')
        .execute();
      return { endpoints: rows.map((e) => view(e, user.role)) };
    },
  );

  app.get(
    '/v1/webhooks/endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Show an endpoint (never its secret)',
        params: IdParams,
        response: { 200: EndpointView, ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      return view(await findEndpoint(tenantOf(user), (req.params as { id: string }).id), user.role);
    },
  );

  app.patch(
    '/v1/webhooks/endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Edit an endpoint: name, url, headers, enabled (admin)',
        params: IdParams,
        body: UpdateEndpoint,
        response: { 200: EndpointView, ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin']);
      const body = req.body as Static<typeof UpdateEndpoint>;
      checkEndpointInput(body, { allowPrivate: deps.config.webhookAllowPrivate });
      const existing = await findEndpoint(tenantOf(user), (req.params as { id: string }).id);
      const changes: Partial<WebhookEndpointTable> = { updated_at: deps.now().toISOString() };
      if (body.name !== undefined) changes.name = body.name;
      if (body.url !== undefined) changes.url = body.url;
      if (body.headers !== undefined) changes.headers = sealHeaders(secretKey, existing.id, body.headers);
      if (body.enabled !== undefined) {
        changes.enabled = body.enabled ? 1 : 0;
        // Re-enabling starts a fresh health record; disabling by hand says so.
        changes.disabled_reason = body.enabled ? null : 'disabled by an administrator';
        changes.failing_since = null;
      }
      const disabling = body.enabled === false && existing.enabled === 1;
      await db.transaction().execute(async (trx) => {
        await trx
          .updateTable('webhook_endpoints')
          .set(changes)
          .where('id', '=', existing.id)
          .where('tenant_id', '=', existing.tenant_id)
          .execute();
        // Disabling stops delivery at once, as the automatic disabling does: the deliveries
        // waiting for their next attempt are failed now (an admin may redeliver them once the
        // endpoint is enabled again); an attempt in flight finishes and is recorded, without a retry.
        if (disabling)
          await trx
            .updateTable('webhook_deliveries')
            .set({
              state: 'failed',
              last_error: 'the endpoint was disabled',
              completed_at: changes.updated_at,
              lease_until: null,
            })
            .where('endpoint_id', '=', existing.id)
            .where('state', '=', 'pending')
            .execute();
      });
      return view({ ...existing, ...changes }, user.role);
    },
  );

  app.delete(
    '/v1/webhooks/endpoints/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Delete an endpoint and its delivery history (admin)',
        params: IdParams,
        response: { 204: Type.Null(), ...errors },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const existing = await findEndpoint(tenantOf(user), (req.params as { id: string }).id);
      await db.transaction().execute(async (trx) => {
        const deliveryIds = trx.selectFrom('webhook_deliveries').select('id').where('endpoint_id', '=', existing.id);
        await trx.deleteFrom('webhook_attempts').where('delivery_id', 'in', deliveryIds).execute();
        await trx.deleteFrom('webhook_deliveries').where('endpoint_id', '=', existing.id).execute();
        await trx.deleteFrom('webhook_endpoints').where('id', '=', existing.id).execute();
      });
      return reply.code(204).send();
    },
  );

  app.get(
    '/v1/webhooks/endpoints/:id/deliveries',
    {
      schema: {
        tags: ['webhooks'],
        summary: "An endpoint's deliveries, newest first",
        params: IdParams,
        querystring: Type.Object({
          state: Type.Optional(
            Type.Union([
              Type.Literal('pending'),
              Type.Literal('delivering'),
              Type.Literal('succeeded'),
              Type.Literal('failed'),
            ]),
          ),
          limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 50 })),
          before: Type.Optional(BeforeParam),
        }),
        response: {
          200: Type.Object({
            deliveries: Type.Array(DeliveryView),
            next_before: Type.Union([Type.String(), Type.Null()]),
          }),
          ...errors,
        },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      const endpoint = await findEndpoint(tenantOf(user), (req.params as { id: string }).id);
      const q = req.query as { state?: WebhookDeliveryTable['state']; limit?: number; before?: string };
      const limit = q.limit ?? 50;
      let query = db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('endpoint_id', '=', endpoint.id)
        .where('tenant_id', '=', endpoint.tenant_id)
        .orderBy('created_at', 'desc')
        .orderBy('id', 'desc')
        .limit(limit);
      if (q.state) query = query.where('state', '=', q.state);
      const before = parseBefore(q.before);
      if (before) query = query.where(beforeFilter('created_at', 'id', before));
      const rows = await query.execute();
      const last = rows.at(-1);
      return {
        deliveries: rows.map(deliveryView),
        next_before: rows.length === limit && last ? cursorOf(last.created_at, last.id) : null,
      };
    },
  );

  const findDelivery = async (tenantId: string, id: string) => {
    const row = await db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('id', '=', id)
      .where('tenant_id', '=', tenantId)
      .executeTakeFirst();
    if (!row) throw notFound('delivery');
    return row;
  };

  app.get(
    '/v1/webhooks/deliveries/:id',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'A delivery with every attempt: status, duration, response excerpt, error',
        params: IdParams,
        response: { 200: DeliveryDetail, ...errors },
      },
    },
    async (req) => {
      const user = requireUser(req, ['admin', 'member']);
      const d = await findDelivery(tenantOf(user), (req.params as { id: string }).id);
      const attempts = await db
        .selectFrom('webhook_attempts')
        .select(['attempt', 'started_at', 'duration_ms', 'status', 'error', 'response_excerpt'])
        .where('delivery_id', '=', d.id)
        .orderBy('started_at')
        .execute();
      return { ...deliveryView(d), attempt_log: attempts };
    },
  );

  app.post(
    '/v1/webhooks/deliveries/:id/redeliver',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a delivery again now, with the same Guard-Delivery (admin)',
        params: IdParams,
        response: { 202: DeliveryView, ...errors },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const d = await findDelivery(tenantOf(user), (req.params as { id: string }).id);
      if (d.state === 'delivering')
        throw badRequest('this delivery is being attempted right now', 'delivery_in_flight');
      const endpoint = await findEndpoint(tenantOf(user), d.endpoint_id);
      if (endpoint.enabled !== 1) throw badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');
      const now = deps.now().toISOString();
      const changes = { state: 'pending' as const, next_attempt_at: now, completed_at: null, lease_until: null };
      await db
        .updateTable('webhook_deliveries')
        .set(changes)
        .where('id', '=', d.id)
        .where('state', '!=', 'delivering')
        .execute();
      deps.wakeDeliveries();
      return reply.code(202).send(deliveryView({ ...d, ...changes }));
    },
  );

  app.post(
    '/v1/webhooks/endpoints/:id/test',
    {
      schema: {
        tags: ['webhooks'],
        summary: 'Send a signal_created test event to this endpoint (admin)',
        params: IdParams,
        response: { 202: Type.Object({ signal_id: Type.String(), delivery_id: Type.String() }), ...errors },
      },
    },
    async (req, reply) => {
      const user = requireUser(req, ['admin']);
      const endpoint = await findEndpoint(tenantOf(user), (req.params as { id: string }).id);
      if (endpoint.enabled !== 1) throw badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');
      const now = deps.now().toISOString();
      const signalId = timeOrderedId('sig');
      const [deliveryId] = await deps.outbox.write(
        {
          id: signalId,
          tenant_id: endpoint.tenant_id,
          agent_id: null,
          server_id: 'test',
          server_name: 'guard-test-event',
          signal_type: 'test_event',
          severity: 1,
          description: `Test event for endpoint "${endpoint.name}", sent by ${user.email}`,
          identity_id: user.userId,
          identity_name: user.email,
          environment: 'test',
          created_at: now,
          received_at: now,
          is_test: 1,
        },
        endpoint.id,
      );
      if (!deliveryId) throw badRequest('the endpoint is disabled: enable it first', 'endpoint_disabled');
      deps.wakeDeliveries();
      return reply.code(202).send({ signal_id: signalId, delivery_id: deliveryId });
    },
  );
}
