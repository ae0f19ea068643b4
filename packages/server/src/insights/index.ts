// Bundle insights: every registered bundle is queued (enqueueAnalysis, in the registering
// transaction) and analysed once by the worker (analysis/), streaming the stored archive
// through the object store; people read the findings and the evidence lines in context.

export { analyzerRoutes } from './analyzer-routes.ts';
export { enqueueAnalysis } from './insights-repository.ts';
export { insightRoutes } from './routes.ts';
export {
  INSIGHTS_CPU_BUDGET_MS,
  INSIGHTS_POLL_MS,
  INSIGHTS_THREAD_MEMORY_MB,
  INSIGHTS_TIMEOUT_MS,
  InsightsWorker,
  insightsThreads,
} from './worker.ts';
