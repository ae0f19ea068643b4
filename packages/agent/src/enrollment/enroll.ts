// Enrolment (DESIGN §3 contract — enrolment): exchange an enrolment token for the agent's
// API key at POST {base_url}/v1/agents/enroll, then persist base_url, api_key, tenant_id,
// agent_id and enrolled_at in <state_dir>/enrollment.json.

import type { Enrollment, EnrollRequest } from '@guard/contract';
import { AgentError } from '../errors.ts';
import { type HttpDeps, normaliseBaseUrl, postJson } from '../http-client.ts';
import { API_KEY_FORM, writeEnrollment } from './store.ts';

export const ENROLL_STEP = 'enroll';

export interface EnrollOptions {
  /** The service base URL as the operator gave it. */
  url: string;
  token: string;
  hostname: string;
  environment: string | undefined;
  agentVersion: string;
  stateDir: string;
  http: HttpDeps;
}

export interface EnrollResult {
  enrollment: Enrollment;
  path: string;
}

export async function enrollAgent(options: EnrollOptions): Promise<EnrollResult> {
  const baseUrl = normaliseBaseUrl(options.url, '--url');
  const body: EnrollRequest = {
    token: options.token,
    hostname: options.hostname.slice(0, 255),
    agent_version: options.agentVersion.slice(0, 50),
  };
  if (options.environment !== undefined && options.environment !== '')
    body.environment = options.environment.slice(0, 100);
  const { json } = await postJson(options.http, {
    step: ENROLL_STEP,
    url: `${baseUrl}/v1/agents/enroll`,
    body,
    accept: (status) => status === 200 || status === 201,
  });
  const response = parseEnrollResponse(json);
  const enrollment: Enrollment = {
    base_url: baseUrl,
    api_key: response.api_key,
    tenant_id: response.tenant_id,
    agent_id: response.agent_id,
    enrolled_at: options.http.now().toISOString(),
  };
  const path = await writeEnrollment(options.stateDir, enrollment);
  return { enrollment, path };
}

function parseEnrollResponse(value: unknown): { agent_id: string; tenant_id: string; api_key: string } {
  const fail = (why: string): never => {
    throw new AgentError('server', `${ENROLL_STEP} failed: the service's answer is not an enrolment (${why})`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not a JSON object');
  const doc = value as Record<string, unknown>;
  for (const key of ['agent_id', 'tenant_id', 'api_key'] as const) {
    const v = doc[key];
    if (typeof v !== 'string' || v === '') fail(`${key} is missing`);
    // Printed (ids) or sent in a header (key): printable ASCII without spaces only.
    if (!/^[\x21-\x7e]{1,512}$/.test(v as string)) fail(`${key} is not printable ASCII`);
  }
  // Never stored unless upload will accept it when it reads enrollment.json back.
  if (!API_KEY_FORM.test(doc.api_key as string)) fail('api_key is not an agent key');
  return { agent_id: doc.agent_id as string, tenant_id: doc.tenant_id as string, api_key: doc.api_key as string };
}
