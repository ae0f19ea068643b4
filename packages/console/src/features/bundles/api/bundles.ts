import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

export interface BundleFilters {
  tenant_id?: string;
  agent_id?: string;
  trigger?: 'cli' | 'console_push';
  since?: string;
  until?: string;
}

export const BUNDLE_PAGE_SIZE = 25;

export function useBundles(filters: BundleFilters, before: string | undefined) {
  return useQuery({
    queryKey: ['bundles', filters, before],
    queryFn: () =>
      unwrap(api.GET('/v1/support/bundles', { params: { query: { ...filters, before, limit: BUNDLE_PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
}

export function useBundle(id: string) {
  return useQuery({
    queryKey: ['bundle', id],
    queryFn: () => unwrap(api.GET('/v1/support/bundles/{id}', { params: { path: { id } } })),
  });
}

/**
 * Deletes the bundle (admin): the answer is its record as it now is, marked deleted, which the
 * bundle page shows at once; the list is read again.
 */
export function useDeleteBundle(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/support/bundles/{id}', { params: { path: { id } } })),
    onSuccess: (deleted) => {
      client.setQueryData(['bundle', id], deleted);
      client.removeQueries({ queryKey: ['bundle-insights', id] });
      return client.invalidateQueries({ queryKey: ['bundles'] });
    },
  });
}

/** Who deleted a bundle, and why, in a few words: "by ops@example.com" or "by retention". */
export function deletedBy(deleted: { reason: 'admin' | 'retention'; by_email: string | null; by: string }): string {
  if (deleted.reason === 'retention') return "by retention (older than the tenant's bundle retention)";
  return `by ${deleted.by_email ?? deleted.by} (admin)`;
}

/** Where the browser downloads the bundle file (the session cookie authenticates the GET). */
export function bundleDownloadUrl(id: string): string {
  return `/v1/support/bundles/${encodeURIComponent(id)}/download`;
}

export interface AuditFilters {
  tenant_id?: string;
  action?: string;
}

/** The download of the audit log with the page's filters (a plain link: the browser saves the attachment). */
export function auditExportUrl(format: 'csv' | 'jsonl', filters: AuditFilters): string {
  const query = new URLSearchParams({ format });
  if (filters.tenant_id) query.set('tenant_id', filters.tenant_id);
  if (filters.action) query.set('action', filters.action);
  return `/v1/audit/export?${query}`;
}

export function useAuditLog(filters: AuditFilters, before: string | undefined) {
  return useQuery({
    queryKey: ['audit', filters, before],
    queryFn: () => unwrap(api.GET('/v1/audit', { params: { query: { ...filters, before, limit: 50 } } })),
    placeholderData: keepPreviousData,
  });
}

/** The tenant's servers, to pick one in the filters by hostname (tenant users only). */
export function useServerChoices(enabled: boolean) {
  return useQuery({
    queryKey: ['servers'],
    queryFn: () => unwrap(api.GET('/v1/servers')),
    staleTime: 60_000,
    enabled,
  });
}

/** What the service found in the bundle; followed while its analysis is pending. */
export function useInsights(id: string) {
  return useQuery({
    queryKey: ['bundle-insights', id],
    queryFn: () => unwrap(api.GET('/v1/support/bundles/{id}/insights', { params: { path: { id } } })),
    refetchInterval: (query) => (query.state.data?.state === 'pending' ? 2000 : false),
  });
}

/** Lines around one line of a member: a finding's evidence, in context. */
export function useMemberLines(id: string, member: string, line: number, context: number) {
  return useQuery({
    queryKey: ['bundle-lines', id, member, line, context],
    queryFn: () =>
      unwrap(api.GET('/v1/support/bundles/{id}/lines', { params: { path: { id }, query: { member, line, context } } })),
    enabled: member !== '' && line > 0,
  });
}

/** Where a piece of evidence is shown in context. */
export function evidencePath(bundleId: string, member: string, line: number | undefined): string {
  const q = new URLSearchParams({ member, line: String(line ?? 1) });
  return `/support/bundles/${encodeURIComponent(bundleId)}/lines?${q}`;
}

/**
 * The diff of this bundle with another (default: the same server's previous one), asked for
 * only when the person opens the comparison. A 409/422 (nothing to compare with, analysis
 * still running) is an answer to show, not a failure to retry.
 */
export function useBundleDiff(id: string, against: string | undefined, enabled: boolean) {
  return useQuery({
    queryKey: ['bundle-diff', id, against ?? null],
    queryFn: () =>
      unwrap(api.GET('/v1/support/bundles/{id}/diff', { params: { path: { id }, query: against ? { against } : {} } })),
    enabled,
    retry: false,
  });
}
