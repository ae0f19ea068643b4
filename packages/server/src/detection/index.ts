// Host detection on the service: the tenant's detection policy (which of the seven detection
// signal types are on, severity overrides), its routes, and what ingest and the agent channel
// read of it.
export { DetectionPolicies } from './detection-policies.ts';
export {
  agentPolicyView,
  type DetectionPolicy,
  type IngestDecision,
  ingestDecision,
  versionOf,
} from './policy.ts';
export { detectionRoutes } from './routes.ts';
