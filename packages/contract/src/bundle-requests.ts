// Console-pushed support bundles (DESIGN §4 contract — bundle requests): the request as the
// console and support staff see it, and the agent-facing protocol `guard-agent daemon` speaks
// (heartbeat, long-poll for commands, acknowledge, report each step and the outcome). Plain
// JSON Schema typed by TypeBox's Static, as in wire.ts: the server validates and serialises
// with these, the agent checks the service's answers against them, the console is typed by them.

import type { Static } from 'typebox';
import { AgentDetectionPolicy, DetectorStatus, MAX_DETECTORS } from './detection.ts';
import { Timestamp } from './wire.ts';

/**
 * queued → delivered → collecting → uploading → done | failed | expired | interrupted.
 * `expired`: the agent never took it before expires_at; `interrupted`: the agent stopped (or
 * restarted) while working on it.
 */
export const BUNDLE_REQUEST_STATES = [
  'queued',
  'delivered',
  'collecting',
  'uploading',
  'done',
  'failed',
  'expired',
  'interrupted',
] as const;
export type BundleRequestState = (typeof BUNDLE_REQUEST_STATES)[number];

export const TERMINAL_REQUEST_STATES: readonly BundleRequestState[] = ['done', 'failed', 'expired', 'interrupted'];

/** The steps of a console-pushed bundle, as a failure names the one that failed. */
export const BUNDLE_REQUEST_STEPS = ['collect', 'presign', 'upload', 'register'] as const;
export type BundleRequestStep = (typeof BUNDLE_REQUEST_STEPS)[number];

const NullableTimestamp = { anyOf: [Timestamp, { type: 'null' }] } as const;

const ErrorInfo = {
  type: 'object',
  required: ['code', 'message'],
  properties: {
    code: { type: 'string', minLength: 1, maxLength: 64, description: 'snake_case cause' },
    message: { type: 'string', maxLength: 2000, description: 'what went wrong, for people' },
  },
} as const;

export const BundleRequest = {
  type: 'object',
  description: 'A request for a support bundle from one server (console push)',
  required: [
    'id',
    'server_id',
    'state',
    'created_at',
    'expires_at',
    'tenant_id',
    'hostname',
    'requested_by_role',
    'delivered_at',
    'acknowledged_at',
    'collecting_at',
    'uploading_at',
    'finished_at',
    'reason',
    'batch_id',
  ],
  properties: {
    id: { type: 'string' },
    server_id: { type: 'string', description: 'the agent id' },
    state: { type: 'string', enum: [...BUNDLE_REQUEST_STATES] },
    created_at: Timestamp,
    expires_at: { ...Timestamp, description: 'a request the agent has not taken by then expires' },
    bundle_id: { type: 'string', description: 'present when done' },
    error: { ...ErrorInfo, description: 'present when failed' },
    step: {
      type: 'string',
      enum: [...BUNDLE_REQUEST_STEPS],
      description: 'present when failed: the step that failed',
    },
    tenant_id: { type: 'string' },
    hostname: { type: 'string' },
    requested_by_role: { type: 'string', enum: ['admin', 'support'] },
    delivered_at: { ...NullableTimestamp, description: 'first handed to the agent' },
    acknowledged_at: { ...NullableTimestamp, description: 'the agent accepted it' },
    collecting_at: NullableTimestamp,
    uploading_at: NullableTimestamp,
    finished_at: { ...NullableTimestamp, description: 'when it became done, failed, expired or interrupted' },
    reason: {
      anyOf: [{ type: 'string' }, { type: 'null' }],
      description: 'why it expired, was interrupted or failed, in words',
    },
    trigger: {
      type: 'string',
      enum: ['manual', 'schedule_weekly', 'critical_signal'],
      description:
        "who made it: manual (a person asked), or the tenant's collection schedule: schedule_weekly, critical_signal",
    },
    signal_id: { type: 'string', description: 'trigger critical_signal: the signal that made it' },
    batch_id: {
      anyOf: [{ type: 'string' }, { type: 'null' }],
      description: 'the batch it was made in (POST /v1/bundle-batches); null for a request made alone',
    },
  },
} as const;
export type BundleRequest = Static<typeof BundleRequest>;

