// Which proxy the agent's requests use, from the standard environment variables. A pure
// function of the environment it is given: the command hands in process.env, tests hand in
// their own. The result is the `proxyEnv` of node:http's built-in proxy support.

/** The three settings node:http's Agent reads from its `proxyEnv` option. */
export interface ProxySettings {
  HTTP_PROXY?: string;
  HTTPS_PROXY?: string;
  NO_PROXY?: string;
}

/**
 * - `http_proxy` / `HTTP_PROXY`: proxy for http:// URLs;
 * - `https_proxy` / `HTTPS_PROXY`: proxy for https:// URLs, and when neither is set the
 *   http:// proxy is used for https:// URLs too (curl would go direct; a host that names only
 *   HTTP_PROXY usually means "everything through the proxy");
 * - `no_proxy` / `NO_PROXY`: hosts reached directly, separated by commas or white space
 *   (node:http splits on commas only); brackets around IPv6 addresses are dropped, as the host
 *   they are matched against has none.
 * A non-empty lowercase form wins over the uppercase one.
 */
export function proxySettings(env: Readonly<Record<string, string | undefined>>): ProxySettings {
  const pick = (lower: string, upper: string) => env[lower] || env[upper] || undefined;
  const http = pick('http_proxy', 'HTTP_PROXY');
  const https = pick('https_proxy', 'HTTPS_PROXY') ?? http;
  const noProxy = (pick('no_proxy', 'NO_PROXY') ?? '')
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
