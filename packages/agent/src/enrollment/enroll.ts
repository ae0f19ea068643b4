// Enrolment (DESIGN §3 contract — enrolment): exchange an enrolment token for the agent's
// API key at POST {base_url}/v1/agents/enroll, then persist base_url, api_key, tenant_id,
// agent_id and enrolled_at in <state_dir>/enrollment.json.

import { type Enrollment, type EnrollRequest, EnrollResponse } from '@guard/contract/wire';
import { AgentError } from '../errors.ts';
import { type HttpDeps, normaliseBaseUrl, postJson } from '../http/index.ts';
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
  const response = await parseEnrollResponse(json);
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

/**
 * The enrol answer, checked against the contract's EnrollResponse; its ids are printed and its
 * key is sent in a header and stored, so each must be printable ASCII, and the key of the form
 * upload accepts when it reads enrollment.json back.
 */
async function parseEnrollResponse(value: unknown): Promise<EnrollResponse> {
  const { firstFault } = await import('@guard/contract/schema-check');
  const fail = (why: string): never => {
    throw new AgentError('server', `${ENROLL_STEP} failed: the service's answer is not an enrolment (${why})`);
  };
  const fault = firstFault(EnrollResponse, value);
  if (fault) fail(fault.path.length === 0 ? 'not a JSON object' : `${String(fault.path[0])} is missing`);
  const doc = value as EnrollResponse;
  for (const key of ['agent_id', 'tenant_id', 'api_key'] as const) {
    if (doc[key] === '') fail(`${key} is missing`);
    if (!/^[\x21-\x7e]{1,512}$/.test(doc[key])) fail(`${key} is not printable ASCII`);
  }
  if (!API_KEY_FORM.test(doc.api_key)) fail('api_key is not an agent key');
  return { agent_id: doc.agent_id, tenant_id: doc.tenant_id, api_key: doc.api_key };
}
