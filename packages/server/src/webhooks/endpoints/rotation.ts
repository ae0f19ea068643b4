// Secret rotation with overlap (secret-rotation.ts has the policy; DESIGN §5 contract —
// rotation):
//   POST …/{id}/rotate-secret {grace_seconds}   a new secret, returned once; the old one stays
//                                               valid for the grace period (0 … 7 days)
//   POST …/{id}/rotate-secret/verify            a test event signed with the new secret alone
//   POST …/{id}/rotate-secret/complete          end the grace period now; 409 until the
//                                               receiver answered that test event with a 2xx
// Each is admin-only and audited.

import type { TenantUser } from '../../auth/index.ts';
import { conflict, notFound } from '../../kernel/errors.ts';
import { timeOrderedId } from '../../kernel/ids.ts';
import { seal } from '../../kernel/secret-box.ts';
import type { WebhookContext } from '../context.ts';
import { newWebhookSecret } from '../envelope.ts';
import { activeRotation, GRACE_SECONDS_DEFAULT, graceEnd } from '../secret-rotation.ts';
import { findEndpoint, rotationView, view } from './endpoint-view.ts';
import type { RotateSecret } from './schemas.ts';
import { endpointDisabled, writeTestEvent } from './test-event.ts';

const noRotation = () =>
  conflict('no secret rotation of this endpoint is in its grace period: rotate the secret first', 'no_rotation');

export async function rotateSecret(ctx: WebhookContext, user: TenantUser, id: string, body: RotateSecret) {
  const endpoint = await findEndpoint(ctx, user.tenantId, id);
  const at = ctx.now();
  const secret = newWebhookSecret();
  const graceEndsAt = graceEnd(at, body.grace_seconds ?? GRACE_SECONDS_DEFAULT);
  const rotated = await ctx.endpoints.rotate(
    user.tenantId,
    endpoint.id,
    seal(ctx.secretKey, secret, endpoint.id),
    graceEndsAt,
    {
      user,
      at,
    },
  );
  if (!rotated) {
    if (!(await ctx.endpoints.find(user.tenantId, id))) throw notFound('webhook endpoint');
    throw conflict(
      'a secret rotation of this endpoint is in its grace period: complete it (after the proof) or let it end first',
      'rotation_in_progress',
    );
  }
  return { ...(await view(ctx, await findEndpoint(ctx, user.tenantId, id), user)), secret };
}

/** The proof: a test event that the worker signs with the new secret alone. */
export async function proveRotation(ctx: WebhookContext, user: TenantUser, id: string) {
  const endpoint = await findEndpoint(ctx, user.tenantId, id);
  if (endpoint.enabled !== 1) throw endpointDisabled();
  if (!activeRotation(endpoint, ctx.now())) throw noRotation();
  const signalId = timeOrderedId('sig');
  // Recorded before the signal exists: whichever claim picks its delivery reads it.
  if (!(await ctx.endpoints.setRotationProof(user.tenantId, endpoint.id, signalId, { user, at: ctx.now() })))
    throw noRotation();
  return writeTestEvent(
    ctx,
    endpoint,
    signalId,
    `Proof of the new signing secret of endpoint "${endpoint.name}" (signed with the new secret only), sent by ${user.email}`,
    user,
  );
}

/** Ends the grace period early, once the receiver answered the proof with a 2xx. */
export async function completeRotation(ctx: WebhookContext, user: TenantUser, id: string) {
  const endpoint = await findEndpoint(ctx, user.tenantId, id);
  const rotation = await rotationView(ctx, endpoint);
  if (!rotation) throw noRotation();
  if (!rotation.proof || !rotation.can_complete)
    throw conflict(
      rotation.proof
        ? `the receiver has not answered the proof test event with a 2xx yet (its delivery is ${rotation.proof.status ?? 'not written'}): the old secret stays until it has`
        : 'prove the new secret first: send the test event signed with the new secret alone (rotate-secret/verify), and end the grace period once the receiver accepted it',
      'rotation_not_proven',
    );
  if (
    !(await ctx.endpoints.completeRotation(user.tenantId, endpoint.id, rotation.proof.signal_id, {
      user,
      at: ctx.now(),
    }))
  )
    throw noRotation();
  return view(ctx, await findEndpoint(ctx, user.tenantId, id), user);
}
