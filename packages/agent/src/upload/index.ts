// Sending a bundle to Guard support (`support-bundle upload`): the local check, then presign,
// PUT to the presigned URL, register. What other folders may use of it:

export { UPLOAD_PHASES } from './steps.ts';
export { type UploadOptions, uploadBundle } from './upload-bundle.ts';
