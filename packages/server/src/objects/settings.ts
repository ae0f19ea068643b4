// The object store's settings: where bundles are kept, the embedded store under the data dir
// or an S3-compatible bucket (docs/guard-server.md, "Configuration"; DESIGN §8). Read without
// loading the store: the AWS SDK is loaded only when a bucket is configured (open-store.ts).

import { ConfigError, type SettingRow, settingName } from '../kernel/settings.ts';

/** An S3-compatible bucket, from `--object-store s3://BUCKET?…`. */
export interface S3Location {
  bucket: string;
  /** An S3-compatible server's URL; undefined: AWS S3 of the region. */
  endpoint: string | undefined;
  /** undefined: the AWS SDK's default chain (AWS_REGION, the shared config file). */
  region: string | undefined;
  /** Bucket in the path (http://host/bucket/key) rather than the host name. */
  pathStyle: boolean;
}

export type ObjectStoreSetting = { kind: 'fs' } | ({ kind: 's3' } & S3Location);

/** The object store's rows of the settings table. */
export const OBJECT_STORE_SETTINGS = [
  { key: 'objectStore', flag: 'object-store', env: 'GUARD_SERVER_OBJECT_STORE', file: 'object_store', default: '' },
] as const satisfies readonly SettingRow[];

const S3_PARAMS = new Set(['endpoint', 'region', 'path_style']);
/** S3's bucket naming rules (lowercase, digits, dots and hyphens; 3 to 63 characters). */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `--object-store`: empty for the embedded store, or `s3://BUCKET?endpoint=URL&region=NAME&path_style=1`
 * (DESIGN §8). Credentials never go in the URL: they come from the AWS SDK's default chain.
 */
export function parseObjectStore(text: string): ObjectStoreSetting {
  if (text === '') return { kind: 'fs' };
  const fail = (why: string): never => {
    throw new ConfigError(`${settingName(OBJECT_STORE_SETTINGS[0])} ${why}, got "${text}"`);
  };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return fail('must be empty (the embedded store) or s3://BUCKET?endpoint=…&region=…&path_style=1');
  }
  if (url.protocol !== 's3:') fail('must be an s3:// URL (or empty for the embedded store)');
  if (url.username || url.password)
    fail('must not carry credentials: they come from the AWS SDK default chain (AWS_ACCESS_KEY_ID, …)');
  if (!BUCKET_NAME.test(url.hostname)) fail('must name a valid bucket (s3://BUCKET)');
  if (url.pathname !== '' && url.pathname !== '/') fail('takes no path after the bucket');
  for (const name of url.searchParams.keys())
    if (!S3_PARAMS.has(name)) fail(`has an unknown parameter "${name}" (known: ${[...S3_PARAMS].join(', ')})`);
  const endpoint = url.searchParams.get('endpoint') ?? undefined;
  if (endpoint !== undefined) {
    let e: URL | undefined;
    try {
      e = new URL(endpoint);
    } catch {
      e = undefined;
    }
    if (!e || !['http:', 'https:'].includes(e.protocol) || e.username || e.search)
      fail('needs endpoint= to be an http(s) URL without credentials or query');
  }
  const pathStyle = url.searchParams.get('path_style') ?? '0';
  if (!['0', '1', 'true', 'false'].includes(pathStyle)) fail('needs path_style= to be 1 or 0');
  return {
    kind: 's3',
    bucket: url.hostname,
    endpoint: endpoint?.replace(/\/+$/, ''),
    region: url.searchParams.get('region') || undefined,
    pathStyle: pathStyle === '1' || pathStyle === 'true',
  };
}