// --- the agent's side (guard-agent daemon; agent API key) ---------------------------------

/** POST /v1/agent/heartbeat */
export const HeartbeatRequest = {
  type: 'object',
  required: ['agent_version', 'hostname', 'uptime_seconds'],
  properties: {
    agent_version: { type: 'string', minLength: 1, maxLength: 50 },
    hostname: { type: 'string', minLength: 1, maxLength: 255 },
    uptime_seconds: { type: 'integer', minimum: 0, description: "the host's uptime" },
    agent_uptime_seconds: { type: 'integer', minimum: 0, description: 'how long the daemon has run' },
    detectors: {
      type: 'array',
      maxItems: MAX_DETECTORS,
      items: DetectorStatus,
      description: 'the state of each detector (detection); shown on the Servers page',
    },
    spool_depth: {
      type: 'integer',
      minimum: 0,
      maximum: 2_147_483_647,
      description: 'signals waiting in the spool for the service to take them',
    },
  },
  additionalProperties: false,
} as const;
export type HeartbeatRequest = Static<typeof HeartbeatRequest>;

export const HeartbeatResponse = {
  type: 'object',
  required: ['server_time', 'heartbeat_seconds', 'poll_wait_seconds'],
  properties: {
    server_time: Timestamp,
    heartbeat_seconds: { type: 'integer', minimum: 1, description: 'send the next heartbeat after this long' },
    poll_wait_seconds: { type: 'integer', minimum: 1, description: 'the longest wait a command poll is held' },
    detection: { ...AgentDetectionPolicy, description: "the tenant's detection policy (all seven types)" },
  },
} as const;
export type HeartbeatResponse = Static<typeof HeartbeatResponse>;

export const AgentCommand = {
  type: 'object',
  required: ['id', 'type', 'request_id', 'state', 'created_at', 'expires_at'],
  properties: {
    id: {
      type: 'string',
      pattern: '^[A-Za-z0-9_-]{1,128}$',
      description: 'the command id: the request id (the agent names files after it: letters, digits, _ and - only)',
    },
    type: { type: 'string', enum: ['support_bundle'] },
    request_id: { type: 'string', description: "goes into the bundle manifest's request_id" },
    state: {
      type: 'string',
      enum: [...BUNDLE_REQUEST_STATES],
      description: 'delivered for a new command; collecting or uploading for one an earlier run took',
    },
    acknowledged: { type: 'boolean' },
    created_at: Timestamp,
    expires_at: Timestamp,
  },
} as const;
export type AgentCommand = Static<typeof AgentCommand>;

/**
 * GET /v1/agent/commands?wait=SECONDS[&detection_version=V]: answered at once when there is a
 * command, or when the tenant's detection policy is not version V, else after the wait.
 */
export const CommandList = {
  type: 'object',
  required: ['commands'],
  properties: {
    commands: { type: 'array', items: AgentCommand },
    detection: { ...AgentDetectionPolicy, description: "the tenant's detection policy (all seven types)" },
  },
} as const;
export type CommandList = Static<typeof CommandList>;

/** POST /v1/agent/commands/{id}/report */
export const CommandReport = {
  type: 'object',
  required: ['state'],
  properties: {
    state: { type: 'string', enum: ['collecting', 'uploading', 'done', 'failed', 'interrupted'] },
    bundle_id: { type: 'string', minLength: 1, maxLength: 64, description: 'with done' },
    error: { ...ErrorInfo, description: 'with failed' },
    step: { type: 'string', enum: [...BUNDLE_REQUEST_STEPS], description: 'with failed' },
    reason: { type: 'string', maxLength: 2000, description: 'with interrupted (or failed): why, in words' },
  },
  additionalProperties: false,
} as const;
export type CommandReport = Static<typeof CommandReport>;

/** The answer to an acknowledgement or a report: the request's state after it. */
export const CommandState = {
  type: 'object',
  required: ['id', 'state'],
  properties: {
    id: { type: 'string' },
    state: { type: 'string', enum: [...BUNDLE_REQUEST_STATES] },
  },
} as const;
export type CommandState = Static<typeof CommandState>;
