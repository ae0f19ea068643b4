// What the daemon and the process it starts for one bundle request (job.ts) tell each other:
// the input on the command line, then events over the IPC channel, in this order:
//   collected → uploading → done | failed   (failed may come at any point, naming the step)

import type { BundleRequestStep } from '@guard/contract/bundle-requests';

export interface JobInput {
  /** The agent config file, and whether it was named with --config (config.ts). */
  configPath: string;
  configExplicit: boolean;
  requestId: string;
  /** Where the bundle is written (collect's --out). */
  out: string;
  version: string;
}

export type JobEvent =
  | { type: 'collected'; path: string; size: number; sha256: string; collection_errors: number }
  | { type: 'uploading' }
  | { type: 'done'; bundle_id: string; object_key: string; uploaded_at: string }
  | { type: 'failed'; step: BundleRequestStep; code: string; message: string };

export function isJobEvent(value: unknown): value is JobEvent {
  const type = (value as { type?: unknown })?.type;
  return type === 'collected' || type === 'uploading' || type === 'done' || type === 'failed';
}
