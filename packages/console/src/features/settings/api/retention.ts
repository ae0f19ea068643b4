import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';

// The tenant's settings, the same query the servers page reads for support access.
const SETTINGS_KEY = ['tenant-settings'] as const;

export function useRetention() {
  return useQuery({ queryKey: SETTINGS_KEY, queryFn: () => unwrap(api.GET('/v1/tenant/settings')) });
}

/** The tenant's retention settings: the webhook delivery log's and the support bundles'. */
export type RetentionField = 'delivery_retention_days' | 'bundle_retention_days';

/** Days to keep the delivery log or the bundles; null goes back to the default. */
export function useUpdateRetention(field: RetentionField) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (days: number | null) => unwrap(api.PATCH('/v1/tenant/settings', { body: { [field]: days } })),
    onMutate: () => client.cancelQueries({ queryKey: SETTINGS_KEY }),
    onSuccess: (data) => client.setQueryData(SETTINGS_KEY, data),
  });
}
