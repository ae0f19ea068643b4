// Host detection (DESIGN §3 contract — detection): the seven signal types `guard-agent daemon`
// raises, each with its default severity; the tenant's detection policy (enabled, severity
// override per type) as people edit it and as the agent receives it through its command
// channel (heartbeat and command poll answers); the detector status the heartbeat reports; and
// the idempotency key a signal POST carries. Plain data and JSON Schema literals typed by
// TypeBox's Static (a type-only import): the agent imports this module and loads nothing of
// TypeBox.

import type { Static } from 'typebox';
import { Timestamp } from './wire.ts';

/** The seven detection signal types, in the order of DESIGN §3's table. */
export const DETECTION_SIGNAL_TYPE_NAMES = [
  'sudo_command_executed',
  'ssh_login_failed',
  'ssh_bruteforce',
  'ssh_login_succeeded',
  'user_created',
  'critical_file_modified',
  'exec_from_writable_dir',
] as const;
export type DetectionSignalType = (typeof DETECTION_SIGNAL_TYPE_NAMES)[number];

export interface DetectionSignalTypeInfo {
  readonly signal_type: DetectionSignalType;
  /** The severity the agent raises it with unless the tenant overrides it (1 info … 5 critical). */
  readonly default_severity: number;
  /** One line: what raises it. */
  readonly description: string;
}

/** Each detection signal type with its default severity and what raises it, in the same order. */
export const DETECTION_SIGNAL_TYPES = [
  {
    signal_type: 'sudo_command_executed',
    default_severity: 3,
    description: 'A sudo command was run (severity 4 when the command is a shell: sh, bash, dash, zsh, su).',
  },
  {
    signal_type: 'ssh_login_failed',
    default_severity: 2,
    description: 'sshd refused a login: "Failed <method> for [invalid user] U from ADDR".',
  },
  {
    signal_type: 'ssh_bruteforce',
    default_severity: 4,
    description: 'At least 10 failed SSH logins from one address within 60 s (at most one per address per 10 min).',
  },
  {
    signal_type: 'ssh_login_succeeded',
    default_severity: 1,
    description: 'sshd accepted a login: "Accepted <method> for U from ADDR".',
  },
  {
    signal_type: 'user_created',
    default_severity: 3,
    description: 'useradd created a user: "new user: name=U, …".',
  },
  {
    signal_type: 'critical_file_modified',
    default_severity: 4,
    description: "A watched file's content changed, or it appeared or disappeared (/etc/passwd, /etc/sudoers, …).",
  },
  {
    signal_type: 'exec_from_writable_dir',
    default_severity: 4,
    description: 'A process executed a file under /tmp, /var/tmp or /dev/shm.',
  },
] as const satisfies readonly DetectionSignalTypeInfo[];

export function isDetectionSignalType(value: string): value is DetectionSignalType {
  return (DETECTION_SIGNAL_TYPE_NAMES as readonly string[]).includes(value);
}

/** The detectors of the daemon, as its heartbeat reports them. */
export const DETECTOR_NAMES = ['auth_log', 'file_integrity', 'exec'] as const;
export type DetectorName = (typeof DETECTOR_NAMES)[number];
export const DETECTOR_STATES = ['running', 'failed', 'disabled'] as const;
export type DetectorState = (typeof DETECTOR_STATES)[number];

const Severity = { type: 'integer', minimum: 1, maximum: 5 } as const;

// --- the idempotency key of POST /v1/signals -------------------------------------------------

/** `Idempotency-Key` header: 1–200 characters of A–Z, a–z, 0–9, `.`, `_`, `:`, `-`. */
export const IDEMPOTENCY_KEY_PATTERN = '^[A-Za-z0-9._:-]{1,200}$';
export const IDEMPOTENCY_KEY_MAX_LENGTH = 200;

// --- the agent's side: heartbeat report and the policy it is handed --------------------------

/** One detector's state in a heartbeat (POST /v1/agent/heartbeat `detectors`). */
export const DetectorStatus = {
  type: 'object',
  required: ['name', 'state'],
  properties: {
    name: { type: 'string', enum: [...DETECTOR_NAMES] },
    state: { type: 'string', enum: [...DETECTOR_STATES] },
    reason: { type: 'string', maxLength: 500, description: 'why it failed or is disabled, in words' },
    last_event_at: { ...Timestamp, description: 'when it last turned an event into a signal' },
  },
  additionalProperties: false,
} as const;
export type DetectorStatus = Static<typeof DetectorStatus>;

export const MAX_DETECTORS = 10;

const AgentSignalTypePolicy = {
  type: 'object',
  required: ['enabled', 'severity'],
  properties: {
    enabled: { type: 'boolean', description: 'false: the agent raises no signal of this type' },
    severity: { ...Severity, description: 'the severity to raise it with: the tenant’s override, else the default' },
    overridden: {
      type: 'boolean',
      description:
        'the tenant set the severity: use it as is (else the agent may still raise sudo_command_executed for a shell with 4)',
    },
  },
} as const;

/**
 * The tenant's detection policy as the agent gets it, in every heartbeat answer and command
 * poll answer (`detection`): all seven types, severity resolved. `version` changes whenever the
 * policy changes; the poll answers at once when it differs from `detection_version=`.
 */
export const AgentDetectionPolicy = {
  type: 'object',
  required: ['version', 'signal_types'],
  properties: {
    version: { type: 'string', description: 'opaque; changes whenever the tenant changes the policy' },
    signal_types: {
      type: 'object',
      description: 'every detection signal type, by name',
      additionalProperties: AgentSignalTypePolicy,
    },
  },
} as const;
export type AgentDetectionPolicy = Static<typeof AgentDetectionPolicy>;

// --- people's side: GET and PUT /v1/detection/policy ---------------------------------------

export const DetectionPolicyEntry = {
  type: 'object',
  required: ['signal_type', 'enabled', 'severity', 'default_severity', 'description'],
  properties: {
    signal_type: { type: 'string', enum: [...DETECTION_SIGNAL_TYPE_NAMES] },
    enabled: { type: 'boolean' },
    severity: {
      anyOf: [Severity, { type: 'null' }],
      description: 'the tenant’s override; null: the default severity applies',
    },
    default_severity: Severity,
    description: { type: 'string', description: 'what raises it' },
  },
} as const;
export type DetectionPolicyEntry = Static<typeof DetectionPolicyEntry>;

export const DetectionPolicyView = {
  type: 'object',
  required: ['signal_types', 'version', 'updated_at'],
  properties: {
    signal_types: { type: 'array', items: DetectionPolicyEntry, description: 'all seven, in DESIGN §3’s order' },
    version: { type: 'string', description: 'opaque; changes whenever the policy changes' },
    updated_at: { anyOf: [Timestamp, { type: 'null' }], description: 'the last change; null: never changed' },
  },
} as const;
export type DetectionPolicyView = Static<typeof DetectionPolicyView>;

const SignalTypeChange = {
  type: 'object',
  properties: {
    enabled: { type: 'boolean' },
    severity: { anyOf: [Severity, { type: 'null' }], description: 'null: back to the default severity' },
  },
  additionalProperties: false,
} as const;

/** PUT /v1/detection/policy: only the types and fields given change. */
export const DetectionPolicyChange = {
  type: 'object',
  required: ['signal_types'],
  properties: {
    signal_types: {
      type: 'object',
      description: 'by signal type name; a name that is not one of the seven is refused (400)',
      additionalProperties: SignalTypeChange,
    },
  },
  additionalProperties: false,
} as const;
export type DetectionPolicyChange = Static<typeof DetectionPolicyChange>;
