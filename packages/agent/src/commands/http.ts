// The HTTP dependencies every networked command uses: keep-alive agents through the proxies
// the environment names, the agent's User-Agent, the real clock and sleep, retry notices on
// stderr. The agents are closed when the command's work is done.

import type { CommandContext } from '../context.ts';
import { createAgents, destroyAgents, type HttpDeps, realSleep, userAgent } from '../http-client.ts';
import { proxySettings } from '../proxy-settings.ts';

export async function withCommandHttp<T>(ctx: CommandContext, work: (http: HttpDeps) => Promise<T>): Promise<T> {
  const agents = createAgents(proxySettings(ctx.env));
  try {
    return await work({
      agents,
      userAgent: userAgent(ctx.version),
      now: ctx.now,
      sleep: realSleep,
      random: Math.random,
      notice: (line) => ctx.stderr.write(`guard-agent: ${line}\n`),
    });
  } finally {
    destroyAgents(agents);
  }
}
