// What every exchange of the agent is handed: the connection pools (one keep-alive Agent per
// scheme, through the proxies proxy-settings.ts names), the User-Agent, and the clock, sleep,
// randomness and diagnostic sink, so that retries and timeouts are testable.

import type * as HttpModule from 'node:http';
import { AgentError } from '../errors.ts';
import type { ProxySettings } from './proxy-settings.ts';

// Not `import http from 'node:http'`: the ESM facade of node:http reads every export, and its
// lazy WebSocket/EventSource getters then load node's bundled undici (+9.5 MiB of RSS).
const http = process.getBuiltinModule('node:http');
const https = process.getBuiltinModule('node:https');

/** The connection pools of every agent request, one per scheme. */
export interface HttpAgents {
  http: HttpModule.Agent;
  https: HttpModule.Agent;
}

export interface HttpDeps {
  agents: HttpAgents;
  userAgent: string;
  now: () => Date;
  sleep: (ms: number) => Promise<void>;
  random: () => number;
  /** Diagnostics (retry notices) for people; never parsed. */
  notice: (line: string) => void;
}

/**
 * Keep-alive agents (presign, PUT and register share a connection when they can) that go
 * through the proxies `proxy` names: an https:// URL through a CONNECT tunnel (TLS end to end
 * inside it), an http:// URL (loopback only, checkTransportUrl) forwarded in absolute form.
 */
export function createAgents(proxy: ProxySettings): HttpAgents {
  try {
    return {
      http: new http.Agent({ keepAlive: true, proxyEnv: { ...proxy } }),
      https: new https.Agent({ keepAlive: true, proxyEnv: { ...proxy } }),
    };
  } catch (error) {
    throw new AgentError('usage', `the proxy setting is not valid: ${(error as Error).message}`, { cause: error });
  }
}

export function destroyAgents(agents: HttpAgents): void {
  agents.http.destroy();
  agents.https.destroy();
}

export function userAgent(version: string): string {
  return `guard-agent/${version}`;
}

export function realSleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
