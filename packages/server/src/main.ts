// guard-server entry point: argv → command → exit code. The only place that ends the process
// or sets its exit code, always through EXIT_CODES (exit-codes.ts, docs/guard-server.md).
//   guard-server [serve] [options]          run the service (the default command)
//   guard-server setup [--json] [options]   headless bootstrap (DESIGN §6)
//   guard-server migrate [options]          apply the database's pending migrations, then exit
//   guard-server export --out FILE|-        the deployment's data as one archive
//   guard-server import --in FILE|-         an archive into an empty deployment
//   guard-server [command] --help | --version

import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, loadServerConfig, parseServerArgs, SETTINGS, type ServerConfig } from './config.ts';
import { EXIT_CODES, type ExitName } from './exit-codes.ts';
import { SERVER_VERSION } from './version.ts';

const COMMANDS = ['serve', 'setup', 'migrate', 'export', 'import'] as const;
type Command = (typeof COMMANDS)[number];

/** A command-line mistake: printed with the hint to the command's --help, exit 2. */
class UsageError extends Error {}

/** Rows of cells as aligned columns: each column as wide as its widest cell, two spaces apart. */
function columns(rows: string[][], indent = '  '): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows
    .map((r) => indent + r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]))).join('  '))
    .join('\n');
}

const EXIT_LINE = `Exit codes: ${Object.values(EXIT_CODES)
  .map((e) => `${e.code} ${e.summary}`)
  .join(', ')}.`;

/** What an empty default means, in the help (the docs table says the same). */
const EMPTY_DEFAULTS: Record<string, string> = {
  publicUrl: 'http://<listen address>',
  database: 'SQLite in the data dir',
  objectStore: '<data dir>/objects',
  tlsCert: 'none: plain HTTP',
  tlsKey: 'none: plain HTTP',
};

const SETTINGS_TABLE = columns(
  SETTINGS.map((s) => [`--${s.flag}`, s.env, s.file, `(${s.default || (EMPTY_DEFAULTS[s.key] ?? 'none')})`]),
);

function help(command: Command | undefined): string {
  if (command === 'export')
    return `Usage: guard-server export --out FILE [--data-dir DIR] [--config FILE]

Writes the deployment's data as one tar archive: every row of the database, the object of
every registered bundle and the master key (webhook endpoint secrets stay decryptable).
Stop the serving guard-server first: export takes the data directory's lock, so what it
writes is one consistent state. --out - writes to standard output. The archive holds every
secret of the deployment: it is created 0600; keep it like the data directory.
guard-server import reads it (docs/deploy.md: moving to PostgreSQL and S3).

${EXIT_LINE}
Docs: docs/deploy.md`;
  if (command === 'import')
    return `Usage: guard-server import --in FILE [--data-dir DIR] [--object-store URL] [--config FILE]

Reads an archive of guard-server export into an empty deployment: the database of the
settings (--database, or the SQLite file of --data-dir), the object store of --object-store,
and the
master key into --data-dir (which must have none, or the same one). Rows go in one
transaction; every object is checked against its size and SHA-256. --in - reads standard
input. The settings are those of serve (guard-server serve --help).

${EXIT_LINE}
Docs: docs/deploy.md`;
  if (command === 'migrate') {
    return `Usage: guard-server migrate [--database URL] [--data-dir DIR] [--config FILE]

Applies the migrations this release brings that the database has not run, then exits. With
PostgreSQL (--database postgres://USER@HOST:PORT/DB) run it once per upgrade, before the new
release's replicas start: they refuse a database with pending migrations unless started with
--migrate. Replicas still on the previous release keep running meanwhile. Safe to run twice
or from several hosts at once (the migrations take a lock and run in one transaction).
Without --database it migrates the SQLite database in the data directory (serve does that by
itself at every start).

Options:
${columns([
  [
    '--database URL',
    'postgres://USER@HOST:PORT/DB (GUARD_SERVER_DATABASE, key database; password from the URL or PGPASSWORD)',
  ],
  ['--data-dir DIR', 'the data directory (GUARD_SERVER_DATA_DIR, key data_dir; default ./data)'],
  ['--config FILE', 'YAML config file (GUARD_SERVER_CONFIG)'],
  ['-h, --help', 'this help'],
])}

${EXIT_LINE}
Docs: docs/guard-server.md`;
  }
  if (command === 'setup') {
    return `Usage: guard-server setup [--json] [--data-dir DIR | --database URL] [--config FILE]

Creates a tenant, its first admin and an enrolment token in the database (the data
directory's SQLite, or --database; created and migrated when needed) and prints them once;
the first setup of a database also creates the vendor support account. Only hashes are
stored: nothing can be shown again.

Options:
${columns([
  ['--json', 'print one JSON object for scripts (tenant_id, admin_token, enroll_token, ...)'],
  ['--data-dir DIR', 'the data directory (GUARD_SERVER_DATA_DIR, key data_dir; default ./data)'],
  ['--database URL', 'postgres://USER@HOST:PORT/DB instead of SQLite (GUARD_SERVER_DATABASE, key database)'],
  ['--config FILE', 'YAML config file (GUARD_SERVER_CONFIG)'],
  ['-h, --help', 'this help'],
])}

The settings of serve (guard-server serve --help) are read and checked as for serve, so
one config file serves both.

${EXIT_LINE}
Docs: docs/guard-server.md`;
  }
  const usage =
    command === 'serve'
      ? `Usage: guard-server [serve] [options]

Runs the service: the /v1 API, bundle uploads, webhook delivery. SIGTERM or SIGINT stops it:
in-flight requests finish, then it exits 0. With --tls-cert/--tls-key, SIGHUP re-reads the
certificate and key without dropping a connection.`
      : `guard-server ${SERVER_VERSION}: the Guard service

Usage:
${columns([
  ['guard-server [serve] [options]', 'run the service (the default command)'],
  ['guard-server setup [--json] [options]', 'create a tenant, its first admin and an enrolment token'],
  ['guard-server migrate [options]', "apply the database's pending migrations and exit"],
  ['guard-server export --out FILE [options]', "write the deployment's data as one archive"],
  ['guard-server import --in FILE [options]', 'read an archive into an empty deployment'],
  ['guard-server <command> --help', "a command's own help"],
  ['guard-server --version', 'print the version'],
])}`;
  return `${usage}

Settings (flag, environment variable, config-file key, default):
${SETTINGS_TABLE}

Options:
${columns([
  ['--config FILE', 'YAML file with the config-file keys above (GUARD_SERVER_CONFIG)'],
  ['-h, --help', 'this help'],
  ['-V, --version', 'print the version'],
])}

Flags win over environment variables, which win over the config file. Extra CAs for
webhook TLS: NODE_EXTRA_CA_CERTS.
${EXIT_LINE}
Docs: docs/guard-server.md`;
}

