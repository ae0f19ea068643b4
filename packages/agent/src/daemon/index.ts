// `guard-agent daemon`: heartbeats, long-polls the service for commands and makes the
// console-pushed bundles they ask for (docs/guard-agent-daemon.md). What other folders may use of it:

export { reconnectDelay } from './backoff.ts';
export { type DaemonOptions, runDaemon } from './daemon.ts';
export { runJobProcess } from './job.ts';
export { startJob } from './job-runner.ts';
export { createLog, type DaemonLog, LogFile } from './log.ts';
export { serviceClient } from './service.ts';
