// The settings table's vocabulary. Each setting is one row: its key, its flag, its environment
// variable, its config-file key and its default (docs/guard-server.md, "Configuration", lists
// them all). A capability owns its rows and their parser in its settings.ts; config.ts joins
// the rows into SETTINGS, reads flags, environment and file once, and hands each parser a
// SettingsReader over the raw values.

export interface SettingRow {
  /** The name config.ts and the parsers use. */
  readonly key: string;
  /** `--<flag>` on every command. */
  readonly flag: string;
  /** The environment variable. */
  readonly env: string;
  /** The config file's key. */
  readonly file: string;
  /** As text, the way a flag gives it; '' for "none" (the docs say what none means). */
  readonly default: string;
  /** A flag without a value (`--migrate`); its variable and file key take true/false/1/0. */
  readonly boolean?: true;
}

/** `--flag (ENV, file_key)`: how a refusal names a setting. */
export function settingName(row: SettingRow): string {
  return `--${row.flag} (${row.env}, ${row.file})`;
}

/** A setting given a value it cannot take, or settings that contradict each other. */
export class ConfigError extends Error {}

/**
 * The raw values of every setting (flag, else environment, else file, else default) and the
 * parsing every refusal of which names its setting: `--flag (ENV, file_key)`.
 */
export class SettingsReader {
  readonly #rows: readonly SettingRow[];
  readonly #raw: Readonly<Record<string, string>>;
  readonly #given: ReadonlySet<string>;

  /** `given`: the keys set by a flag, the environment or the file (the others hold their default). */
  constructor(rows: readonly SettingRow[], raw: Readonly<Record<string, string>>, given: ReadonlySet<string>) {
    this.#rows = rows;
    this.#raw = raw;
    this.#given = given;
  }

  /** Whether the setting was configured rather than left at its default. */
  given(key: string): boolean {
    return this.#given.has(key);
  }

  /** The value as given (or the default), as text. */
  text(key: string): string {
    const value = this.#raw[key];
    if (value === undefined) throw new Error(`no setting ${key}`);
    return value;
  }

  /** `--flag (ENV, file_key)`: how a refusal names a setting. */
  named(key: string): string {
    const s = this.#rows.find((row) => row.key === key);
    if (!s) throw new Error(`no setting ${key}`);
    return settingName(s);
  }

  bool(key: string): boolean {
    const value = this.text(key);
    if (!['true', 'false', '1', '0'].includes(value)) throw new ConfigError(`${this.named(key)} must be true or false`);
    return value === 'true' || value === '1';
  }

  integer(key: string, min: number, max = Number.MAX_SAFE_INTEGER): number {
    const value = this.text(key);
    const n = Number(value);
    if (value.trim() === '' || !Number.isSafeInteger(n) || n < min || n > max)
      throw new ConfigError(`${this.named(key)} must be an integer from ${min} to ${max}, got "${value}"`);
    return n;
  }

  /** A timeout given in seconds, at most a day (a timer of more than 2^31 ms would fire at once), in ms. */
  timeoutMs(key: string): number {
    return this.integer(key, 1, 86_400) * 1000;
  }
}
