// The hidden first argument that makes the agent's entry point (main.ts) run the daemon's job
// process for one bundle request (daemon/job.ts) instead of a command: how the single
// executable, which has no job.ts beside it to fork, starts that process
// (daemon/job-runner.ts). Not a command: commander never sees it and --help never shows it.
// A file of its own so that main.ts knows it without loading the daemon.

export const JOB_ENTRY_ARGUMENT = '__guard-agent-daemon-job';
