// Reading the enrolment token: from a file (--token-file FILE) or from standard input
// (--token -), never from the command line itself, where `ps` and shell history would show it.

import { open } from 'node:fs/promises';
import { AgentError, describeSystemError } from '../errors.ts';

/** The service accepts tokens of at most 200 characters (EnrollRequest.token). */
export const TOKEN_MAX_CHARS = 200;
/** Read no more than this from a token source: a token file is one short line. */
const READ_LIMIT_BYTES = 4096;

export type TokenSource = { kind: 'file'; path: string } | { kind: 'stdin' };

export async function readToken(source: TokenSource, stdin: NodeJS.ReadableStream): Promise<string> {
  const from = source.kind === 'file' ? `token file ${source.path}` : 'standard input';
  const raw = source.kind === 'file' ? await readTokenFile(source.path) : await readStream(stdin);
  const token = raw.trim();
  if (token === '') throw new AgentError('usage', `the enrolment token from ${from} is empty`);
  if (token.length > TOKEN_MAX_CHARS)
    throw new AgentError(
      'usage',
      `the enrolment token from ${from} is longer than ${TOKEN_MAX_CHARS} characters: is this the right file?`,
    );
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing them is the point
  if (/[\u0000-\u001f\u007f\s]/.test(token))
    throw new AgentError('usage', `the enrolment token from ${from} contains spaces or control characters`);
  return token;
}

async function readTokenFile(path: string): Promise<string> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    throw new AgentError('usage', `cannot read token file ${path}: ${describeSystemError(error)}`, { cause: error });
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new AgentError('usage', `token file ${path} is not a regular file`);
    const buffer = Buffer.alloc(READ_LIMIT_BYTES + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch (error) {
    if (error instanceof AgentError) throw error;
    throw new AgentError('usage', `cannot read token file ${path}: ${describeSystemError(error)}`, { cause: error });
  } finally {
    await handle.close();
  }
}

async function readStream(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    chunks.push(b);
    size += b.length;
    if (size > READ_LIMIT_BYTES) break;
  }
  return Buffer.concat(chunks).toString('utf8');
}
