import type { AgentConfig } from './config.ts';
import type { Progress } from './progress.ts';

/** What a command may touch: its IO, clock and config are handed in, never reached for. */
export interface CommandContext {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  cwd: string;
  version: string;
  now: () => Date;
  loadConfig: () => Promise<AgentConfig>;
  progress: () => Progress;
}
