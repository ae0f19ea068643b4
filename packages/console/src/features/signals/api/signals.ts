import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

export interface SignalFilters {
  severity_min?: number;
  signal_type?: string;
  server_id?: string;
  since?: string;
  until?: string;
}

export const PAGE_SIZE = 25;

export function useSignals(filters: SignalFilters, before: string | undefined) {
  return useQuery({
    queryKey: ['signals', filters, before],
    queryFn: () => unwrap(api.GET('/v1/signals', { params: { query: { ...filters, before, limit: PAGE_SIZE } } })),
    placeholderData: keepPreviousData,
  });
}

export function useSignal(id: string) {
  return useQuery({
    queryKey: ['signal', id],
    queryFn: () => unwrap(api.GET('/v1/signals/{id}', { params: { path: { id } } })),
  });
}

/** Erases the signal's payload (admin): the server keeps the signal as a tombstone. */
export function useErasePayload(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.DELETE('/v1/signals/{id}/payload', { params: { path: { id } } })),
    onSuccess: (signal) => {
      client.setQueryData(['signal', id], signal);
      return Promise.all([
        client.invalidateQueries({ queryKey: ['signals'] }),
        client.invalidateQueries({ queryKey: ['signal', id, 'deliveries'] }),
      ]);
    },
  });
}

export function useSignalDeliveries(id: string) {
  return useQuery({
    queryKey: ['signal', id, 'deliveries'],
    queryFn: () => unwrap(api.GET('/v1/signals/{id}/deliveries', { params: { path: { id } } })),
    refetchInterval: (query) =>
      query.state.data?.deliveries.some((d) => d.status === 'pending' || d.status === 'retrying') ? 3000 : false,
  });
}

/** The tenant's servers, to pick one in the filters by hostname. */
export function useServerChoices() {
  return useQuery({
    queryKey: ['servers'],
    queryFn: () => unwrap(api.GET('/v1/servers')),
    staleTime: 60_000,
  });
}
