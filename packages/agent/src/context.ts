import type { AgentConfig, LoadConfigOptions } from './config.ts';
import type { Progress } from './progress.ts';

/** What a command may touch: its IO, clock and config are handed in, never reached for. */
export interface CommandContext {
  /** Standard input, created on first use (only `enroll --token -` reads it). */
  stdin: () => NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  cwd: string;
  /** The process environment; commands read only the proxy variables from it (http/proxy-settings.ts). */
  env: Readonly<Record<string, string | undefined>>;
  version: string;
  now: () => Date;
  loadConfig: (options?: LoadConfigOptions) => Promise<AgentConfig>;
  /** The config file --config names (or the default), and whether --config was given. */
  configPath: string;
  configExplicit: boolean;
  progress: () => Progress;
}
