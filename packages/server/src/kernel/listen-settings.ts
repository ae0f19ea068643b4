// Where guard-server listens and how it is reached: the API's address, its public URL, HTTPS's
// certificate and key, and the /metrics listener (docs/guard-server.md, "Configuration").
// server.ts opens the listeners; config.ts reads these with listenSettings.

import { resolve } from 'node:path';
import type { MetricsAddress } from './metrics-listener.ts';
import { ConfigError, type SettingRow, type SettingsReader } from './settings.ts';

export interface ListenSettings {
  host: string;
  port: number;
  /**
   * Base of presigned URLs and console links, without a trailing slash; undefined means
   * "http://<the address actually listened on>" (resolved once the port is known).
   */
  publicUrl: string | undefined;
  /** Where /metrics is served; undefined: nowhere. `explicit`: configured, not the default. */
  metricsListen: MetricsAddress | undefined;
  /** PEM files of the certificate chain and key guard-server serves HTTPS with; undefined: HTTP. */
  tls: { certPath: string; keyPath: string } | undefined;
}

/** The listeners' rows of the settings table. */
export const LISTEN_SETTINGS = [
  { key: 'listen', flag: 'listen', env: 'GUARD_SERVER_LISTEN', file: 'listen', default: '127.0.0.1:8080' },
  { key: 'publicUrl', flag: 'public-url', env: 'GUARD_SERVER_PUBLIC_URL', file: 'public_url', default: '' },
  {
    key: 'metricsListen',
    flag: 'metrics-listen',
    env: 'GUARD_SERVER_METRICS_LISTEN',
    file: 'metrics_listen',
    default: '127.0.0.1:9464',
  },
  { key: 'tlsCert', flag: 'tls-cert', env: 'GUARD_SERVER_TLS_CERT', file: 'tls_cert', default: '' },
  { key: 'tlsKey', flag: 'tls-key', env: 'GUARD_SERVER_TLS_KEY', file: 'tls_key', default: '' },
] as const satisfies readonly SettingRow[];

/** HOST:PORT (an IPv6 host in brackets), or undefined when it is not one. */
function hostPort(text: string): { host: string; port: number } | undefined {
  const m = /^(.+):(\d{1,5})$/.exec(text);
  if (!m || Number(m[2]) > 65535) return undefined;
  return { host: m[1].replace(/^\[(.*)\]$/, '$1'), port: Number(m[2]) };
}

/** The listeners' settings; paths are resolved against the working directory `cwd`. */
export function listenSettings(r: SettingsReader, cwd: string): ListenSettings {
  const listen = hostPort(r.text('listen'));
  if (!listen) throw new ConfigError(`listen must be HOST:PORT, got ${r.text('listen')}`);
  let metricsListen: MetricsAddress | undefined;
  const metrics = r.text('metricsListen');
  if (metrics !== '') {
    const address = hostPort(metrics);
    if (!address)
      throw new ConfigError(`--metrics-listen must be HOST:PORT, or empty for no metrics listener, got "${metrics}"`);
    metricsListen = { ...address, explicit: r.given('metricsListen') };
  }
  const publicUrl = r.text('publicUrl') === '' ? undefined : r.text('publicUrl');
  if (publicUrl !== undefined) {
    let parsed: URL;
    try {
      parsed = new URL(publicUrl);
    } catch {
      throw new ConfigError(`public URL must be an absolute http(s) URL, got ${publicUrl}`);
    }
    if (!['http:', 'https:'].includes(parsed.protocol) || parsed.username || parsed.search || parsed.hash)
      throw new ConfigError(
        `public URL must be an http(s) URL without credentials, query or fragment, got ${publicUrl}`,
      );
  }
  if (
    metricsListen &&
    metricsListen.port !== 0 &&
    metricsListen.port === listen.port &&
    metricsListen.host === listen.host
  )
    throw new ConfigError(
      `${r.named('metricsListen')} is the same address as ${r.named('listen')}: give /metrics its own port`,
    );
  return {
    ...listen,
    publicUrl: publicUrl?.replace(/\/+$/, ''),
    metricsListen,
    tls: tlsFiles(r, cwd),
  };
}

/** `--tls-cert` and `--tls-key` come together. */
function tlsFiles(r: SettingsReader, cwd: string): ListenSettings['tls'] {
  const cert = r.text('tlsCert');
  const key = r.text('tlsKey');
  if (cert === '' && key === '') return undefined;
  if (cert === '' || key === '')
    throw new ConfigError(`${r.named('tlsCert')} and ${r.named('tlsKey')} are given together or not at all`);
  return { certPath: resolve(cwd, cert), keyPath: resolve(cwd, key) };
}
