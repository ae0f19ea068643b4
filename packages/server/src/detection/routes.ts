// The tenant's detection policy (DESIGN §3 contract — detection; docs/guard-server.md):
//   GET /v1/detection/policy   admins and members: all seven detection signal types, each with
//                              enabled, the severity override (null: default), the default
//                              severity and what raises it; the version and the last change
//   PUT /v1/detection/policy   admins: {signal_types: {<type>: {enabled?, severity?}}}, only
//                              what is given changes; audited (detection.update, what changed)
// A change reaches the tenant's agents through their command channel: held command polls of the
// tenant's agents in this process answer at once with the new policy (`wakeAgents`); others get
// it at their next poll or heartbeat.

import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { DETECTION_SIGNAL_TYPE_NAMES, DetectionPolicyChange, DetectionPolicyView } from '@guard/contract/detection';
import { requireTenantUser } from '../auth/index.ts';
import { badRequest } from '../kernel/errors.ts';
import { ErrorResponses } from '../kernel/route-schemas.ts';
import type { DetectionPolicies } from './detection-policies.ts';
import { policyView, unknownTypes } from './policy.ts';

export interface DetectionRoutesDeps {
  detection: DetectionPolicies;
  now: () => Date;
  /** Answers the held command polls of the tenant's agents now (they carry the policy). */
  wakeAgents: (tenantId: string) => void;
}

export const detectionRoutes: FastifyPluginAsyncTypebox<DetectionRoutesDeps> = async (app, deps) => {
  app.get(
    '/v1/detection/policy',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['detection'],
        summary:
          "The tenant's detection policy: each of the seven detection signal types, on or off, and its severity " +
          '(admins and members)',
        response: { 200: DetectionPolicyView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin', 'member']);
      return policyView(await deps.detection.get(user.tenantId));
    },
  );

  app.put(
    '/v1/detection/policy',
    {
      config: { scope: 'settings' },
      schema: {
        tags: ['detection'],
        summary:
          'Change the detection policy (admin; audited): turn signal types on or off and override their severity ' +
          '(null: the default). Only the types and fields given change; the tenant’s agents get it within seconds',
        body: DetectionPolicyChange,
        response: { 200: DetectionPolicyView, ...ErrorResponses },
      },
    },
    async (req) => {
      const user = requireTenantUser(req, ['admin']);
      const change = req.body.signal_types;
      const unknown = unknownTypes(change);
      if (unknown.length > 0)
        throw badRequest(
          `unknown signal type ${unknown.map((t) => JSON.stringify(t.slice(0, 100))).join(', ')}: the detection policy ` +
            `covers ${DETECTION_SIGNAL_TYPE_NAMES.join(', ')}`,
          'unknown_signal_type',
        );
      const { policy, changed } = await deps.detection.update(user.tenantId, change, { actor: user, at: deps.now() });
      if (changed.length > 0) {
        req.log.info({ tenantId: user.tenantId, changed }, 'detection policy changed');
        deps.wakeAgents(user.tenantId);
      }
      return policyView(policy);
    },
  );
};
