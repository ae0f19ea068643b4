import { createRequire } from 'node:module';

/** The agent version, from packages/agent/package.json (one source of truth). */
export const AGENT_VERSION: string = createRequire(import.meta.url)('../package.json').version;
