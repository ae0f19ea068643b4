// Secret rotation with overlap (issue 14, item 1; DESIGN §5 contract — rotation). Rotating
// makes a new secret current and keeps the one it replaces, sealed like it, for a grace
// period: until then every delivery is signed with both, newest first, so receivers that
// hold either verify it. When the grace period ends the old secret is erased (maintenance,
// and at once by an admin who completes the rotation early) and is never used again, erased
// or not: the decision below goes by the time.
//
// "Prove the new secret first": a test event signed with the new secret alone. Once the
// receiver answered it with a 2xx, the admin may end the grace period early; before, that is
// refused (409), so a receiver that never got the new secret is not cut off by mistake.
//
// Pure: the endpoint's rotation columns, the signal and the clock come in.

/** Most a grace period may last: 7 days. */
export const GRACE_SECONDS_MAX = 7 * 86_400;
/** The grace period when none is given: 24 hours. */
export const GRACE_SECONDS_DEFAULT = 86_400;

/** An endpoint's rotation columns (webhook_endpoints). */
export interface RotationColumns {
  previous_secret_sealed?: string | null;
  previous_secret_expires_at?: string | null;
  rotation_started_at?: string | null;
  rotation_proof_signal_id?: string | null;
}

/** A rotation whose grace period is running at `now`. */
export interface ActiveRotation {
  startedAt: string;
  graceEndsAt: string;
  /** The proof test event's signal, once one was sent. */
  proofSignalId: string | null;
}

/** The rotation in its grace period at `now`, or undefined (none, or its grace period is over). */
export function activeRotation(e: RotationColumns, now: Date): ActiveRotation | undefined {
  if (!e.previous_secret_sealed || !e.previous_secret_expires_at) return undefined;
  if (Date.parse(e.previous_secret_expires_at) <= now.getTime()) return undefined;
  return {
    startedAt: e.rotation_started_at ?? e.previous_secret_expires_at,
    graceEndsAt: e.previous_secret_expires_at,
    proofSignalId: e.rotation_proof_signal_id ?? null,
  };
}

/**
 * The secrets an attempt is signed with, newest first: the current one, and during a grace
 * period the previous one too; the proof test event of a rotation only ever the current one.
 * `sentAt` is the attempt's send time, so an attempt after the grace period never carries the
 * old signature, whether or not maintenance has erased the old secret yet.
 */
export function signingSecrets(
  endpoint: { secret: string; previousSecret: string | undefined; previousExpiresAtMs: number | undefined },
  isProof: boolean,
  sentAt: Date,
): string[] {
  const inGrace =
    endpoint.previousSecret !== undefined &&
    endpoint.previousExpiresAtMs !== undefined &&
    sentAt.getTime() < endpoint.previousExpiresAtMs;
  return inGrace && !isProof ? [endpoint.secret, endpoint.previousSecret as string] : [endpoint.secret];
}

/** When a rotation started at `now` with `graceSeconds` ends; undefined for 0 (the old secret goes at once). */
export function graceEnd(now: Date, graceSeconds: number): string | undefined {
  return graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000).toISOString() : undefined;
}
