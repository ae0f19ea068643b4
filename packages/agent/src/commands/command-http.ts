// The HTTP dependencies every networked command uses: keep-alive agents through the proxies
// the config file and the environment name (http/proxy-settings.ts), the agent's User-Agent, the
// real clock and sleep, retry notices on stderr (above the progress display, when there is
// one). The agents are closed when the command's work is done.

import type { AgentConfig } from '../config.ts';
import type { CommandContext } from '../context.ts';
import {
  configProxy,
  createAgents,
  destroyAgents,
  type HttpDeps,
  proxySettings,
  realSleep,
  userAgent,
} from '../http/index.ts';
import type { Progress } from '../progress.ts';

export interface CommandHttpOptions {
  /** The command's loaded config: its `proxy` keys. */
  config: AgentConfig;
  /** The command's progress display: notices are printed through it, above the bar. */
  progress?: Progress;
}

export async function withCommandHttp<T>(
  ctx: CommandContext,
  options: CommandHttpOptions,
  work: (http: HttpDeps) => Promise<T>,
): Promise<T> {
  const proxy = configProxy(options.config.effective, options.config.source);
  const agents = createAgents(proxySettings(ctx.env, proxy));
  const print = options.progress
    ? (text: string) => options.progress?.print(text)
    : (text: string) => void ctx.stderr.write(`${text}\n`);
  try {
    return await work({
      agents,
      userAgent: userAgent(ctx.version),
      now: ctx.now,
      sleep: realSleep,
      random: Math.random,
      notice: (line) => print(`guard-agent: ${line}`),
    });
  } finally {
    destroyAgents(agents);
  }
}
