// Serving the built console (packages/console/dist) at /console/ — a small handler rather than
// @fastify/static: the console needs three caching rules, a deep-link fallback and fixed
// security headers, and nothing of a general file server (ranges, directory listings, dotfiles).
//   /console/assets/*   content-hashed by the build: `public, max-age=31536000, immutable`
//   anything else       `no-cache` (revalidated with its ETag), index.html among them
//   a path with no file index.html, so deep links (/console/signals/<id>) load the app; a
//                       missing /console/assets/* file stays a 404 (a stale page must not get
//                       HTML where it asked for a script)
// A file built with a .br or .gz twin beside it is served compressed to clients that accept it.

import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Readable } from 'node:stream';

export const IMMUTABLE = 'public, max-age=31536000, immutable';
export const REVALIDATE = 'no-cache';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.webp': 'image/webp',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.txt': 'text/plain; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
};

export interface ConsoleFile {
  body: Readable;
  size: number;
  contentType: string;
  cacheControl: string;
  etag: string;
  /** `br` or `gzip` when a compressed twin is served. */
  encoding: string | undefined;
}

export type Lookup = { kind: 'file'; file: ConsoleFile } | { kind: 'not_found' } | { kind: 'not_built' };

async function regularFile(path: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(path);
    return s.isFile() ? s : undefined;
  } catch {
    return undefined;
  }
}

/** The dist-relative path of a request path under /console/, or undefined when it leaves dist. */
export function distPath(urlPath: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0')) return undefined;
  const rel = normalize(`/${decoded}`).slice(1);
  if (rel.split(sep).some((part) => part === '..' || part.startsWith('.'))) return undefined;
  return rel === '' ? 'index.html' : rel;
}

async function open(
  dir: string,
  rel: string,
  cacheControl: string,
  acceptEncoding: string,
): Promise<ConsoleFile | undefined> {
  const path = join(dir, rel);
  const plain = await regularFile(path);
  if (!plain) return undefined;
  const contentType = CONTENT_TYPES[extname(rel).toLowerCase()] ?? 'application/octet-stream';
  for (const [encoding, suffix] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const) {
    if (!acceptEncoding.includes(encoding)) continue;
    const twin = await regularFile(path + suffix);
    if (twin)
      return {
        body: createReadStream(path + suffix),
        size: twin.size,
        contentType,
        cacheControl,
        etag: `W/"${twin.size.toString(16)}-${Math.floor(twin.mtimeMs).toString(16)}-${encoding}"`,
        encoding,
      };
  }
  return {
    body: createReadStream(path),
    size: plain.size,
    contentType,
    cacheControl,
    etag: `W/"${plain.size.toString(16)}-${Math.floor(plain.mtimeMs).toString(16)}"`,
    encoding: undefined,
  };
}

/** What to answer for `urlPath` (the part after /console/). */
export async function lookup(dir: string, urlPath: string, acceptEncoding: string): Promise<Lookup> {
  if (!(await regularFile(join(dir, 'index.html')))) return { kind: 'not_built' };
  const rel = distPath(urlPath);
  if (rel === undefined) return { kind: 'not_found' };
  const isAsset = rel.startsWith(`assets${sep}`);
  const file = await open(dir, rel, isAsset ? IMMUTABLE : REVALIDATE, acceptEncoding);
  if (file) return { kind: 'file', file };
  if (isAsset) return { kind: 'not_found' };
  const index = await open(dir, 'index.html', REVALIDATE, acceptEncoding);
  return index ? { kind: 'file', file: index } : { kind: 'not_built' };
}

/** The page /console/ shows when the console was not built. */
export function notBuiltPage(dir: string): string {
  const esc = (s: string) => s.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Guard console not built</title></head>
<body>
<h1>The Guard console is not built</h1>
<p>guard-server serves the console from <code>${esc(dir)}</code>, which has no <code>index.html</code>.</p>
<p>Build it from the repository root with <code>npm run build -w packages/console</code>
(<code>npm install</code> builds it too), then reload this page. The API at <code>/v1</code> works without it.</p>
</body></html>
`;
}
