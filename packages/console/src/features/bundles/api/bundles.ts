import { keepPreviousData, useQuery } from '@tanstack/react-query';
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

/** Where the browser downloads the bundle file (the session cookie authenticates the GET). */
export function bundleDownloadUrl(id: string): string {
  return `/v1/support/bundles/${encodeURIComponent(id)}/download`;
}

export interface AuditFilters {
  tenant_id?: string;
  action?: string;
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