/** How to run the repository's binaries from the current directory. */
function bin(which: 'server' | 'agent'): string {
  const path = fileURLToPath(new URL(`../../${which}/bin/guard-${which}`, import.meta.url));
  const rel = relative(process.cwd(), path);
  return rel.startsWith('..') ? path : rel;
}

/** Why `listen` failed, in the operator's words; undefined when it was not `listen` that failed. */
function listenFailure(error: unknown, config: ServerConfig): string | undefined {
  const e = error as NodeJS.ErrnoException;
  if (e?.name === 'MetricsListenError') return e.message; // worded by metrics-listener.ts
  if (e?.syscall !== 'listen' && e?.syscall !== 'getaddrinfo') return undefined;
  const address = `${config.host.includes(':') ? `[${config.host}]` : config.host}:${config.port}`;
  const reasons: Record<string, string> = {
    EADDRINUSE: 'the address is already in use (is another guard-server running?)',
    EACCES:
      config.port < 1024
        ? 'permission denied (ports below 1024 need root or CAP_NET_BIND_SERVICE)'
        : 'permission denied',
    EADDRNOTAVAIL: 'the address is not one of this host (check --listen)',
    ENOTFOUND: 'the host name does not resolve (check --listen)',
    EAI_AGAIN: 'the host name does not resolve (check --listen)',
  };
  return `cannot listen on ${address}: ${reasons[e.code ?? ''] ?? e.message}`;
}

/** One line for the operator; the stack too when the log level asks for detail. */
function failure(what: string, error: unknown, config: ServerConfig | undefined): ExitName {
  process.stderr.write(`guard-server: ${what}: ${(error as Error)?.message ?? String(error)}\n`);
  if (config && (config.logLevel === 'debug' || config.logLevel === 'trace'))
    process.stderr.write(`${(error as Error)?.stack ?? ''}\n`);
  return 'failure';
}

