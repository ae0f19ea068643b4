// Which of V8's compilers a guard-agent process runs with. The daemon runs on the interpreter
// (Ignition) and the baseline compiler (Sparkplug) alone: it spends its life waiting, and its
// work of a moment (a log line, a file hash, a signal POST) needs no optimized code. The
// optimizing compilers (Maglev, Turbofan) compiled its start-up's hot functions (Node's module
// loader, the YAML parser), which touched ~7 MiB more of Node's code pages, and grew its
// anonymous memory by ~7 MiB under load: without them the daemon is 63 MiB idle and 68 MiB
// after 10 minutes of load instead of 70 and 84 (bench:detect, docs/benchmarks.md). Every
// other command keeps them: an upload from an agent without them cost the server ~30 % more
// CPU per PUT (bench:upload), and so does a console-pushed bundle's job process
// (daemon/job-runner.ts).
//
// The launcher (bin/guard-agent) passes DAEMON_V8_FLAGS on node's command line when the
// command is `daemon` (and the compile cache keeps a second set of compiled modules for them);
// the single executable, whose flags are fixed in its blob, sets them as it starts
// (packaging/agent/sea-entry.ts), before the daemon has run any code hot enough to optimize.

/** The V8 flags of the daemon's process, beside the launcher's heap flags. */
export const DAEMON_V8_FLAGS: readonly string[] = ['--no-turbofan', '--no-maglev'];

/**
 * Whether `args` (guard-agent's arguments, after the program) run the daemon: the first word
 * that is neither an option nor the value of `--config` is `daemon`. The same rule as the
 * launcher's shell loop.
 */
export function runsDaemon(args: readonly string[]): boolean {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === '--config') {
      i++;
      continue;
    }
    if (arg.startsWith('-')) continue;
    return arg === 'daemon';
  }
  return false;
}
