/** Console sign-in: session lifetimes and the lifetime of a set-password link (config.ts reads them). */
export interface SessionSettings {
  /** A session unused this long ends (sliding: each request moves it, at most once a minute). */
  idleTimeoutMs: number;
  /** A session ends this long after sign-in, however active. */
  maxAgeMs: number;
  /** A one-time set-password link works this long. */
  passwordLinkTtlMs: number;
}
