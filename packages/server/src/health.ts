// /healthz: the process answers. /readyz: it can serve, i.e. the database answers and the
// object store can be reached (embedded: the data dir is writable; S3: HeadBucket); a 503
// names the part that failed, so a load balancer's log or an operator's curl says which.

import { access, constants } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Db } from './db/index.ts';
import type { ObjectStore } from './objects/index.ts';

const Status = Type.Object({ status: Type.String() });
const Check = Type.Object({
  status: Type.Union([Type.Literal('ok'), Type.Literal('failed')]),
  error: Type.Optional(Type.String()),
});
const Readiness = Type.Object({
  status: Type.Union([Type.Literal('ready'), Type.Literal('not ready')]),
  checks: Type.Object({ database: Check, object_store: Check }),
});

/** A check that takes longer than this fails (a hung database must not hang the probe). */
const CHECK_TIMEOUT_MS = 5000;

async function check(fn: () => Promise<unknown>): Promise<{ status: 'ok' | 'failed'; error?: string }> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      fn(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${CHECK_TIMEOUT_MS / 1000} s`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return { status: 'ok' };
  } catch (error) {
    return { status: 'failed', error: (error as Error).message };
  } finally {
    clearTimeout(timer);
  }
}

export async function healthRoutes(
  app: FastifyInstance,
  deps: { db: Db; store: Pick<ObjectStore, 'ready'>; config: { dataDir: string } },
): Promise<void> {
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
        summary: 'The database answers and the object store can be reached; a 503 names the part that failed',
        response: { 200: Readiness, 503: Readiness },
      },
    },
    async (req, reply) => {
      const [database, objectStore] = await Promise.all([
        check(async () => {
          await sql`select 1`.execute(deps.db);
          await access(deps.config.dataDir, constants.W_OK);
        }),
        check(() => deps.store.ready()),
      ]);
      const ready = database.status === 'ok' && objectStore.status === 'ok';
      if (!ready) req.log.warn({ database, objectStore }, 'not ready');
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not ready', checks: { database, object_store: objectStore } });
    },
  );
}
