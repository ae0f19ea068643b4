// `guard-server [serve]`: runs the service, the default command. Prints where it listens and
// what to do next; SIGTERM or SIGINT stops it gracefully, SIGHUP re-reads --tls-cert/--tls-key.
// Its outcome is the promise of the exit once stopped: main.ts ends the process.

import { existsSync } from 'node:fs';
import os from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Command, Option } from 'commander';
import type { ServerConfig } from '../config.ts';
import type { ExitName } from '../kernel/exit-codes.ts';
import { SERVER_VERSION } from '../kernel/version.ts';
import { describeCommand } from './help.ts';
import { failure, type Outcome, type Settle } from './outcome.ts';
import { addSettingOptions, serverConfigOf } from './settings-options.ts';

export function addServeCommand(program: Command, settle: Settle): void {
  const command = program
    .command('serve', { isDefault: true })
    .summary('run the service (the default command)')
    .usage('[serve] [options]')
    .description(
      `Runs the service: the /v1 API, bundle uploads, webhook delivery. SIGTERM or SIGINT stops it:
in-flight requests finish, then it exits 0. With --tls-cert/--tls-key, SIGHUP re-reads the
certificate and key without dropping a connection.`,
    );
  addSettingOptions(command, 'table').addOption(new Option('-V, --version', 'print the version'));
  describeCommand(command, {
    synopsis: '[serve] [options]',
    notes: `Flags win over environment variables, which win over the config file. Extra CAs for
webhook TLS: NODE_EXTRA_CA_CERTS.`,
    docs: 'docs/guard-server.md',
  }).action(async () => settle(await runServeCommand(serverConfigOf(command))));
}

/**
 * How the operator runs what the start message names. From a checkout: the repository's bin
 * files and docs, as paths from the current directory. Installed (the guard-server package,
 * the image), where no bin/ lies beside the sources: the commands on PATH, guard-agent from
 * its own package on each host, the man page; and `setup` as the user the server runs as
 * (runuser, from root), so the files it writes in the data directory stay that user's.
 */
export interface StartLayout {
  server: string;
  agent: string;
  docs: string;
  /** Prefix of `setup` (e.g. `runuser -u guard -- `), or ''. */
  runAs: string;
  checkout: boolean;
  /** In the container image (GUARD_SERVER_IMAGE, set by the image): commands go through `exec`. */
  container?: boolean;
}

export function startLayout(): StartLayout {
  const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
  const fromCwd = (path: string) => {
    const rel = relative(process.cwd(), path);
    return rel.startsWith('..') ? path : rel;
  };
  if (process.env.GUARD_SERVER_IMAGE)
    return {
      server: 'guard-server',
      agent: 'guard-agent',
      docs: 'docs/deploy.md of the release (the image and compose files)',
      runAs: 'docker exec CONTAINER ',
      checkout: false,
      container: true,
    };
  const serverBin = here('../../bin/guard-server');
  if (existsSync(serverBin))
    return {
      server: fromCwd(serverBin),
      agent: fromCwd(here('../../../agent/bin/guard-agent')),
      docs: fromCwd(here('../../../../docs/guard-server.md')),
      runAs: '',
      checkout: true,
    };
  const uid = process.getuid?.() ?? 0;
  return {
    server: 'guard-server',
    agent: 'guard-agent',
    docs: 'man guard-server',
    runAs: uid === 0 ? '' : `runuser -u ${os.userInfo().username} -- `,
    checkout: false,
  };
}

/** What `serve` prints on stderr once it listens: where, and what to do next. */
export function startMessage(
  s: { version: string; url: string; metricsUrl?: string; config: ServerConfig },
  layout: StartLayout,
): string {
  const { config, url } = s;
  const db = config.database;
  const agentUrl = config.publicUrl ?? url;
  const setupTarget = db.engine === 'postgres' ? `--database ${db.display}` : `--data-dir ${config.dataDir}`;
  return (
    `\nguard-server ${s.version} is listening on ${url}\n` +
    `  console:        ${url}/console/ (sign in with the admin_email and admin_password setup prints)\n` +
    `  API reference:  ${url}/docs (OpenAPI document: ${url}/openapi.json)\n` +
    `  health:         ${url}/healthz, ready: ${url}/readyz\n` +
    `  metrics:        ${s.metricsUrl ?? 'not served (--metrics-listen)'}\n` +
    `  data dir:       ${config.dataDir}\n` +
    `  database:       ${db.engine === 'postgres' ? `PostgreSQL ${db.display}` : `SQLite ${join(config.dataDir, 'guard.db')}`}\n` +
    `  docs:           ${layout.docs}\n` +
    'Next:\n' +
    `  create a tenant:   ${layout.runAs}${layout.server} setup ${setupTarget} --json${setupNote(layout)}\n` +
    `  enroll an agent:   ${layout.agent} enroll --url ${agentUrl} --token-file FILE${layout.checkout ? '' : '   (on the host, from the guard-agent package)'}\n` +
    `  collect, upload:   ${layout.agent} support-bundle collect; ${layout.agent} support-bundle upload BUNDLE\n` +
    (layout.checkout ? '  (or `npm run demo` for the whole round trip on a throw-away server)\n' : '') +
    '\n'
  );
}

function setupNote(layout: StartLayout): string {
  if (layout.container) return '   (or podman exec; with compose: compose exec guard guard-server setup --json)';
  if (layout.runAs) return `   (as root; as ${layout.runAs.split(' ')[2]} itself, without runuser)`;
  return '';
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

async function runServeCommand(config: ServerConfig): Promise<Outcome> {
  const { startServer } = await import('../server.ts');
  // The API answers as soon as it listens, before the start is done (the delivery worker, on
  // PostgreSQL its LISTEN connection): a SIGTERM or SIGINT from then on is a graceful stop,
  // carried out once the start is done.
  let signalled: string | undefined;
  let onSignal = (signal: string) => {
    signalled ??= signal;
  };
  process.on('SIGTERM', () => onSignal('SIGTERM'));
  process.on('SIGINT', () => onSignal('SIGINT'));
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
    startMessage({ version: SERVER_VERSION, url: server.url, metricsUrl: server.metricsUrl, config }, startLayout()),
  );
  const running = Promise.withResolvers<ExitName>();
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.app.log.info({ signal }, 'shutting down');
    server.close().then(
      () => running.resolve('ok'),
      (error) => {
        server.app.log.error({ err: error }, 'shutdown failed');
        running.resolve('failure');
      },
    );
  };
  // SIGHUP re-reads --tls-cert/--tls-key (a renewed certificate) without dropping a connection;
  // a pair that cannot be used is logged and the one in use stays.
  const { reloadTls } = server;
  if (reloadTls)
    process.on('SIGHUP', () => {
      reloadTls().catch((error) =>
        server.app.log.error({ err: error }, 'TLS reload failed; the certificate in use stays'),
      );
    });
  onSignal = stop;
  if (signalled) stop(signalled);
  return { running: running.promise };
}
