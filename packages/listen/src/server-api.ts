// The two calls the CLI makes to guard-server, and what their failures mean to a person at a
// terminal: GET /v1/webhooks/listen (the stream) and POST /v1/webhooks/listen/trigger. The
// token goes in `Authorization: Bearer`, never in a URL.

import { ListenError } from './errors.ts';

export const LISTEN_PATH = 'v1/webhooks/listen';
export const TRIGGER_PATH = 'v1/webhooks/listen/trigger';

/** A refusal the session may wait out (429, 5xx) once it has been connected. */
export class ServerAnswerError extends ListenError {
  readonly status: number;
  readonly retryAfterMs: number | undefined;
  constructor(kind: ListenError['kind'], status: number, message: string, retryAfterMs?: number) {
    super(kind, message);
    this.status = status;
    this.retryAfterMs = retryAfterMs;
  }

  get transient(): boolean {
    return this.status === 429 || this.status >= 500;
  }
}

/** --url: the server's base URL (http or https, a path prefix allowed, no credentials in it). */
export function parseServerUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ListenError(
      'usage',
      `--url ${JSON.stringify(text)} is not a URL (for example https://guard.example.com)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ListenError(
      'usage',
      `--url must be an http:// or https:// URL (for example https://guard.example.com), not ${JSON.stringify(text)}`,
    );
  if (url.username || url.password)
    throw new ListenError('usage', '--url must not hold credentials: pass the token with --token or GUARD_TOKEN');
  if (url.search || url.hash) throw new ListenError('usage', '--url takes the base URL only, without ? or #');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

/** --forward-to: where each event is POSTed (http or https; any host the machine reaches). */
export function parseForwardUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ListenError(
      'usage',
      `--forward-to ${JSON.stringify(text)} is not a URL (for example http://localhost:3000/webhook)`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:')
    throw new ListenError(
      'usage',
      `--forward-to must be an http:// or https:// URL (for example http://localhost:3000/webhook), not ${JSON.stringify(text)}`,
    );
  return url;
}

/** System error codes of a TLS handshake that did not trust the server. */
const TLS_CODES =
  /^(DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT(_LOCALLY)?|CERT_HAS_EXPIRED|CERT_NOT_YET_VALID|ERR_TLS_CERT_ALTNAME_INVALID)$/;

/** The code and text of a failed fetch's cause ("ECONNREFUSED", …), looking through its wrappers. */
export function networkCause(error: unknown): { code: string | undefined; message: string } {
  let e: unknown = error;
  for (let depth = 0; depth < 5 && e; depth++) {
    const x = e as { code?: unknown; message?: unknown; cause?: unknown; errors?: unknown };
    if (typeof x.code === 'string') return { code: x.code, message: String(x.message ?? x.code) };
    if (Array.isArray(x.errors) && x.errors.length > 0) e = x.errors[0];
    else e = x.cause;
  }
  return { code: undefined, message: error instanceof Error ? error.message : String(error) };
}

/** A failed fetch to the server as the person at the terminal should read it. */
export function unreachable(base: URL, error: unknown): ListenError {
  const { code, message } = networkCause(error);
  const hint =
    code !== undefined && TLS_CODES.test(code)
      ? " (the server's certificate is not trusted here: give its CA with NODE_EXTRA_CA_CERTS=/path/to/ca.pem)"
      : '';
  return new ListenError('unreachable', `cannot reach ${base.origin}: ${code ? `${code} ` : ''}${message}${hint}`);
}

async function errorMessage(res: Response): Promise<{ code: string | undefined; message: string }> {
  const text = await res.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.message === 'string')
      return { code: typeof body.error.code === 'string' ? body.error.code : undefined, message: body.error.message };
  } catch {
    // not the API's error shape
  }
  return { code: undefined, message: text.slice(0, 200) || res.statusText };
}

/** A non-2xx answer as a typed error: 401/403 auth, 400 usage, the rest server. */
export async function refusal(res: Response, what: string): Promise<ServerAnswerError> {
  const { code, message } = await errorMessage(res);
  const said = `${res.status}${code ? ` ${code}` : ''}: ${message}`;
  const retryAfter = Number(res.headers.get('retry-after'));
  const retryAfterMs = Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : undefined;
  if (res.status === 401)
    return new ServerAnswerError(
      'auth',
      401,
      `the server refused the token (${said}); give a user API token (gut_…) of an admin of the tenant`,
    );
  if (res.status === 403)
    return new ServerAnswerError('auth', 403, `the token may not ${what} (${said}); it needs an admin of a tenant`);
  if (res.status === 400) return new ServerAnswerError('usage', 400, `the server refused the request (${said})`);
  if (res.status === 404)
    return new ServerAnswerError(
      'server',
      404,
      `the server has no ${what} route (${said}): is --url a Guard server with guard listen?`,
    );
  return new ServerAnswerError('server', res.status, `the server answered ${said}`, retryAfterMs);
}

export interface StreamRequest {
  base: URL;
  token: string;
  events: readonly string[] | undefined;
  lastEventId: string | undefined;
  signal: AbortSignal;
}

/** Opens the stream: its body once the server answered 200 with text/event-stream. */
export async function openStream(r: StreamRequest): Promise<ReadableStream<Uint8Array>> {
  const url = new URL(LISTEN_PATH, r.base);
  if (r.events) url.searchParams.set('events', r.events.join(','));
  const headers: Record<string, string> = { authorization: `Bearer ${r.token}`, accept: 'text/event-stream' };
  if (r.lastEventId) headers['last-event-id'] = r.lastEventId;
  let res: Response;
  try {
    res = await fetch(url, { headers, signal: r.signal, redirect: 'manual' });
  } catch (error) {
    if (r.signal.aborted) throw error;
    throw unreachable(r.base, error);
  }
  if (res.status !== 200) throw await refusal(res, 'listen');
  const type = res.headers.get('content-type') ?? '';
  if (!type.startsWith('text/event-stream') || !res.body) {
    await res.body?.cancel();
    throw new ServerAnswerError(
      'server',
      200,
      `the server answered ${type || 'no content type'}, not an event stream: is --url a Guard server?`,
    );
  }
  return res.body;
}

export interface TriggerRequest {
  base: URL;
  token: string;
  body: { event_type: string; signal_type?: string; severity?: number; description?: string };
}

/** POST /v1/webhooks/listen/trigger: the event made. */
export async function triggerEvent(r: TriggerRequest): Promise<{ signal_id: string; event_type: string }> {
  let res: Response;
  try {
    res = await fetch(new URL(TRIGGER_PATH, r.base), {
      method: 'POST',
      headers: { authorization: `Bearer ${r.token}`, 'content-type': 'application/json' },
      body: JSON.stringify(r.body),
      redirect: 'manual',
    });
  } catch (error) {
    throw unreachable(r.base, error);
  }
  if (res.status !== 201) throw await refusal(res, 'trigger events');
  return (await res.json()) as { signal_id: string; event_type: string };
}
