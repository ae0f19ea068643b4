import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../../lib/api-client.ts';

const SCHEDULE_KEY = ['collection-schedule'] as const;

export function useCollectionSchedule() {
  return useQuery({
    queryKey: SCHEDULE_KEY,
    queryFn: () => unwrap(api.GET('/v1/tenant/collection-schedule')),
  });
}

/** The whole setting as PUT takes it: a part left out is removed. */
export type ScheduleChange =
  paths['/v1/tenant/collection-schedule']['put']['requestBody']['content']['application/json'];

export function useUpdateCollectionSchedule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ScheduleChange) => unwrap(api.PUT('/v1/tenant/collection-schedule', { body })),
    onMutate: () => client.cancelQueries({ queryKey: SCHEDULE_KEY }),
    onSuccess: (data) => client.setQueryData(SCHEDULE_KEY, data),
  });
}
