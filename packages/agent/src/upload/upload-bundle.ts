// `support-bundle upload` (spec 4.1, 4.2, 5; DESIGN §3 contract — upload output, §4):
//   0. local checks, before any network call: the file is a readable regular file; every
//      member matches the manifest (verifyBundle); the file's size and SHA-256 are computed
//      from disk (the caller has read the enrolment, whose base_url is acceptable);
//   1. presign:      POST {base_url}/v1/support/bundle/upload-url (Bearer API key);
//   2. upload (PUT): the file, streamed with an exact Content-Length, the presign's headers,
//      and never an Authorization header;
//   3. register:     POST {base_url}/v1/support/bundle/register (Bearer API key).
// Each step is retried on connection errors, 429 and 5xx (http/retries.ts); the PUT only while
// the presigned URL is valid, re-reading the file from the start each time. The local file is
// only ever opened for reading.

import { createHash } from 'node:crypto';
import { open } from 'node:fs/promises';
import type { BundleManifest } from '@guard/contract/manifest';
import type { Enrollment, RegisterRequest, RegisterResponse, UploadUrlRequest } from '@guard/contract/wire';
import { verifyBundle } from '../bundle/index.ts';
import { AgentError, describeSystemError } from '../errors.ts';
import { readChunks } from '../file-chunks.ts';
import { type BodyWriter, type HttpDeps, postJson, send, statusError, withRetries } from '../http/index.ts';
import type { Progress } from '../progress.ts';
import { type Presigned, parsePresignResponse, parseRegisterResponse } from './service-answers.ts';
import { STEP_PRESIGN, STEP_PUT, STEP_REGISTER, UPLOAD_PHASES } from './steps.ts';

/**
 * The PUT reads the file into PUT_BUFFERS reused buffers of PUT_CHUNK_BYTES and hands each to
 * the socket as it is: the next chunk is read while the previous ones are being sent.
 */
const PUT_CHUNK_BYTES = 1024 * 1024;
const PUT_BUFFERS = 2;
const REENROLL_HINT = 'the service refused the agent API key: re-enroll with guard-agent enroll';

export interface UploadOptions {
  /** The bundle file (absolute, or relative to the process's cwd). */
  path: string;
  /** Where to and as whom: the agent's enrolment (enrollment.json, already validated). */
  enrollment: Pick<Enrollment, 'base_url' | 'api_key'>;
  http: HttpDeps;
  /** The display of the whole upload (SILENT_PROGRESS off a terminal); done() is the caller's. */
  progress: Progress;
}

export interface LocalBundle {
  manifest: BundleManifest;
  size: number;
  sha256: string;
}

export async function uploadBundle(options: UploadOptions): Promise<RegisterResponse> {
  const { progress, enrollment } = options;
  const local = await inspectBundle(options.path, progress);
  const base = enrollment.base_url;
  progress.phase(UPLOAD_PHASES.presign);
  const presigned = await presign(options.http, base, enrollment.api_key, options.path, local);
  await putBundle(options.http, options.path, local.size, presigned, progress);
  progress.phase(UPLOAD_PHASES.register);
  return register(options.http, base, enrollment.api_key, presigned.objectKey, local);
}

// ---------------------------------------------------------------------------------------
// 0. Local checks

/**
 * Checks the bundle before anything is sent: a readable regular file, every member against
 * the manifest; and computes the whole file's size and SHA-256 from disk, streaming. The
 * progress total grows by twice the file's size: this pass, and the PUT's.
 */
export async function inspectBundle(path: string, progress: Progress): Promise<LocalBundle> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const what = code === 'ENOENT' ? 'does not exist' : `cannot be read: ${describeSystemError(error)}`;
    throw new AgentError('bundle', `bundle file ${path} ${what}`, { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new AgentError('bundle', `bundle file ${path} is not a regular file`);
    if (stat.size === 0) throw new AgentError('bundle', `bundle file ${path} is empty`);
    progress.grow(2 * stat.size);
    progress.phase(UPLOAD_PHASES.check);
    // One read: the archive check sees the same bytes the whole-file SHA-256 is computed over.
    const hash = createHash('sha256');
    let size = 0;
    const manifest = await verifyBundle(path, (chunk) => {
      hash.update(chunk);
      size += chunk.length;
      progress.advance(chunk.length);
    });
    if (size !== stat.size) throw new AgentError('bundle', `bundle file ${path} changed while it was being checked`);
    return { manifest, size, sha256: hash.digest('hex') };
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError('bundle', `cannot read bundle file ${path}: ${describeSystemError(error)}`, {
      cause: error,
    });
  } finally {
    await handle.close();
  }
}

