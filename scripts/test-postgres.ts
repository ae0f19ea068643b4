// The server test suite's PostgreSQL pass (`npm run test:postgres`, part of `npm test`):
// starts one throw-away PostgreSQL cluster (initdb in a temp dir, a free loopback port; see
// packages/server/test/postgres-cluster.ts), runs the given command with
// GUARD_TEST_DATABASE=postgres and GUARD_TEST_POSTGRES_URL naming the cluster (each test
// server gets a fresh database in it: test-database.ts), then stops and removes the cluster,
// whatever the tests did. Exits with the command's code.
//
//   node scripts/test-postgres.ts node --test --test-concurrency=2 "packages/server/src/**/*.test.ts" …

import { spawn } from 'node:child_process';
import { startPgCluster } from '../packages/server/test/postgres-cluster.ts';

const [cmd, ...args] = process.argv.slice(2);
if (!cmd) {
  process.stderr.write('usage: node scripts/test-postgres.ts COMMAND [ARGS…]\n');
  process.exit(2);
}
const t0 = performance.now();
const cluster = await startPgCluster({ label: 'suite' });
process.stderr.write(
  `test-postgres: cluster on 127.0.0.1:${cluster.port} (${cluster.dir}) up in ${Math.round(performance.now() - t0)} ms\n`,
);
const child = spawn(cmd, args, {
  stdio: 'inherit',
  env: { ...process.env, GUARD_TEST_DATABASE: 'postgres', GUARD_TEST_POSTGRES_URL: cluster.url() },
});
const forward = (signal: NodeJS.Signals) => () => child.kill(signal);
process.on('SIGINT', forward('SIGINT'));
process.on('SIGTERM', forward('SIGTERM'));
const code = await new Promise<number>((resolve) =>
  child.on('exit', (c, signal) => resolve(c ?? (signal === 'SIGINT' ? 130 : 1))),
);
await cluster.stop();
process.exit(code);
