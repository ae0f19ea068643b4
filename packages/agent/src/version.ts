import agentPackage from '../package.json' with { type: 'json' };

/**
 * The agent version, from packages/agent/package.json (kept equal to the root package.json's
 * by `npm version --workspaces`; test/version.test.ts checks it). A JSON import rather than
 * createRequire, so that a bundler (the single executable, packaging/agent) inlines it.
 */
export const AGENT_VERSION: string = agentPackage.version;
