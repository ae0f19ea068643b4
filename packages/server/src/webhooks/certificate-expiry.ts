// Announces client certificates (endpoint TLS, mTLS) that near their expiry: an
// `endpoint.certificate_expiring` event 30, 7 and 1 days before, once each per certificate,
// to every enabled endpoint of the tenant that subscribes to it (operational-events.ts). Runs
// on the maintenance timer (--gc-interval), one replica at a time (db exclusiveJob). A new
// certificate starts over (endpoint-tls.ts resets the mark); a threshold passed while the
// server was down is announced late, and only the nearest one.
//
// At least once: the event is written (with its deliveries, by the outbox) before the mark,
// so a crash between the two announces it again on the next run.

import { X509Certificate } from 'node:crypto';
import type { Db } from '../db/index.ts';
import { certificateExpiringEvent } from './operational-events.ts';

/** Days before the expiry at which a certificate is announced, farthest first. */
export const CERTIFICATE_ALERT_DAYS = [30, 7, 1] as const;
const DAY_MS = 86_400_000;

/** The nearest threshold a certificate expiring at `notAfterMs` has crossed at `nowMs`, or undefined. */
export function crossedThreshold(notAfterMs: number, nowMs: number): 30 | 7 | 1 | undefined {
  return CERTIFICATE_ALERT_DAYS.findLast((days) => notAfterMs - nowMs <= days * DAY_MS);
}

/** Writes the events due; returns how many. `write` is the signal outbox's (fan-out to subscribers). */
export async function announceExpiringCertificates(
  db: Db,
  write: (event: ReturnType<typeof certificateExpiringEvent>) => Promise<unknown>,
  now: Date,
): Promise<number> {
  const horizon = new Date(now.getTime() + CERTIFICATE_ALERT_DAYS[0] * DAY_MS).toISOString();
  const rows = await db
    .selectFrom('webhook_endpoints')
    .select([
      'id',
      'tenant_id',
      'name',
      'url',
      'tls_client_certificate',
      'tls_client_certificate_expires_at',
      'tls_client_certificate_alerted',
    ])
    .where('enabled', '=', 1)
    .where('tls_client_certificate_expires_at', 'is not', null)
    .where('tls_client_certificate_expires_at', '<=', horizon)
    .execute();
  let announced = 0;
  for (const row of rows) {
    const notAfter = row.tls_client_certificate_expires_at as string;
    const threshold = crossedThreshold(Date.parse(notAfter), now.getTime());
    const alerted = row.tls_client_certificate_alerted ?? 0;
    // Thresholds come nearer: 30, then 7, then 1. One announced already, or a nearer one, is not again.
    if (threshold === undefined || (alerted !== 0 && alerted <= threshold)) continue;
    const subject = subjectOf(row.tls_client_certificate);
    await write(certificateExpiringEvent(row, { subject, notAfter }, threshold, now.toISOString()));
    // Marked only if the certificate is still the one announced (an edit meanwhile starts over).
    await db
      .updateTable('webhook_endpoints')
      .set({ tls_client_certificate_alerted: threshold })
      .where('id', '=', row.id)
      .where('tls_client_certificate_expires_at', '=', notAfter)
      .execute();
    announced++;
  }
  return announced;
}

function subjectOf(pem: string | null | undefined): string {
  try {
    return pem ? new X509Certificate(pem).subject.replace(/\n/g, ', ') : '';
  } catch {
    return '';
  }
}
