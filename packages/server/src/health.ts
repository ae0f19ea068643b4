import { access, constants } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { AppDeps } from './deps.ts';

const Status = Type.Object({ status: Type.String() });

export async function healthRoutes(app: FastifyInstance, deps: AppDeps): Promise<void> {
  app.get(
    '/healthz',
    { schema: { tags: ['health'], summary: 'The process is up', response: { 200: Status } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    {
      schema: {
        tags: ['health'],
        summary: 'The database answers and the data dir is writable',
        response: { 200: Status, 503: Status },
      },
    },
    async (_req, reply) => {
      try {
        await sql`select 1`.execute(deps.db);
        await access(deps.config.dataDir, constants.W_OK);
        return { status: 'ready' };
      } catch {
        return reply.code(503).send({ status: 'not ready' });
      }
    },
  );
}