// ---------------------------------------------------------------------------------------
// 1. presign

export async function presign(
  http: HttpDeps,
  base: string,
  apiKey: string,
  path: string,
  local: LocalBundle,
): Promise<Presigned> {
  const body: UploadUrlRequest = { filename: bundleFilename(path), size: local.size, sha256: local.sha256 };
  const { json } = await postJson(http, {
    step: STEP_PRESIGN,
    url: `${base}/v1/support/bundle/upload-url`,
    apiKey,
    body,
    accept: (status) => status === 200 || status === 201,
    unauthorizedHint: REENROLL_HINT,
  });
  return parsePresignResponse(json);
}

/** The file's base name as the service wants it (no slashes or NULs, at most 255 characters). */
export function bundleFilename(path: string): string {
  const name = path.split('/').pop() || 'bundle.tar.zst';
  return name.replaceAll('\\', '_').replaceAll('\0', '_').slice(-255);
}

// ---------------------------------------------------------------------------------------
// 2. upload (PUT)

/** The PUT's headers: the presign's, an exact Content-Length, a User-Agent; no Authorization. */
export function putHeaders(presigned: Presigned, size: number, userAgent: string): Record<string, string> {
  const headers: Record<string, string> = { 'user-agent': userAgent, ...presigned.headers };
  headers['content-type'] ??= 'application/octet-stream';
  headers['content-length'] = String(size);
  return headers;
}

export async function putBundle(
  http: HttpDeps,
  path: string,
  size: number,
  presigned: Presigned,
  progress: Progress,
): Promise<void> {
  const headers = putHeaders(presigned, size, http.userAgent);
  const deadlineMs = Date.parse(presigned.expiresAt);
  let sent = 0; // by the current try
  const onSent = (bytes: number) => {
    sent += bytes;
    progress.advance(bytes);
  };
  await withRetries(http, { step: STEP_PUT, deadlineMs }, async (attempt) => {
    // A retry sends the file from its first byte: what the failed try had sent is work again.
    progress.grow(sent);
    sent = 0;
    progress.phase(attempt > 1 ? `${UPLOAD_PHASES.put} (attempt ${attempt})` : UPLOAD_PHASES.put);
    const res = await send(http, presigned.url, { method: 'PUT', headers, body: fileBody(path, size, onSent) });
    if (res.status < 200 || res.status > 299) throw await statusError(res, http.now().getTime());
  });
}

/**
 * The PUT's body: the file's first `size` bytes, re-opened for every try (a retry sends the
 * whole file from its first byte). A read failure, or a file now shorter than `size`, fails
 * the step as a bundle error (not retried).
 */
function fileBody(path: string, size: number, onSent: (bytes: number) => void): BodyWriter {
  const unreadable = (error: unknown) =>
    new AgentError('bundle', `cannot read bundle file ${path} during the upload: ${describeSystemError(error)}`, {
      cause: error,
    });
  return async (write) => {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, 'r');
    } catch (error) {
      throw unreadable(error);
    }
    try {
      const sent = await readChunks(
        handle,
        { chunkBytes: PUT_CHUNK_BYTES, buffers: PUT_BUFFERS, limit: size, readError: unreadable },
        async (chunk) => {
          await write(chunk);
          onSent(chunk.length);
        },
      );
      if (sent !== size)
        throw new AgentError('bundle', `bundle file ${path} changed during the upload: it is now ${sent} bytes`);
    } finally {
      await handle.close();
    }
  };
}

// ---------------------------------------------------------------------------------------
// 3. register

export async function register(
  http: HttpDeps,
  base: string,
  apiKey: string,
  objectKey: string,
  local: LocalBundle,
): Promise<RegisterResponse> {
  const body: RegisterRequest = {
    object_key: objectKey,
    sha256: local.sha256,
    size: local.size,
    manifest: local.manifest as unknown as Record<string, unknown>,
  };
  const { json } = await postJson(http, {
    step: STEP_REGISTER,
    url: `${base}/v1/support/bundle/register`,
    apiKey,
    body,
    accept: (status) => status === 200 || status === 201,
    unauthorizedHint: REENROLL_HINT,
  });
  return parseRegisterResponse(json, objectKey);
}
