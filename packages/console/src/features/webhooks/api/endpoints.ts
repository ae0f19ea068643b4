import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import { rememberSecret } from '../secret-once.ts';

export const ENDPOINTS_KEY = ['webhook-endpoints'] as const;
const endpointKey = (id: string) => ['webhook-endpoint', id] as const;

export function useEndpoints() {
  return useQuery({
    queryKey: ENDPOINTS_KEY,
    queryFn: () => unwrap(api.GET('/v1/webhooks/endpoints')),
  });
}

export function useEndpoint(id: string) {
  return useQuery({
    queryKey: endpointKey(id),
    queryFn: () => unwrap(api.GET('/v1/webhooks/endpoints/{id}', { params: { path: { id } } })),
  });
}

export interface EndpointInput {
  name: string;
  url: string;
  headers: Record<string, string>;
}

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
