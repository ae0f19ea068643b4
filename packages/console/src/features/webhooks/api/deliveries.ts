import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

export const DELIVERY_PAGE_SIZE = 25;
/** While a shown delivery is still moving, the list refreshes this often. */
const LIVE_REFRESH_MS = 2000;

export type Status = 'succeeded' | 'pending' | 'retrying' | 'failed';
const moving = (status: string) => status === 'pending' || status === 'retrying';

export function useDeliveries(endpointId: string, status: Status | undefined, before: string | undefined) {
  return useQuery({
    queryKey: ['webhook-deliveries', endpointId, status, before],
    queryFn: () =>
      unwrap(
        api.GET('/v1/webhooks/endpoints/{id}/deliveries', {
          params: { path: { id: endpointId }, query: { status, before, limit: DELIVERY_PAGE_SIZE } },
        }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.deliveries.some((d) => moving(d.status)) ? LIVE_REFRESH_MS : false),
  });
}

/** The delivery log's search, as kept in the page's URL. */
export interface DeliveryLogFilters {
  signal_id?: string;
  endpoint_id?: string;
  status?: Status;
  since?: string;
  until?: string;
}

/** Every endpoint's deliveries, newest first (the delivery log); followed while a shown one is moving. */
export function useDeliveryLog(filters: DeliveryLogFilters, before: string | undefined) {
  return useQuery({
    queryKey: ['webhook-delivery-log', filters, before],
    queryFn: () =>
      unwrap(
        api.GET('/v1/webhooks/deliveries', { params: { query: { ...filters, before, limit: DELIVERY_PAGE_SIZE } } }),
      ),
    placeholderData: keepPreviousData,
    refetchInterval: (query) => (query.state.data?.deliveries.some((d) => moving(d.status)) ? LIVE_REFRESH_MS : false),
  });
}

export function useDelivery(id: string) {
  return useQuery({
    queryKey: ['webhook-delivery', id],
    queryFn: () => unwrap(api.GET('/v1/webhooks/deliveries/{id}', { params: { path: { id } } })),
    refetchInterval: (query) => (query.state.data && moving(query.state.data.status) ? LIVE_REFRESH_MS : false),
  });
}

export function useAttempt(deliveryId: string, attempt: number, enabled: boolean) {
  return useQuery({
    queryKey: ['webhook-attempt', deliveryId, attempt],
    queryFn: () =>
      unwrap(
        api.GET('/v1/webhooks/deliveries/{id}/attempts/{n}', { params: { path: { id: deliveryId, n: attempt } } }),
      ),
    enabled,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

export function useRedeliver(endpointId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (deliveryId: string) =>
      unwrap(api.POST('/v1/webhooks/deliveries/{id}/redeliver', { params: { path: { id: deliveryId } } })),
    onSuccess: (_d, deliveryId) =>
      Promise.all([
        client.invalidateQueries({ queryKey: ['webhook-deliveries', endpointId] }),
        client.invalidateQueries({ queryKey: ['webhook-delivery', deliveryId] }),
        client.invalidateQueries({ queryKey: ['webhook-delivery-log'] }),
      ]),
  });
}
