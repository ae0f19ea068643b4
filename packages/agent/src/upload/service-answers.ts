// The service's answers to presign and register, checked against the contract's schemas
// (UploadUrlResponse, RegisterResponse) and then against what the agent does with them: it
// sends the bundle to the presigned URL with the headers asked for, and prints the register
// answer's values verbatim on stdout. The schema checker is loaded with the first answer, not
// with this module: an upload checks nothing before its local check, where its RSS peaks
// (docs/decisions/0005-contract-schemas.md).

import { RegisterResponse, UploadUrlResponse } from '@guard/contract/wire';
import { AgentError } from '../errors.ts';
import { checkTransportUrl } from '../http/index.ts';
import { STEP_PRESIGN, STEP_REGISTER } from './steps.ts';

/** Headers the agent sets itself or never sends to object storage; a presign may not ask for them. */
const RESERVED_PUT_HEADERS = new Set(['authorization', 'content-length', 'transfer-encoding', 'host', 'connection']);
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
const HEADER_VALUE_BAD = /[\u0000-\u0008\u000a-\u001f\u007f]/;
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
/** A value printed verbatim on its own stdout line: printable ASCII, no spaces. */
const PRINTABLE = /^[\x21-\x7e]{1,1024}$/;

export interface Presigned {
  url: string;
  objectKey: string;
  expiresAt: string;
  headers: Record<string, string>;
}

/**
 * The presign answer, checked against the contract's UploadUrlResponse and then against what
 * the PUT will do with it: a URL it may send the bundle to, a printable object key, a
 * deadline it can compute, headers it may send. A null `headers` is read as none.
 */
export async function parsePresignResponse(value: unknown): Promise<Presigned> {
  const { fieldName, firstFault } = await import('@guard/contract/schema-check');
  const fail = (why: string): never => {
    throw new AgentError('server', `${STEP_PRESIGN} failed: unexpected answer from the service (${why})`);
  };
  const doc = isRecord(value) && value.headers === null ? { ...value, headers: undefined } : value;
  const fault = firstFault(UploadUrlResponse, doc);
  if (fault) {
    const [field] = fault.path;
    if (field === undefined) fail('not a JSON object');
    if (field === 'url') fail('url is missing');
    if (field === 'object_key') fail('object_key is missing or not printable');
    if (field === 'expires_at') fail('expires_at is not a timestamp');
    if (field === 'headers' && fault.path.length === 1) fail('headers is not an object');
    if (field === 'headers') putHeadersOf((doc as Record<string, unknown>).headers as Record<string, unknown>, fail);
    fail(`${fieldName(fault.path)} ${fault.message}`);
  }
  const answer = doc as UploadUrlResponse;
  if (answer.url === '') fail('url is missing');
  if (!PRINTABLE.test(answer.object_key)) fail('object_key is missing or not printable');
  if (Number.isNaN(Date.parse(answer.expires_at))) fail('expires_at is not a timestamp');
  const headers = putHeadersOf(answer.headers ?? {}, fail);
  // The presigned URL receives the bundle: the same transport rule as the base URL.
  checkTransportUrl(answer.url, 'the presigned upload URL');
  return { url: answer.url, objectKey: answer.object_key, expiresAt: answer.expires_at, headers };
}

/** The headers a presign asks the PUT to carry, names lowercased; `fail` names the first that may not be sent. */
function putHeadersOf(raw: Record<string, unknown>, fail: (why: string) => never): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, v] of Object.entries(raw)) {
    if (!HEADER_NAME.test(name)) fail(`header name ${JSON.stringify(name)} is not valid`);
    if (typeof v !== 'string' || HEADER_VALUE_BAD.test(v)) fail(`header ${name} has no valid string value`);
    if (RESERVED_PUT_HEADERS.has(name.toLowerCase())) fail(`it asks for a ${name} header, which the PUT never carries`);
    headers[name.toLowerCase()] = v as string;
  }
  return headers;
}

/**
 * The register answer, checked against the contract's RegisterResponse; its values are printed
 * verbatim on stdout, so each must be printable, and it must name the object uploaded.
 */
export async function parseRegisterResponse(value: unknown, objectKey: string): Promise<RegisterResponse> {
  const { firstFault } = await import('@guard/contract/schema-check');
  const fail = (why: string): never => {
    throw new AgentError('server', `${STEP_REGISTER} failed: unexpected answer from the service (${why})`);
  };
  const fault = firstFault(RegisterResponse, value);
  if (fault) {
    const [field] = fault.path;
    if (field === undefined) fail('not a JSON object');
    const text = (value as Record<string, unknown>)[String(field)];
    if (field === 'uploaded_at' && typeof text === 'string' && PRINTABLE.test(text))
      fail('uploaded_at is not an RFC 3339 timestamp');
    fail(`${String(field)} is missing or not printable`);
  }
  const doc = value as RegisterResponse;
  for (const key of ['bundle_id', 'object_key', 'uploaded_at'] as const)
    if (!PRINTABLE.test(doc[key])) fail(`${key} is missing or not printable`);
  if (!RFC3339.test(doc.uploaded_at)) fail('uploaded_at is not an RFC 3339 timestamp');
  if (doc.object_key !== objectKey) fail(`it registered ${doc.object_key}, not the uploaded ${objectKey}`);
  return { bundle_id: doc.bundle_id, object_key: doc.object_key, uploaded_at: doc.uploaded_at };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
