import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { api, type paths, unwrap } from '../../../lib/api-client.ts';

type Stored = paths['/v1/support/analyzers']['get']['responses'][200]['content']['application/json'];
export type AnalyzerRule = Stored['rules'][number];
export type RuleSeverity = AnalyzerRule['severity'];
export const RULE_SEVERITIES: readonly RuleSeverity[] = ['critical', 'warning', 'info'];

/** The rules support staff set, and the analyzers built in. */
export function useAnalyzers() {
  return useQuery({ queryKey: ['analyzers'], queryFn: () => unwrap(api.GET('/v1/support/analyzers')) });
}

/** Replaces every rule; the answer is what is now stored. */
export function useSaveRules() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (rules: AnalyzerRule[]) => unwrap(api.PUT('/v1/support/analyzers', { body: { rules } })),
    onSuccess: (stored) => client.setQueryData(['analyzers'], stored),
  });
}

/** What these rules find in one stored bundle; nothing is stored. */
export function useTestRules() {
  return useMutation({
    mutationFn: (input: { bundleId: string; rules: AnalyzerRule[] }) =>
      unwrap(api.POST('/v1/support/analyzers/test', { body: { bundle_id: input.bundleId, rules: input.rules } })),
  });
}

/** Analyses a bundle again (support, or the tenant's admin); its insights are followed until done. */
export function useAnalyseAgain(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST('/v1/support/bundles/{id}/analyze', { params: { path: { id } } })),
    onSuccess: () => client.invalidateQueries({ queryKey: ['bundle-insights', id] }),
  });
}
