// Entry point of the single executable (packaging/build/agent-sea.ts): the same main() as
// packages/agent/bin/guard-agent runs, bundled as CommonJS (Node 24's single executable
// applications run a CommonJS main). In a single executable process.argv is
// [executable, executable, ...arguments], so the arguments start at index 2 as under node.

import { setFlagsFromString } from 'node:v8';
import { DAEMON_V8_FLAGS, runsDaemon } from '../../packages/agent/src/compilers.ts';
import { main } from '../../packages/agent/src/main.ts';

// The blob's flags are the launcher's heap flags, for every command; the daemon's compilers are
// chosen here, before main() has run anything (src/compilers.ts). Turning a compiler off only
// stops later optimizations: V8 reads these flags each time it decides to optimize a function.
if (runsDaemon(process.argv.slice(2))) for (const flag of DAEMON_V8_FLAGS) setFlagsFromString(flag);

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
