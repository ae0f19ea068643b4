// Opens the configured object store: the embedded one under <data dir>/objects, or an
// S3-compatible bucket (--object-store s3://…). The S3 client is loaded only when configured,
// so the embedded deployment never pays for the AWS SDK at start-up.

import { join } from 'node:path';
import { FsObjectStore, type FsPresigning } from './fs-store.ts';
import type { ObjectStoreSetting } from './settings.ts';
import type { ObjectStore } from './store.ts';

export async function openObjectStore(
  setting: ObjectStoreSetting,
  dataDir: string,
  presigning: FsPresigning,
): Promise<ObjectStore> {
  if (setting.kind === 's3') {
    const { S3ObjectStore } = await import('./s3-store.ts');
    const { kind: _, ...location } = setting;
    return new S3ObjectStore(location);
  }
  const store = new FsObjectStore(join(dataDir, 'objects'), presigning);
  await store.init();
  return store;
}
