// A tenant's enrolled agents: list and revoke (admins), the console's Servers list, and what
// the daemon's heartbeat records of an agent (AgentsRepository, for bundle-requests/).
export { agentKeyLookup } from './agent-keys.ts';
export { AgentsRepository } from './agents-repository.ts';
export { agentRoutes } from './routes.ts';
export { isOnline } from './schemas.ts';
