// A tenant's enrolled agents: list and revoke (admins).
export { agentRoutes } from './routes.ts';
