import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import type { paths } from '../../../lib/schema.d.ts';
import { rememberSecret } from '../secret-once.ts';

export type Endpoint = paths['/v1/webhooks/endpoints/{id}']['get']['responses'][200]['content']['application/json'];

export const ENDPOINTS_KEY = ['webhook-endpoints'] as const;
const endpointKey = (id: string) => ['webhook-endpoint', id] as const;

export function useEndpoints(options: { refetchInterval?: number } = {}) {
  return useQuery({
    queryKey: ENDPOINTS_KEY,
    queryFn: () => unwrap(api.GET('/v1/webhooks/endpoints')),
    refetchInterval: options.refetchInterval,
  });
}

/** An endpoint's health (success rate, streak, time until it is disabled) is read again this often. */
export const HEALTH_REFRESH_MS = 10_000;

export function useEndpoint(id: string) {
  return useQuery({
    queryKey: endpointKey(id),
    queryFn: () => unwrap(api.GET('/v1/webhooks/endpoints/{id}', { params: { path: { id } } })),
    // While a rotation's proof is on its way, its outcome is looked for every second; else its
    // health every HEALTH_REFRESH_MS (while the page is shown).
    refetchInterval: (query) => {
      const proof = query.state.data?.rotation?.proof;
      if (proof && (proof.status === null || proof.status === 'pending' || proof.status === 'retrying')) return 1000;
      return HEALTH_REFRESH_MS;
    },
  });
}

import type { EventType } from '@guard/contract/endpoint-rules';

export { EVENT_TYPES, type EventType } from '@guard/contract/endpoint-rules';

export interface EndpointInput {
  name: string;
  url: string;
  headers: Record<string, string>;
  event_types: EventType[];
  min_severity: number;
  /** null: every signal type. */
  signal_types: string[] | null;
  /** Deliveries per second at most; null: no limit. */
  rate_limit: number | null;
  /** Authentication and TLS towards the receiver: only what changes (null removes). */
  auth?: CreateBody['auth'];
  tls_client_certificate?: string | null;
  tls_client_key?: string | null;
  tls_ca_certificates?: string | null;
}

type CreateBody = paths['/v1/webhooks/endpoints']['post']['requestBody']['content']['application/json'];

/** Creates an endpoint; its secret goes to the one-time store, never into the query cache. */
export function useCreateEndpoint() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (body: EndpointInput) => {
      const { secret, ...endpoint } = await unwrap(api.POST('/v1/webhooks/endpoints', { body }));
      rememberSecret(endpoint.id, secret);
      return endpoint;
    },
    onSuccess: (endpoint) => {
      client.setQueryData(endpointKey(endpoint.id), endpoint);
      return client.invalidateQueries({ queryKey: ENDPOINTS_KEY });
    },
  });
}

export function useUpdateEndpoint(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: Partial<EndpointInput> & { enabled?: boolean }) =>
      unwrap(api.PATCH('/v1/webhooks/endpoints/{id}', { params: { path: { id } }, body })),
    onSuccess: (endpoint) => {
      client.setQueryData(endpointKey(id), endpoint);
      return client.invalidateQueries({ queryKey: ENDPOINTS_KEY });
    },
  });
}

export function useDeleteEndpoint(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/webhooks/endpoints/{id}', { params: { path: { id } } })),
    onSuccess: () => {
      client.removeQueries({ queryKey: endpointKey(id) });
      return client.invalidateQueries({ queryKey: ENDPOINTS_KEY });
    },
  });
}

export function useSendTestEvent(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/v1/webhooks/endpoints/{id}/test', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['webhook-deliveries', id] }),
  });
}

/**
 * Rotates the signing secret. The new secret goes to `onSecret` (the page holds it in its
 * state until the admin says it is stored), never into the query cache.
 */
export function useRotateSecret(id: string, onSecret: (secret: string) => void) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (graceSeconds: number) => {
      const { secret, ...endpoint } = await unwrap(
        api.POST('/v1/webhooks/endpoints/{id}/rotate-secret', {
          params: { path: { id } },
          body: { grace_seconds: graceSeconds },
        }),
      );
      onSecret(secret);
      return endpoint;
    },
    onSuccess: (endpoint) => {
      client.setQueryData(endpointKey(id), endpoint);
      return client.invalidateQueries({ queryKey: ENDPOINTS_KEY });
    },
  });
}

/** Sends the proof: a test event signed with the new secret alone. */
export function useProveSecret(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/webhooks/endpoints/{id}/rotate-secret/verify', { params: { path: { id } } })),
    onSuccess: () =>
      Promise.all([
        client.invalidateQueries({ queryKey: endpointKey(id) }),
        client.invalidateQueries({ queryKey: ['webhook-deliveries', id] }),
      ]),
  });
}

/** Ends the grace period early (refused by the server until the proof succeeded). */
export function useCompleteRotation(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () =>
      unwrap(api.POST('/v1/webhooks/endpoints/{id}/rotate-secret/complete', { params: { path: { id } } })),
    onSuccess: (endpoint) => {
      client.setQueryData(endpointKey(id), endpoint);
      return client.invalidateQueries({ queryKey: ENDPOINTS_KEY });
    },
  });
}
