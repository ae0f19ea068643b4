import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, unwrap } from '../../../lib/api-client.ts';
import type { PolicyChange } from '../policy-draft.ts';

const POLICY_KEY = ['detection-policy'] as const;

export function useDetectionPolicy() {
  return useQuery({ queryKey: POLICY_KEY, queryFn: () => unwrap(api.GET('/v1/detection/policy')) });
}

/** Only the types and fields given change; answers the whole policy. */
export function useUpdateDetectionPolicy() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (signal_types: PolicyChange) => unwrap(api.PUT('/v1/detection/policy', { body: { signal_types } })),
    // A read still on its way would answer with the policy from before the change: drop it.
    onMutate: () => client.cancelQueries({ queryKey: POLICY_KEY }),
    onSuccess: (data) => client.setQueryData(POLICY_KEY, data),
  });
}
