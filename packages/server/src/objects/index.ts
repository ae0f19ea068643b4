// Object storage for bundles: the store (interface; filesystem and S3 implementations),
// presigned PUT URLs (the filesystem store's are served by guard-server itself, routes.ts; the
// S3 store's are S3's own), the upload slots they grant and the sweep of expired ones.
export { FsObjectStore } from './fs-store.ts';
export { collectExpiredUploads } from './gc.ts';
export { openObjectStore } from './open-store.ts';
export { objectRoutes } from './routes.ts';
export type { ObjectStoreSetting, S3Location } from './settings.ts';
export type { ObjectExpectation, ObjectStore, PresignedPut, UploadGrant } from './store.ts';
export { UploadsRepository } from './uploads-repository.ts';
