// Retries of one step: run it, and on a failure another try may fix (a network error that is
// not final, 429, 5xx) wait as the pure policy of retry-policy.ts decides, then try again.
// The final failure becomes the AgentError the operator reads, naming the step.

import { AgentError } from '../errors.ts';
import type { HttpDeps } from './deps.ts';
import { describeNetworkError, HttpStatusError, isFinalNetworkError, isNetworkError } from './failures.ts';
import { decideRetry, isRetryableStatus, MAX_ATTEMPTS } from './retry-policy.ts';

export interface RetryOptions {
  /** Names the step in messages: "presign", "upload (PUT)", "register", "enrol". */
  step: string;
  /** Absolute time (ms) after which no retry is started (the presigned URL's expiry). */
  deadlineMs?: number;
  /** Appended to the final error of a 401 (how to recover). */
  unauthorizedHint?: string;
  maxAttempts?: number;
}

/**
 * Runs `attempt` until it returns, retrying on network errors and retryable statuses
 * (429, 5xx) as decideRetry says. Any other error ends the step at once: an HttpStatusError
 * becomes AgentError('server'), a network error AgentError('network'), an AgentError passes.
 */
export async function withRetries<T>(
  deps: HttpDeps,
  options: RetryOptions,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  const max = options.maxAttempts ?? MAX_ATTEMPTS;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (error) {
      let retryable: boolean;
      let what: string;
      let retryAfterMs: number | undefined;
      if (error instanceof HttpStatusError) {
        retryable = isRetryableStatus(error.status);
        what = error.describe();
        retryAfterMs = error.retryAfterMs;
      } else if (isNetworkError(error)) {
        retryable = !isFinalNetworkError(error);
        what = describeNetworkError(error);
      } else {
        throw error;
      }
      const decision = retryable
        ? decideRetry({
            attempt: n,
            random: deps.random,
            nowMs: deps.now().getTime(),
            retryAfterMs,
            deadlineMs: options.deadlineMs,
            maxAttempts: max,
          })
        : undefined;
      if (decision?.retry) {
        deps.notice(
          `${options.step}: ${what}; retrying in ${(decision.delayMs / 1000).toFixed(1)} s (attempt ${n + 1} of ${max})`,
        );
        await deps.sleep(decision.delayMs);
        continue;
      }
      const tail = decision && !decision.retry ? ` (${decision.reason})` : '';
      if (error instanceof HttpStatusError) {
        const hint = error.status === 401 && options.unauthorizedHint ? `; ${options.unauthorizedHint}` : '';
        throw new AgentError('server', `${options.step} failed: ${what}${tail}${hint}`, { cause: error });
      }
      throw new AgentError('network', `${options.step} failed: ${what}${tail}`, { cause: error });
    }
  }
}
