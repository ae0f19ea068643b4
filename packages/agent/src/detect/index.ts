// Detection in `guard-agent daemon` (docs/detection.md): what other folders may use of it.

export { AUTH_HINTS } from './auth-lines.ts';
export {
  type DetectConfig,
  Detection,
  type DetectionOptions,
  type DetectionPolicy,
  type DetectorStatus,
  type SendOutcome,
  STATUS_FILE,
} from './detection.ts';
export { DETECTION_TYPES, type DetectionType, type SignalBody } from './signals.ts';
export { readSpool, SPOOL_MAX, STORE_FILE } from './store.ts';
