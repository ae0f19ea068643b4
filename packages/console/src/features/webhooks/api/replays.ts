import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

/** While a replay runs, its progress is read this often. */
const PROGRESS_REFRESH_MS = 1000;

export interface ReplayFilter {
  since: string;
  status: 'failed' | 'succeeded' | undefined;
}

const replaysKey = (endpointId: string) => ['webhook-replays', endpointId] as const;

/** The endpoint's replays, newest first, followed while one runs. */
export function useReplays(endpointId: string) {
  return useQuery({
    queryKey: replaysKey(endpointId),
    queryFn: () => unwrap(api.GET('/v1/webhooks/endpoints/{id}/replays', { params: { path: { id: endpointId } } })),
    refetchInterval: (query) =>
      query.state.data?.replays.some((r) => r.state === 'running') ? PROGRESS_REFRESH_MS : false,
  });
}

/** A dry run: how many deliveries the replay would send. */
export function useReplayCount(endpointId: string) {
  return useMutation({
    mutationFn: async (filter: ReplayFilter) => {
      const r = await unwrap(
        api.POST('/v1/webhooks/endpoints/{id}/replay', {
          params: { path: { id: endpointId } },
          body: { ...filter, dry_run: true },
        }),
      );
      if (!('count' in r)) throw new Error('the dry run answered without a count');
      return { ...filter, count: r.count, until: r.until };
    },
  });
}

export function useStartReplay(endpointId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (filter: ReplayFilter & { until: string }) =>
      unwrap(api.POST('/v1/webhooks/endpoints/{id}/replay', { params: { path: { id: endpointId } }, body: filter })),
    onSuccess: () => client.invalidateQueries({ queryKey: replaysKey(endpointId) }),
  });
}

export function useCancelReplay(endpointId: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (replayId: string) =>
      unwrap(api.POST('/v1/webhooks/replays/{id}/cancel', { params: { path: { id: replayId } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: replaysKey(endpointId) }),
  });
}