async function main(argv: string[]): Promise<ExitName | 'running'> {
  let command: Command | undefined;
  let config: ServerConfig;
  let json = false;
  let transferPath: string | undefined;
  try {
    const parsed = (() => {
      try {
        return parseServerArgs(argv);
      } catch (error) {
        // The command, when one was named, points the hint at its own help.
        command = COMMANDS.find((c) => argv.includes(c));
        throw error;
      }
    })();
    const [first, ...rest] = parsed.positionals;
    if (first !== undefined && !(COMMANDS as readonly string[]).includes(first))
      throw new UsageError(`unknown command "${first}" (commands: ${COMMANDS.join(', ')})`);
    command = first as Command | undefined;
    if (parsed.values.help) {
      process.stdout.write(`${help(command)}\n`);
      return 'ok';
    }
    if (parsed.values.version) {
      process.stdout.write(`guard-server ${SERVER_VERSION}\n`);
      return 'ok';
    }
    if (rest.length > 0) throw new UsageError(`unexpected argument "${rest[0]}"`);
    json = parsed.values.json === true;
    if (json && command !== 'setup') throw new UsageError('--json applies to setup only');
    if (parsed.values.out !== undefined && command !== 'export') throw new UsageError('--out applies to export only');
    if (parsed.values.in !== undefined && command !== 'import') throw new UsageError('--in applies to import only');
    if (command === 'export' && typeof parsed.values.out !== 'string')
      throw new UsageError('export needs --out FILE (or --out - for standard output)');
    if (command === 'import' && typeof parsed.values.in !== 'string')
      throw new UsageError('import needs --in FILE (or --in - for standard input)');
    transferPath = (parsed.values.out ?? parsed.values.in) as string | undefined;
    config = loadServerConfig(parsed.values, process.env, process.cwd());
  } catch (error) {
    if (error instanceof ConfigError || error instanceof UsageError) {
      process.stderr.write(
        `guard-server: ${error.message}\n(run guard-server ${command ? `${command} ` : ''}--help for usage)\n`,
      );
      return 'usage';
    }
    throw error;
  }

  // Each command loads only what it needs: --help and setup skip the HTTP stack.
  if (command === 'setup') {
    try {
      const [{ openDatabase }, { runSetup }] = await Promise.all([import('./db/index.ts'), import('./setup.ts')]);
      const db = await openDatabase(config, { migrations: 'latest' });
      try {
        const result = await runSetup(db, () => new Date());
        if (json) process.stdout.write(`${JSON.stringify(result)}\n`);
        else {
          process.stdout.write(`Tenant ${result.tenant_id} created.\n`);
          for (const [k, v] of Object.entries(result)) process.stdout.write(`  ${k.padEnd(24)} ${v}\n`);
          process.stdout.write('These secrets are shown once. Keep them safe.\n');
        }
      } finally {
        await db.destroy();
      }
    } catch (error) {
      return failure('setup failed', error, config);
    }
    return 'ok';
  }

  if (command === 'migrate') {
    try {
      const { openDatabase, migrate, MIGRATION_NAMES } = await import('./db/index.ts');
      const db = await openDatabase(config, { migrations: 'none' });
      try {
        const applied = await migrate(db);
        process.stdout.write(
          applied.length > 0
            ? `Applied ${applied.length} migration(s): ${applied.join(', ')}.\n`
            : `The database is up to date (${MIGRATION_NAMES.length} migrations).\n`,
        );
      } finally {
        await db.destroy();
      }
    } catch (error) {
      return failure('migrate failed', error, config);
    }
    return 'ok';
  }

  if (command === 'export' || command === 'import') {
    try {
      const { runExport, runImport, describeSummary } = await import('./data-transfer.ts');
      const path = transferPath as string;
      const summary = command === 'export' ? await runExport(config, path) : await runImport(config, path);
      process.stderr.write(describeSummary(command === 'export' ? 'exported' : 'imported', summary));
    } catch (error) {
      return failure(`${command} failed`, error, config);
    }
    return 'ok';
  }

  const { startServer } = await import('./server.ts');
  let server: Awaited<ReturnType<typeof startServer>>;
  try {
    server = await startServer(config);
  } catch (error) {
    const listen = listenFailure(error, config);
    if (listen === undefined) return failure('cannot start', error, config);
    process.stderr.write(`guard-server: ${listen}\n`);
    return 'listen';
  }
  server.app.log.info({ url: server.url, dataDir: config.dataDir }, 'guard-server listening');
  process.stderr.write(
    `\nguard-server ${SERVER_VERSION} is listening on ${server.url}\n` +
      `  console:        ${server.url}/console/ (sign in with the admin_email and admin_password setup prints)\n` +
      `  API reference:  ${server.url}/docs (OpenAPI document: ${server.url}/openapi.json)\n` +
      `  health:         ${server.url}/healthz, ready: ${server.url}/readyz\n` +
      `  metrics:        ${server.metricsUrl ?? 'not served (--metrics-listen)'}\n` +
      `  data dir:       ${config.dataDir}\n` +
      `  database:       ${config.database.engine === 'postgres' ? `PostgreSQL ${config.database.display}` : `SQLite ${join(config.dataDir, 'guard.db')}`}\n` +
      'Next:\n' +
      `  create a tenant:   ${bin('server')} setup ${config.database.engine === 'postgres' ? `--database ${config.database.display}` : `--data-dir ${config.dataDir}`} --json\n` +
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
      () => process.exit(EXIT_CODES.ok.code),
      (error) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        process.exit(EXIT_CODES.failure.code);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  // SIGHUP re-reads --tls-cert/--tls-key (a renewed certificate) without dropping a connection;
  // a pair that cannot be used is logged and the one in use stays.
  const { reloadTls } = server;
  if (reloadTls)
    process.on('SIGHUP', () => {
      reloadTls().catch((error) =>
        server.app.log.error({ err: error }, 'TLS reload failed; the certificate in use stays'),
      );
    });
  return 'running';
}

const outcome = await main(process.argv.slice(2)).catch((error: unknown) =>
  failure('unexpected error', error, undefined),
);
if (outcome !== 'running') process.exitCode = EXIT_CODES[outcome].code;
