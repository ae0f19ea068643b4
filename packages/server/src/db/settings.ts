import { readFileSync } from 'node:fs';
import { ConfigError, type SettingRow, type SettingsReader } from '../kernel/settings.ts';

/**
 * Where the state lives: the embedded SQLite file in the data dir, or a PostgreSQL database
 * shared by any number of replicas (DESIGN §8: `--database postgres://…`).
 */
export type DatabaseConfig =
  | { engine: 'sqlite' }
  | {
      engine: 'postgres';
      /** The connection URL as given, password included (never logged: see `display`). */
      url: string;
      /** From the URL, else PGPASSWORD; undefined: none (trust, peer or a .pgpass file). */
      password: string | undefined;
      /** The URL without its password, for logs and messages. */
      display: string;
      /** Connections in this process's pool. */
      poolSize: number;
    };

export interface DatabaseSettings {
  database: DatabaseConfig;
  /**
   * serve on PostgreSQL applies pending migrations itself (under the migration lock) instead
   * of refusing to start; SQLite always migrates at start (one process owns it).
   */
  migrate: boolean;
}

/** The database's rows of the settings table (docs/guard-server.md, "Configuration"). */
export const DATABASE_SETTINGS = [
  { key: 'database', flag: 'database', env: 'GUARD_SERVER_DATABASE', file: 'database', default: '' },
  {
    key: 'databasePoolSize',
    flag: 'database-pool-size',
    env: 'GUARD_SERVER_DATABASE_POOL_SIZE',
    file: 'database_pool_size',
    default: '10',
  },
  {
    key: 'databasePasswordFile',
    flag: 'database-password-file',
    env: 'GUARD_SERVER_DATABASE_PASSWORD_FILE',
    file: 'database_password_file',
    default: '',
  },
  { key: 'migrate', flag: 'migrate', env: 'GUARD_SERVER_MIGRATE', file: 'migrate', default: 'false', boolean: true },
] as const satisfies readonly SettingRow[];

/**
 * `--database`: empty for the embedded SQLite database, or `postgres://USER@HOST:PORT/DB`
 * (`postgresql://` too, with libpq's query parameters such as `sslmode`). The password comes
 * from the URL, else from `--database-password-file` (a mounted secret, its first line), else
 * from PGPASSWORD, the variable every PostgreSQL client reads.
 */
export function databaseSettings(r: SettingsReader, env: NodeJS.ProcessEnv): DatabaseSettings {
  return { database: databaseConfig(r, env), migrate: r.bool('migrate') };
}

function databaseConfig(r: SettingsReader, env: NodeJS.ProcessEnv): DatabaseConfig {
  const text = r.text('database');
  const poolSize = r.integer('databasePoolSize', 2, 1000);
  if (text === '') return { engine: 'sqlite' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`${r.named('database')} must be a postgres://USER@HOST:PORT/DB URL, got an unparsable value`);
  }
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:')
    throw new ConfigError(
      `${r.named('database')} must be a postgres://USER@HOST:PORT/DB URL (or empty for SQLite in the data dir), got a ${url.protocol} URL`,
    );
  if (url.hostname === '' || url.pathname.replace(/^\//, '') === '')
    throw new ConfigError(`${r.named('database')} must name a host and a database: postgres://USER@HOST:PORT/DB`);
  const password =
    url.password !== '' ? decodeURIComponent(url.password) : (passwordFromFile(r) ?? (env.PGPASSWORD || undefined));
  const shown = new URL(url.href);
  if (shown.password !== '') shown.password = '***';
  return { engine: 'postgres', url: text, password, display: shown.href, poolSize };
}

function passwordFromFile(r: SettingsReader): string | undefined {
  const path = r.text('databasePasswordFile');
  if (path === '') return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw new ConfigError(`${r.named('databasePasswordFile')}: ${path} cannot be read (${(error as Error).message})`);
  }
  const password = text.split(/\r?\n/)[0];
  if (password === '') throw new ConfigError(`${r.named('databasePasswordFile')}: ${path} is empty`);
  return password;
}
