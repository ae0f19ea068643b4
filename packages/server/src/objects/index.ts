// Object storage for bundles: the store (interface; filesystem implementation), presigned PUT
// URLs served by guard-server, the upload slots they grant and the sweep of expired ones.
export { FsObjectStore } from './fs-store.ts';
export { collectExpiredUploads } from './gc.ts';
export { presignedUrl } from './presign.ts';
export { objectRoutes } from './routes.ts';
export type { ObjectExpectation, ObjectStore } from './store.ts';
export { UploadsRepository } from './uploads-repository.ts';
