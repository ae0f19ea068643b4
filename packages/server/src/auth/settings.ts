import type { SettingRow, SettingsReader } from '../kernel/settings.ts';

/** Console sign-in: session lifetimes and the lifetime of a set-password link (config.ts reads them with sessionSettings). */
export interface SessionSettings {
  /** A session unused this long ends (sliding: each request moves it, at most once a minute). */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, however active. */
  maxAgeMs: number;
  /** A one-time set-password link works this long. */
  passwordLinkTtlMs: number;
}

/** Console sign-in's rows of the settings table. */
export const SESSION_SETTINGS = [
  {
    key: 'sessionIdleTimeoutSeconds',
    flag: 'session-idle-timeout',
    env: 'GUARD_SERVER_SESSION_IDLE_TIMEOUT',
    file: 'session_idle_timeout_seconds',
    default: '1800',
  },
  {
    key: 'sessionMaxAgeSeconds',
    flag: 'session-max-age',
    env: 'GUARD_SERVER_SESSION_MAX_AGE',
    file: 'session_max_age_seconds',
    default: '43200',
  },
  {
    key: 'passwordLinkTtlSeconds',
    flag: 'password-link-ttl',
    env: 'GUARD_SERVER_PASSWORD_LINK_TTL',
    file: 'password_link_ttl_seconds',
    default: '86400',
  },
] as const satisfies readonly SettingRow[];

export function sessionSettings(r: SettingsReader): SessionSettings {
  return {
    idleTimeoutMs: r.integer('sessionIdleTimeoutSeconds', 60, 7 * 86_400) * 1000,
    maxAgeMs: r.integer('sessionMaxAgeSeconds', 60, 30 * 86_400) * 1000,
    passwordLinkTtlMs: r.integer('passwordLinkTtlSeconds', 300, 30 * 86_400) * 1000,
  };
}
