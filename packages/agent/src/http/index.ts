// The agent's HTTP client (docs/decisions/0004-agent-http-client.md): node:http and
// node:https with keep-alive pools through the configured proxies, one exchange at a time,
// steps retried on connection errors, 429 and 5xx, errors that name the step, the status and
// the service's own message. What other folders may use of it:

export { createAgents, destroyAgents, type HttpDeps, realSleep, userAgent } from './deps.ts';
export { type BodyWriter, send } from './exchange.ts';
export { describeNetworkError, HttpStatusError, isNetworkError, statusError } from './failures.ts';
export { parseJson, postJson } from './json-post.ts';
export { configProxy, proxySettings } from './proxy-settings.ts';
export { withRetries } from './retries.ts';
export { checkTransportUrl, normaliseBaseUrl } from './url-policy.ts';
