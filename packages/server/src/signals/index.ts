// Signals: ingest from agents, reads for people, and the outbox that writes each signal with
// its deliveries.
export { SignalOutbox } from './outbox.ts';
export { signalRoutes } from './routes.ts';
export { CreateSignal } from './schemas.ts';
export { signalFromAgent } from './signal-from-agent.ts';
