// Entry point of the single executable (packaging/build/agent-sea.ts): the same main() as
// packages/agent/bin/guard-agent runs, bundled as CommonJS (Node 24's single executable
// applications run a CommonJS main). In a single executable process.argv is
// [executable, executable, ...arguments], so the arguments start at index 2 as under node.

import { main } from '../../packages/agent/src/main.ts';

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
