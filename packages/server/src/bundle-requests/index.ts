// Console-pushed support bundles: bundle requests for people, the daemon's protocol for
// agents (heartbeat, long-poll, acknowledge, report), the hub that wakes held polls, and the
// sweep that expires requests no agent took.
export { BundleRequestsRepository, type RequestTrigger } from './bundle-requests-repository.ts';
export { CommandHub } from './command-hub.ts';
export { bundleRequestRoutes } from './routes.ts';
