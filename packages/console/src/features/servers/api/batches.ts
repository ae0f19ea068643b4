// Bundle batches (fleets): many servers asked for a support bundle at once, by selection or
// by filter (the server's dry run previews a filter), then followed live until every request
// has finished.

import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import { isOpenRequest, LIVE_MS } from './servers.ts';

const IDLE_MS = 15_000;
const BATCHES_KEY = ['bundle-batches'] as const;

export type BatchFilter = { environment?: string; agent_version?: string; offline_since?: string };
export interface BatchSelection {
  server_ids?: string[];
  filter?: BatchFilter;
  /** Support staff name the tenant whose servers they ask. */
  tenant_id?: string;
}

/** The batch as GET /v1/bundle-batches/{id} answers it (named here so pages read it plainly). */
export interface BatchShape {
  id: string;
  tenant_id: string;
  created_at: string;
  created_by: string;
  created_by_role: 'admin' | 'support';
  filter: BatchFilter | null;
  progress: Record<string, number>;
  requests: {
    id: string;
    server_id: string;
    hostname: string;
    state: string;
    created_at: string;
    finished_at: string | null;
    bundle_id?: string;
    error?: { code: string; message: string };
    step?: string;
    reason: string | null;
  }[];
  skipped: SkippedShape[];
}

export interface SkippedShape {
  server_id: string;
  hostname: string | null;
  reason: 'not_found' | 'revoked' | 'open_request' | 'offline';
  detail: string;
}

export interface PreviewShape {
  dry_run: true;
  filter: BatchFilter | null;
  servers: { server_id: string; hostname: string; environment: string; agent_version: string }[];
  skipped: SkippedShape[];
}

/** The newest batches, live while one has an open request. */
export function useBatches(tenantId?: string) {
  return useQuery({
    queryKey: [...BATCHES_KEY, tenantId ?? null],
    queryFn: () => unwrap(api.GET('/v1/bundle-batches', { params: { query: { tenant_id: tenantId, limit: 10 } } })),
    refetchInterval: (query) =>
      query.state.data?.batches.some((b) => b.progress.total > finishedOf(b.progress)) ? LIVE_MS : IDLE_MS,
  });
}

/** Requests of a batch that have finished: done, failed, expired or interrupted. */
export function finishedOf(progress: Record<string, number>): number {
  return (progress.done ?? 0) + (progress.failed ?? 0) + (progress.expired ?? 0) + (progress.interrupted ?? 0);
}

export function useBatch(id: string) {
  return useQuery({
    queryKey: [...BATCHES_KEY, 'one', id],
    queryFn: () => unwrap(api.GET('/v1/bundle-batches/{id}', { params: { path: { id } } })) as Promise<BatchShape>,
    refetchInterval: (query) => (query.state.data?.requests.some((r) => isOpenRequest(r.state)) ? LIVE_MS : false),
  });
}

export function useCreateBatch() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: BatchSelection) =>
      unwrap(api.POST('/v1/bundle-batches', { body })) as Promise<unknown> as Promise<BatchShape>,
    onSuccess: () => {
      client.invalidateQueries({ queryKey: BATCHES_KEY });
      client.invalidateQueries({ queryKey: ['bundle-requests'] });
      client.invalidateQueries({ queryKey: ['servers'] });
    },
  });
}

/** The servers a filter would ask, and the ones it would skip: the server's dry run, nothing created. */
export function usePreviewBatch() {
  return useMutation({
    mutationFn: (body: BatchSelection) =>
      unwrap(
        api.POST('/v1/bundle-batches', { body: { ...body, dry_run: true } }),
      ) as Promise<unknown> as Promise<PreviewShape>,
  });
}
