// `<state_dir>/enrollment.json` (DESIGN §3 contract — enrolment): written by `enroll`
// atomically with mode 0600, read by `upload`. It holds the agent's API key, so it is never
// printed and never written anywhere else.

import { randomBytes } from 'node:crypto';
import { open, readFile, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Enrollment } from '@guard/contract/wire';
import { AgentError, describeSystemError } from '../errors.ts';
import { normaliseBaseUrl } from '../http/index.ts';
import { ensureOutputDir } from '../output-dir.ts';

export const ENROLLMENT_FILE = 'enrollment.json';
export const ENROLLMENT_FILE_MODE = 0o600;
/** An enrolment file is a few hundred bytes. */
const ENROLLMENT_MAX_BYTES = 64 * 1024;
const ENROLL_HINT = 'run guard-agent enroll --url BASE_URL --token-file FILE';
/**
 * An agent API key as the service issues it (`gak_` and 43 base64url characters) and accepts
 * it in `Authorization: Bearer`: 10 to 200 letters, digits, `_` or `-`. Checked when the key
 * is received and whenever enrollment.json is read, so a damaged file is reported as such
 * (re-enroll) instead of as the service's refusal of a header.
 */
export const API_KEY_FORM = /^[A-Za-z0-9_-]{10,200}$/;

export function enrollmentPath(stateDir: string): string {
  return join(stateDir, ENROLLMENT_FILE);
}

/** Reads and validates the enrolment; every failure is a not_enrolled AgentError (exit 1). */
export async function readEnrollment(stateDir: string): Promise<Enrollment> {
  const path = enrollmentPath(stateDir);
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR')
      throw new AgentError('not_enrolled', `this agent is not enrolled (${path} does not exist): ${ENROLL_HINT}`);
    throw new AgentError('not_enrolled', `cannot read the enrolment ${path}: ${describeSystemError(error)}`, {
      cause: error,
    });
  }
  if (bytes.length > ENROLLMENT_MAX_BYTES) throw invalid(path, `it is larger than ${ENROLLMENT_MAX_BYTES} bytes`);
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw invalid(path, 'it is not JSON');
  }
  return parseEnrollment(value, path);
}

export function parseEnrollment(value: unknown, path: string): Enrollment {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw invalid(path, 'it is not a JSON object');
  const doc = value as Record<string, unknown>;
  const field = (key: keyof Enrollment): string => {
    const v = doc[key];
    if (typeof v !== 'string' || v === '') throw invalid(path, `${key} must be a non-empty string`);
    return v;
  };
  const apiKey = field('api_key');
  // The key itself is never quoted: it is a credential.
  if (!API_KEY_FORM.test(apiKey))
    throw invalid(path, 'its api_key is malformed: not an agent key as the service issues them');
  let baseUrl: string;
  try {
    baseUrl = normaliseBaseUrl(field('base_url'), 'the enrolled base_url');
  } catch (error) {
    if (error instanceof AgentError && error.kind === 'insecure_url') throw error;
    throw invalid(path, (error as Error).message);
  }
  return {
    base_url: baseUrl,
    api_key: apiKey,
    tenant_id: field('tenant_id'),
    agent_id: field('agent_id'),
    enrolled_at: typeof doc.enrolled_at === 'string' ? doc.enrolled_at : '',
  };
}

function invalid(path: string, why: string): AgentError {
  return new AgentError('not_enrolled', `the enrolment ${path} is not valid (${why}): re-enroll: ${ENROLL_HINT}`);
}

/**
 * Writes the enrolment atomically: a temp file beside the target, opened exclusively with
 * mode 0600, written, fsynced, renamed over the target, then the directory fsynced. Readers
 * see the old file or the new one, never a part. state_dir is created (0750) when missing.
 */
export async function writeEnrollment(stateDir: string, enrollment: Enrollment): Promise<string> {
  await ensureOutputDir(stateDir);
  const target = enrollmentPath(stateDir);
  const temp = join(stateDir, `.${ENROLLMENT_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const text = `${JSON.stringify(enrollment, null, 2)}\n`;
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(temp, 'wx', ENROLLMENT_FILE_MODE);
    await handle.chmod(ENROLLMENT_FILE_MODE); // exact, whatever the umask
    await handle.writeFile(text, 'utf8');
    await handle.sync();
    await handle.close();
    handle = undefined;
    await rename(temp, target);
  } catch (error) {
    await handle?.close().catch(() => {});
    await unlink(temp).catch(() => {});
    throw new AgentError('io', `cannot write the enrolment ${target}: ${describeSystemError(error)}`, {
      cause: error,
    });
  }
  await syncDirectory(stateDir);
  return target;
}

/**
 * Checks, before the token is sent, that this user can write the enrolment: state_dir is
 * created as writeEnrollment would (0750) and a probe file is created exclusively in it and
 * removed. The service spends a use of the token and creates an agent for every accepted
 * enrolment, so a run that could not store the key must fail before it asks for one.
 */
export async function checkStateDirWritable(stateDir: string): Promise<void> {
  const advice = 'run enroll as the user the agent runs as; nothing was sent to the service';
  try {
    await ensureOutputDir(stateDir);
  } catch (error) {
    // Its message names the directory that could not be created (state_dir or a parent) and why.
    throw new AgentError('output_dir', `cannot enrol: ${(error as Error).message}: ${advice}`, { cause: error });
  }
  const probe = join(stateDir, `.${ENROLLMENT_FILE}.${process.pid}.${randomBytes(6).toString('hex')}.probe`);
  try {
    await (await open(probe, 'wx', ENROLLMENT_FILE_MODE)).close();
  } catch (error) {
    throw new AgentError(
      'output_dir',
      `cannot enrol: state_dir ${stateDir} is not writable by this user (${describeSystemError(error)}): ${advice}`,
      { cause: error },
    );
  }
  await unlink(probe).catch(() => {});
}

async function syncDirectory(dir: string): Promise<void> {
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // Some file systems refuse fsync on a directory; the rename itself is already done.
  }
}

/** The current enrolment when one is readable, for notices only; never throws. */
export async function previousEnrollment(stateDir: string): Promise<Enrollment | undefined> {
  try {
    return await readEnrollment(stateDir);
  } catch {
    return undefined;
  }
}
