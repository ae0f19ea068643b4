import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

/** Open bundle requests are followed this often (their state changes within seconds). */
export const LIVE_MS = 2000;
/** Otherwise the lists are refreshed this often (online state, last seen). */
const IDLE_MS = 15_000;

const OPEN_STATES = new Set(['queued', 'delivered', 'collecting', 'uploading']);

export function isOpenRequest(state: string): boolean {
  return OPEN_STATES.has(state);
}

export function useServers(tenantId?: string) {
  return useQuery({
    queryKey: ['servers', tenantId ?? null],
    queryFn: () => unwrap(api.GET('/v1/servers', { params: { query: { tenant_id: tenantId, limit: 200 } } })),
    refetchInterval: (query) => (query.state.data?.servers.some((s) => s.active_request !== null) ? LIVE_MS : IDLE_MS),
  });
}

const TOKENS_KEY = ['enrollment-tokens'] as const;

export function useEnrollmentTokens(enabled: boolean) {
  return useQuery({ queryKey: TOKENS_KEY, queryFn: () => unwrap(api.GET('/v1/enrollment-tokens')), enabled });
}

export function useCreateEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { expires_in_seconds: number; max_uses: number }) =>
      unwrap(api.POST('/v1/enrollment-tokens', { body })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

export function useRevokeEnrollmentToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => unwrap(api.DELETE('/v1/enrollment-tokens/{id}', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: TOKENS_KEY }),
  });
}

// --- console push: bundle requests --------------------------------------------------------

const REQUESTS_KEY = ['bundle-requests'] as const;

/** The newest bundle requests (of one tenant for support staff who name it), followed live while one is open. */
export function useBundleRequests(tenantId?: string) {
  return useQuery({
    queryKey: [...REQUESTS_KEY, tenantId ?? null],
    queryFn: () => unwrap(api.GET('/v1/bundle-requests', { params: { query: { tenant_id: tenantId, limit: 10 } } })),
    refetchInterval: (query) => (query.state.data?.requests.some((r) => isOpenRequest(r.state)) ? LIVE_MS : IDLE_MS),
  });
}

export function useRequestBundle() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (serverId: string) =>
      unwrap(api.POST('/v1/servers/{server_id}/bundle-requests', { params: { path: { server_id: serverId } } })),
    onSuccess: () => {
      client.invalidateQueries({ queryKey: REQUESTS_KEY });
      client.invalidateQueries({ queryKey: ['servers'] });
    },
  });
}

const SETTINGS_KEY = ['tenant-settings'] as const;

export function useTenantSettings(enabled: boolean) {
  return useQuery({ queryKey: SETTINGS_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/settings')), enabled });
}

export function useUpdateTenantSettings() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: { allow_support_collection: boolean }) => unwrap(api.PATCH('/v1/tenant/settings', { body })),
    // A read still on its way would answer with the value from before the change: drop it.
    onMutate: () => client.cancelQueries({ queryKey: SETTINGS_KEY }),
    onSuccess: (data) => client.setQueryData(SETTINGS_KEY, data),
  });
}
