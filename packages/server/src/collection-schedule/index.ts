// Scheduled collection (issue 24, item 5): the tenant's collection_schedule setting, and the
// scheduler that makes bundle requests from it — weekly on the maintenance timer, and when a
// server raises a critical signal.
export { collectionScheduleRoutes } from './routes.ts';
export {
  type CriticalOutcome,
  criticalSignalTrigger,
  runWeeklySchedules,
  SCHEDULE_ACTOR,
  type ScheduleDeps,
} from './scheduler.ts';
