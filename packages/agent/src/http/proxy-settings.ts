// Which proxy the agent's requests (enroll, upload) use: the config file's `proxy` keys, then
// the standard environment variables. Pure functions of what they are given: the commands
// hand in the loaded config and process.env, tests their own. The result is the `proxyEnv`
// of node:http's built-in proxy support.

import { AgentError } from '../errors.ts';

/** The three settings node:http's Agent reads from its `proxyEnv` option. */
export interface ProxySettings {
  HTTP_PROXY?: string;
  HTTPS_PROXY?: string;
  NO_PROXY?: string;
}

/**
 * The config file's `proxy` mapping (`proxy.http`, `proxy.https`, `proxy.no_proxy`). A key
 * that is absent (or null) leaves the matter to the environment; an empty string means "no
 * proxy" whatever the environment says, as curl's `--proxy ""` and `--noproxy ""` do.
 */
export interface ConfigProxy {
  http?: string;
  https?: string;
  no_proxy?: string;
}

const CONFIG_PROXY_KEYS = ['http', 'https', 'no_proxy'] as const;

/**
 * Reads and checks `proxy` from the effective config. A proxy URL is `http://` or `https://`
 * (credentials allowed: `http://user:pass@proxy:3128`); `no_proxy` is a string (entries
 * separated by commas or white space) or a list of strings. Messages never quote a value:
 * a proxy URL may carry a password.
 */
export function configProxy(effective: Readonly<Record<string, unknown>>, source: string | undefined): ConfigProxy {
  const raw = effective.proxy;
  const where = source ? ` (in ${source})` : '';
  const fail = (what: string): never => {
    throw new AgentError('config', `config key ${what}${where}`);
  };
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw))
    return fail('proxy must be a mapping with the keys http, https and no_proxy');
  const doc = raw as Record<string, unknown>;
  for (const key of Object.keys(doc))
    if (!(CONFIG_PROXY_KEYS as readonly string[]).includes(key))
      fail(`proxy.${key} is not known: the keys are http, https and no_proxy`);
  const proxy: ConfigProxy = {};
  for (const key of ['http', 'https'] as const) {
    const value = doc[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' || (value !== '' && !isProxyUrl(value)))
      fail(`proxy.${key} must be a proxy URL such as http://proxy.example.com:3128, or "" for none`);
    proxy[key] = value as string;
  }
  const noProxy = doc.no_proxy;
  if (noProxy !== undefined && noProxy !== null) {
    if (typeof noProxy === 'string') proxy.no_proxy = noProxy;
    else if (Array.isArray(noProxy) && noProxy.every((entry) => typeof entry === 'string'))
      proxy.no_proxy = noProxy.join(',');
    else fail('proxy.no_proxy must be a string or a list of host names');
  }
  return proxy;
}

function isProxyUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Each setting comes from the first of these that is set:
 * - proxy for https:// URLs: config `proxy.https`, `https_proxy`/`HTTPS_PROXY`, then the
 *   proxy for http:// URLs (curl would go direct; a host that names only HTTP_PROXY usually
 *   means "everything through the proxy");
 * - proxy for http:// URLs: config `proxy.http`, `http_proxy`/`HTTP_PROXY`;
 * - hosts reached directly: config `proxy.no_proxy`, `no_proxy`/`NO_PROXY`; entries
 *   separated by commas or white space (node:http splits on commas only); brackets around
 *   IPv6 addresses are dropped, as the host they are matched against has none.
 * The config file wins over the environment, as curl's --proxy and --noproxy do: it is the
 * agent's own, explicit setting, while the environment is whatever the service manager or
 * the shell passed on. A non-empty lowercase variable wins over the uppercase one; an empty
 * variable counts as unset.
 */
export function proxySettings(
  env: Readonly<Record<string, string | undefined>>,
  config: ConfigProxy = {},
): ProxySettings {
  const pick = (lower: string, upper: string) => env[lower] || env[upper] || undefined;
  const http = config.http ?? pick('http_proxy', 'HTTP_PROXY');
  const https = config.https ?? pick('https_proxy', 'HTTPS_PROXY') ?? http;
  const noProxy = (config.no_proxy ?? pick('no_proxy', 'NO_PROXY') ?? '')
    .split(/[\s,]+/)
    .map((entry) => entry.replaceAll('[', '').replaceAll(']', ''))
    .filter((entry) => entry !== '')
    .join(',');
  const settings: ProxySettings = {};
  if (http) settings.HTTP_PROXY = http;
  if (https) settings.HTTPS_PROXY = https;
  if (noProxy) settings.NO_PROXY = noProxy;
  return settings;
}
