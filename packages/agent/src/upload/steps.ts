// The upload's steps as the operator reads them: the names in messages (`presign failed: …`)
// and the labels of the progress display.

export const STEP_PRESIGN = 'presign';
export const STEP_PUT = 'upload (PUT)';
export const STEP_REGISTER = 'register';

/**
 * Progress of an upload: one bar over the bytes of its two passes over the file (the local
 * check and the PUT; both totals are known once the file is opened), labelled with the step.
 * presign and register move no bytes: their label says what is awaited.
 */
export const UPLOAD_PHASES = {
  check: '[1/4] checking the bundle',
  presign: '[2/4] requesting an upload URL',
  put: '[3/4] uploading',
  register: '[4/4] registering the upload',
} as const;
