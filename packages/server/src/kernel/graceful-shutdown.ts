// Graceful shutdown: once the app is closing (SIGTERM, SIGINT), every response says
// `Connection: close` and idle keep-alive connections are closed as they become idle, so
// in-flight requests finish and nothing holds the process for the keep-alive timeout.

import type { FastifyInstance } from 'fastify';

/** In-flight requests get this long to finish after SIGTERM; then connections are cut. */
export const SHUTDOWN_GRACE_MS = 20_000;

export function gracefulShutdown(app: FastifyInstance): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
    const sweep = setInterval(() => app.server.closeIdleConnections(), 100);
    sweep.unref();
    const deadline = setTimeout(() => app.server.closeAllConnections(), SHUTDOWN_GRACE_MS);
    deadline.unref();
    app.server.once('close', () => {
      clearInterval(sweep);
      clearTimeout(deadline);
    });
  });
  app.addHook('onSend', async (_req, reply) => {
    if (closing) reply.header('connection', 'close');
  });
}
