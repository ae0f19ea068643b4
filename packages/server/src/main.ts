// guard-server entry point.
//   guard-server [serve] [--data-dir DIR] [--listen HOST:PORT] [--public-url URL] [--webhook-allow-private] [--config FILE]
//   guard-server setup --data-dir DIR --json

import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadServerConfig, parseServerArgs, SETTINGS } from './config.ts';
import { SERVER_VERSION } from './version.ts';

const HELP = `guard-server ${SERVER_VERSION}

Usage:
  guard-server [serve] [options]      run the service (default)
  guard-server setup --json [options] create a tenant, its first admin and an enrolment token; print them as JSON

Options (flag / environment / config-file key, default):
${SETTINGS.map((s) => `  --${s.flag.padEnd(24)} ${s.env.padEnd(36)} ${s.file} (${s.default || 'http://<listen address>'})`).join('\n')}
  --config FILE                GUARD_SERVER_CONFIG                  YAML file with the keys above
  --help

Extra CAs for webhook TLS: NODE_EXTRA_CA_CERTS. Docs: docs/guard-server.md`;

/** How to run the repository's binaries from the current directory. */
function bin(which: 'server' | 'agent'): string {
  const path = fileURLToPath(new URL(`../../${which}/bin/guard-${which}`, import.meta.url));
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

async function main(argv: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseServerArgs>;
  let config: ReturnType<typeof loadServerConfig>;
  try {
    parsed = parseServerArgs(argv);
    if (parsed.values.help) {
      process.stdout.write(`${HELP}\n`);
      return 0;
    }
    config = loadServerConfig(parsed.values, process.env, process.cwd());
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`guard-server: ${error.message}\n(run with --help for usage)\n`);
      return 1;
    }
    throw error;
  }
  const command = parsed.positionals[0] ?? 'serve';
  // Each command loads only what it needs: --help and setup skip the HTTP stack.
  if (command === 'setup') {
    const [{ openDatabase }, { runSetup }] = await Promise.all([import('./db/index.ts'), import('./setup.ts')]);
    const db = await openDatabase(config.dataDir);
    try {
      const result = await runSetup(db, () => new Date());
      if (parsed.values.json) process.stdout.write(`${JSON.stringify(result)}\n`);
      else {
        process.stdout.write(`Tenant ${result.tenant_id} created.\n`);
        for (const [k, v] of Object.entries(result)) process.stdout.write(`  ${k.padEnd(24)} ${v}\n`);
        process.stdout.write('These secrets are shown once. Keep them safe.\n');
      }
    } finally {
      await db.destroy();
    }
    return 0;
  }
  if (command !== 'serve') {
    process.stderr.write(`guard-server: unknown command ${command}\n(run with --help for usage)\n`);
    return 1;
  }
  const { startServer } = await import('./server.ts');
  const server = await startServer(config);
  server.app.log.info({ url: server.url, dataDir: config.dataDir }, 'guard-server listening');
  process.stderr.write(
    `\nguard-server ${SERVER_VERSION} is listening on ${server.url}\n` +
      `  API reference:  ${server.url}/docs\n` +
      `  health:         ${server.url}/healthz\n` +
      `  data dir:       ${config.dataDir}\n` +
      'Next:\n' +
      `  create a tenant:   ${bin('server')} setup --data-dir ${config.dataDir} --json\n` +
      `  enroll an agent:   ${bin('agent')} enroll --url ${server.url} --token-file FILE\n` +
      `  collect, upload:   ${bin('agent')} support-bundle collect; ${bin('agent')} support-bundle upload BUNDLE\n` +
      '  (or `npm run demo` for the whole round trip on a throw-away server)\n\n',
  );
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  return -1; // keep running
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
