// What people see of a bundle request (contract BundleRequest): bundle_id only when done,
// error and step only when failed; trigger says who made it (a person: manual, or the tenant's
// collection schedule), signal_id the critical signal that made it.

import type { BundleRequest, BundleRequestStep } from '@guard/contract';
import type { RequestWithHost } from './bundle-requests-repository.ts';

export function requestView(row: RequestWithHost): BundleRequest {
  const view: BundleRequest = {
    id: row.id,
    server_id: row.agent_id,
    state: row.state,
    created_at: row.created_at,
    expires_at: row.expires_at,
    tenant_id: row.tenant_id,
    hostname: row.hostname,
    requested_by_role: row.requested_by_role,
    delivered_at: row.delivered_at,
    acknowledged_at: row.acknowledged_at,
    collecting_at: row.collecting_at,
    uploading_at: row.uploading_at,
    finished_at: row.finished_at,
    reason: row.reason,
    trigger: (row.trigger ?? 'manual') as BundleRequest['trigger'],
    batch_id: row.batch_id ?? null,
  };
  if (row.signal_id) view.signal_id = row.signal_id;
  if (row.state === 'done' && row.bundle_id !== null) view.bundle_id = row.bundle_id;
  if (row.state === 'failed') {
    view.error = { code: row.error_code ?? 'failed', message: row.error_message ?? '' };
    if (row.error_step !== null) view.step = row.error_step as BundleRequestStep;
  }
  return view;
}
