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
