// A JSON POST to the service (presign, register, enrol): the agent's headers and credentials,
// retried as retries.ts says, and the body of an accepted status parsed as JSON.

import { AgentError } from '../errors.ts';
import type { HttpDeps } from './deps.ts';
import { type HttpResponse, send } from './exchange.ts';
import { excerpt, statusError } from './failures.ts';
import { type RetryOptions, withRetries } from './retries.ts';

/** POST a JSON body with the agent's credentials; returns the parsed body of an accepted status. */
export async function postJson(
  deps: HttpDeps,
  options: RetryOptions & { url: string; apiKey?: string; body: unknown; accept: (status: number) => boolean },
): Promise<{ status: number; json: unknown }> {
  const body = JSON.stringify(options.body);
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    accept: 'application/json',
    'user-agent': deps.userAgent,
  };
  if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
  return withRetries(deps, options, async () => {
    const res = await send(deps, options.url, { method: 'POST', headers, body });
    if (!options.accept(res.status)) throw await statusError(res, deps.now().getTime());
    return { status: res.status, json: parseJson(res, `${options.step}`) };
  });
}

export function parseJson(res: HttpResponse, step: string): unknown {
  try {
    return JSON.parse(res.text);
  } catch {
    throw new AgentError(
      'server',
      `${step} failed: HTTP ${res.status} with a body that is not JSON: ${excerpt(res.text)}`,
    );
  }
}
