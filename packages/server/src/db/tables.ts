import type { Generated } from 'kysely';

// One interface per table. Timestamps are RFC 3339 UTC strings; ids are prefixed random ids.

export type Role = 'admin' | 'member' | 'support';

export interface TenantTable {
  id: string;
  name: string;
  created_at: string;
  /** 1 when the tenant's admins let vendor support staff request bundles from its servers. */
  allow_support_collection: Generated<number>;
  /** Days the tenant's delivery log is kept; null: the server's default (--delivery-retention-days). */
  delivery_retention_days?: number | null;
  /** Days the tenant keeps its support bundles; null: the default (support/retention.ts). */
  bundle_retention_days?: number | null;
  /** 1: users who sign in with a password must set up a second factor before anything else (DESIGN §6). */
  require_mfa: Generated<number>;
  /** 1: the tenant's users sign in through its SSO; passwords only for admins holding TOTP (break-glass). */
  sso_only: Generated<number>;
}

export interface UserTable {
  id: string;
  /** null for vendor support staff, who belong to no tenant. */
  tenant_id: string | null;
  email: string;
  role: Role;
  /** `scrypt$…`, or `!` for a user who has not set a password yet (no password matches it). */
  password_hash: string;
  created_at: string;
  last_login_at: string | null;
  /** The TOTP secret (base32), sealed under the master key; null: no second factor. */
  totp_secret_sealed?: string | null;
  /** A TOTP secret being set up, sealed, until a code confirms it. */
  totp_pending_sealed?: string | null;
  totp_enabled_at?: string | null;
  /** The 30 s step of the last code accepted: a code (or an earlier one) is never taken twice. */
  totp_last_step?: number | null;
  /** SCIM's externalId (the identity provider's id of the user). */
  external_id?: string | null;
  display_name?: string | null;
  /** Set when the user was deactivated (SCIM `active: false`): no sign-in, no session, no token. */
  deactivated_at?: string | null;
}

export interface ApiTokenTable {
  id: string;
  user_id: string;
  token_hash: string;
  name: string;
  created_at: string;
  revoked_at: string | null;
  /** JSON array of scopes (auth/scopes.ts); null: everything the user's role may do. */
  scopes?: string | null;
  /** null: never expires. */
  expires_at?: string | null;
  /** Written when it authenticates, at most once a minute. */
  last_used_at?: string | null;
}

export interface EnrollmentTokenTable {
  id: string;
  tenant_id: string;
  token_hash: string;
  expires_at: string;
  max_uses: number;
  uses: number;
  revoked_at: string | null;
  created_at: string;
}

export interface AgentTable {
  id: string;
  tenant_id: string;
  api_key_hash: string;
  hostname: string;
  environment: string;
  agent_version: string;
  enrolled_at: string;
  revoked_at: string | null;
  /** Written when its key authenticates, at most once a minute (auth/principal.ts). */
  last_seen_at: string | null;
  /** The host's uptime at the last heartbeat of `guard-agent daemon`. */
  uptime_seconds: number | null;
  /** How long the daemon had run at its last heartbeat. */
  agent_uptime_seconds: number | null;
  /** The last heartbeat of `guard-agent daemon` (which also updates hostname and agent_version). */
  last_heartbeat_at: string | null;
  /** The detectors' states at the last heartbeat (JSON: contract DetectorStatus[]); null: not reported. */
  detectors?: string | null;
  /** Signals waiting in the daemon's spool at the last heartbeat; null: not reported. */
  spool_depth?: number | null;
}

export type UploadState = 'presigned' | 'stored' | 'registered';

/** A presigned upload slot; the object exists only once state is 'stored' or later. */
export interface UploadTable {
  object_key: string;
  tenant_id: string;
  agent_id: string;
  filename: string;
  size: number;
  sha256: string;
  expires_at: string;
  state: UploadState;
  created_at: string;
}

export interface BundleTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  object_key: string;
  filename: string;
  size: number;
  sha256: string;
  manifest: string;
  uploaded_at: string;
  /** Set when the bundle was deleted (migration 0019): its row stays as the record of it. */
  deleted_at?: string | null;
  /** The admin's user id, or `retention`. */
  deleted_by?: string | null;
  deleted_reason?: 'admin' | 'retention' | null;
  /** The store confirmed the object's deletion; null on a deleted bundle: the sweep tries again. */
  object_removed_at?: string | null;
}

export type BundleRequestState =
  | 'queued'
  | 'delivered'
  | 'collecting'
  | 'uploading'
  | 'done'
  | 'failed'
  | 'expired'
  | 'interrupted';

/** A console push: support staff or an admin ask one server (agent) for a bundle. */
export interface BundleRequestTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  state: BundleRequestState;
  requested_by: string;
  requested_by_role: 'admin' | 'support';
  created_at: string;
  expires_at: string;
  /** First handed to the agent by a command poll. */
  delivered_at: string | null;
  /** How many polls handed it out (a lost answer is handed out again until acknowledged). */
  deliveries: number;
  acknowledged_at: string | null;
  collecting_at: string | null;
  uploading_at: string | null;
  finished_at: string | null;
  bundle_id: string | null;
  error_code: string | null;
  error_message: string | null;
  error_step: string | null;
  reason: string | null;
  /** The batch it was made in (bundle_batches); null for a request made alone. */
  batch_id?: string | null;
  /** Made by the tenant's collection schedule: `schedule_weekly` or `critical_signal`; null: asked by a person. */
  trigger?: string | null;
  /** The critical signal that made it (trigger `critical_signal`). */
  signal_id?: string | null;
}

/** A tenant's collection_schedule setting (collection-schedule/); no row: none. */
export interface CollectionScheduleTable {
  tenant_id: string;
  /** 1: the weekly part is on (it keeps its weekday and hour while off). */
  weekly_enabled: number;
  /** monday … sunday; null: no weekly part. */
  weekly_weekday: string | null;
  /** 0–23, UTC. */
  weekly_hour: number | null;
  /** The weekly slot (RFC 3339) last fired, or passed over when the part was set. */
  weekly_last_slot: string | null;
  critical_enabled: number;
  /** null: no critical-signal part. */
  critical_min_interval_hours: number | null;
  updated_at: string;
  /** The admin's user id. */
  updated_by: string;
}

/** Bundle requests made together for many servers (fleets), one per server. */
export interface BundleBatchTable {
  id: string;
  tenant_id: string;
  /** The user's id. */
  created_by: string;
  created_by_role: 'admin' | 'support';
  created_at: string;
  /** The filter that chose the servers (JSON); null when the batch named them. */
  filter: string | null;
  /** The servers skipped, with the reason (JSON: [{server_id, hostname, reason, detail}]). */
  skipped: string;
}

export type InsightJobState = 'pending' | 'running' | 'done' | 'failed';

/** The analysis of one bundle: queued at register, claimed with a lease, its findings kept. */
export interface BundleInsightTable {
  bundle_id: string;
  tenant_id: string;
  agent_id: string;
  state: InsightJobState;
  attempts: number;
  lease_until: string | null;
  /** When its analysis last started: tenants are taken in turn by it (migration 0014). */
  claimed_at: string | null;
  created_at: string;
  finished_at: string | null;
  /** JSON array of findings (contract Finding). */
  findings: string | null;
  /** JSON: what the next bundle of the same server is compared with (insights/summary.ts). */
  summary: string | null;
}

export interface AuditTable {
  id: string;
  at: string;
  actor_id: string;
  actor_role: string;
  tenant_id: string | null;
  action: string;
  target: string;
}

export interface SignalTable {
  id: string;
  tenant_id: string;
  agent_id: string | null;
  server_id: string;
  server_name: string;
  signal_type: string;
  severity: number;
  description: string;
  identity_id: string;
  identity_name: string;
  environment: string;
  created_at: string;
  received_at: string;
  /**
   * 1 for a synthetic row, left out of the signal list: an endpoint's "send test event", or an
   * operational event (event_type other than signal_created).
   */
  is_test: number;
  /** The W3C traceparent its deliveries carry (the agent's, or the ingest span's); null: none. */
  traceparent?: string | null;
  /** When its payload (description, identity) was erased on request; null: never. */
  erased_at?: string | null;
  /** What the row's deliveries announce (Guard-Event): signal_created, endpoint.failing, endpoint.disabled. */
  event_type: string;
  /** An operational event's `data`, as JSON, frozen when it happened; null for signals. */
  event_data: string | null;
  /** The agent's Idempotency-Key: unique per agent (a retried POST answers this signal); null: none. */
  idempotency_key?: string | null;
}

/** A tenant's detection policy; a tenant without a row has the defaults (every type on, default severities). */
export interface DetectionPolicyTable {
  tenant_id: string;
  /** JSON: {"<signal type>": {"enabled": boolean, "severity": 1..5 | null}} for the types changed from the default. */
  signal_types: string;
  /** Bumped by every change: the policy's version. */
  revision: number;
  updated_at: string;
}

export interface WebhookEndpointTable {
  id: string;
  tenant_id: string;
  name: string;
  url: string;
  /**
   * Custom headers (name → value), AES-256-GCM sealed like the secret (endpoint-headers.ts);
   * rows an earlier release wrote hold the JSON object in clear until the next start seals them.
   */
  headers: string;
  /** AES-256-GCM sealed `whsec_…` secret (see secret-box.ts). */
  secret_sealed: string;
  enabled: number;
  disabled_reason: string | null;
  /** Start of the current unbroken run of failed attempts, or null. */
  failing_since: string | null;
  created_at: string;
  updated_at: string;
  /**
   * During a secret rotation: the secret being replaced, sealed like the current one; deliveries
   * are signed with both until previous_secret_expires_at, then it is erased. Null otherwise.
   */
  previous_secret_sealed?: string | null;
  previous_secret_expires_at?: string | null;
  rotation_started_at?: string | null;
  /** The test event signed with the new secret alone ("prove the new secret first"). */
  rotation_proof_signal_id?: string | null;
  /** The event types it subscribes to, as bits (webhooks/subscriptions.ts). */
  event_mask: number;
  /** Signals below this severity are not delivered to it (1: all). */
  min_severity: number;
  /** JSON array of the signal types delivered to it; null: every type. */
  signal_types: string | null;
  /** Deliveries per second at most; null: no limit. */
  rate_limit: number | null;
  /** Failed attempts in a row (0 after a success). */
  failure_streak: number;
  /** The highest alert threshold (percent of the disable window) announced in this streak; 0: none. */
  failing_alerted: number;
  /** The client certificate (PEM chain) presented when the receiver asks for one (mTLS); null: none. */
  tls_client_certificate?: string | null;
  /** Its private key (PEM), sealed like the secret; never returned. */
  tls_client_key_sealed?: string | null;
  /** CA certificates (PEM) the receiver's certificate must chain to, instead of the system store; null: the system store. */
  tls_ca_certificates?: string | null;
  /** How the delivery authenticates to the receiver (Basic or OAuth2 client credentials), sealed JSON; null: none. */
  auth_sealed?: string | null;
  /** When the client certificate expires (its notAfter), for the expiry announcements; null without one. */
  tls_client_certificate_expires_at?: string | null;
  /** The threshold (days before the expiry: 30, 7, 1) last announced for this certificate; 0: none yet. */
  tls_client_certificate_alerted?: number;
}

export type DeliveryState = 'pending' | 'delivering' | 'succeeded' | 'failed';

/** One (signal, endpoint) delivery; its id is the Guard-Delivery UUID of every attempt. */
export interface WebhookDeliveryTable {
  id: string;
  tenant_id: string;
  signal_id: string;
  endpoint_id: string;
  state: DeliveryState;
  attempts: number;
  next_attempt_at: string;
  lease_until: string | null;
  /** The process holding the lease (PostgreSQL: a replica's random id per start); null on SQLite. */
  leased_by: string | null;
  last_status: number | null;
  last_error: string | null;
  created_at: string;
  completed_at: string | null;
  /** The replay that re-queued it last, if any. */
  replay_id: string | null;
}

export type ReplayState = 'running' | 'done' | 'cancelled';

/** A replay: an endpoint's completed deliveries matching a filter, re-queued at a bounded rate. */
export interface WebhookReplayTable {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  /** The admin who started it. */
  requested_by: string;
  /** Only deliveries in this state ('failed' or 'succeeded'); null: both. */
  status: string | null;
  /** Deliveries created in [since, until). */
  since: string;
  until: string;
  state: ReplayState;
  /** How many matched when it started (the dry run's count). */
  total: number;
  /** How many it has re-queued so far. */
  queued: number;
  /** The last delivery re-queued (created_at, id): the walk goes on after it. */
  cursor_at: string | null;
  cursor_id: string | null;
  /** When the feeder last re-queued some: the rate is counted from there. */
  fed_at: string | null;
  created_at: string;
  finished_at: string | null;
  /** Why it stopped early (the endpoint was disabled), or null. */
  error: string | null;
}

/** A rate-limited endpoint's next free time (GCRA's theoretical arrival time, Unix ms). */
export interface WebhookEndpointRateTable {
  endpoint_id: string;
  tat_ms: number;
}

/** Attempts per endpoint and hour (the endpoint's success rate). */
export interface WebhookEndpointStatsTable {
  endpoint_id: string;
  /** The hour's start, RFC 3339. */
  hour: string;
  succeeded: number;
  failed: number;
}

export interface WebhookAttemptTable {
  id: string;
  delivery_id: string;
  tenant_id: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  status: number | null;
  error: string | null;
  response_excerpt: string | null;
  /** Guard-Signature as sent (every entry during a rotation); null for attempts before it was recorded. */
  signature?: string | null;
  /** traceparent as sent; null when none was. */
  traceparent?: string | null;
  /** webhook-signature as sent (every entry during a rotation); null for attempts before it was recorded. */
  standard_signature?: string | null;
  /** The receiver's response headers, JSON (capped, credential-like values masked); null without a response or before it was recorded. */
  response_headers?: string | null;
}

/**
 * A console sign-in. The cookie carries the token; only its SHA-256 is stored. The CSRF token
 * is not stored at all: it is an HMAC of the token hash under a server key (auth/csrf.ts).
 */
export interface SessionTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  /** Written at most once a minute: the sliding idle expiry moves with it. */
  last_seen_at: string;
  idle_expires_at: string;
  /** Absolute expiry: no activity extends a session past it. */
  expires_at: string;
  revoked_at: string | null;
  ip: string;
  user_agent: string;
  /** How it was signed in: password, totp, recovery_code, passkey, oidc, saml; null before migration 0018. */
  method?: string | null;
}

/** A one-time set-password link; the token (in the URL fragment) is stored as its SHA-256. */
export interface PasswordLinkTable {
  id: string;
  user_id: string;
  token_hash: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

/** A failed sign-in, once per key it counts against (auth/login-rate-limit.ts). */
/** An analyzer rule support staff set (migration 0020): vendor-wide, the list replaced as a whole. */
export interface AnalyzerRuleTable {
  id: string;
  position: number;
  title: string;
  severity: string;
  member: string;
  pattern: string;
  min_count: number | null;
  updated_at: string;
  /** The user id of the support staff member who set the list. */
  updated_by: string;
}

export interface LoginFailureTable {
  key_hash: string;
  at: string;
}

/** One of a user's ten single-use recovery codes, as SHA-256. */
export interface MfaRecoveryCodeTable {
  user_id: string;
  code_hash: string;
  used_at: string | null;
}

/** A passkey (WebAuthn credential); the id is the credential id, base64url. */
export interface WebauthnCredentialTable {
  id: string;
  user_id: string;
  name: string;
  /** The COSE public key, base64url. */
  public_key: string;
  counter: Generated<number>;
  /** JSON array of the authenticator's transports. */
  transports: Generated<string>;
  /** `singleDevice` or `multiDevice` (a synced passkey). */
  device_type: string;
  backed_up: Generated<number>;
  created_at: string;
  last_used_at: string | null;
}

/**
 * The state of a sign-in between two requests (auth/flows.ts), shared by every replica: an
 * MFA step, an OIDC or SAML round trip, a WebAuthn challenge. Found by the SHA-256 of its
 * token (or OIDC state, or SAML request id); used once.
 */
export interface AuthFlowTable {
  id_hash: string;
  kind: string;
  tenant_id: string | null;
  user_id: string | null;
  /** JSON; what must stay secret in it is sealed by the flow's owner. */
  data: Generated<string>;
  /** Wrong answers given to this flow. */
  attempts: Generated<number>;
  created_at: string;
  expires_at: string;
  used_at: string | null;
}

export type SsoProtocol = 'oidc' | 'saml';

/** A tenant's identity provider: one per protocol. */
export interface SsoConnectionTable {
  tenant_id: string;
  protocol: SsoProtocol;
  /** JSON: OIDC {issuer, client_id}; SAML {idp_entity_id, sso_url, idp_certificates}. */
  config: string;
  /** The OIDC client secret, sealed; null for SAML. */
  secret_sealed: string | null;
  /** JSON array of the email domains whose users sign in through it. */
  email_domains: string;
  /** Members of this IdP group are admins; null: the provider grants no role. */
  admin_group: string | null;
  created_at: string;
  updated_at: string;
}

/** An email domain routes sign-in to one tenant's connection. */
export interface SsoDomainTable {
  domain: string;
  tenant_id: string;
  protocol: SsoProtocol;
}

/** A tenant's SCIM bearer token (gsc_), stored as SHA-256. */
export interface ScimTokenTable {
  id: string;
  tenant_id: string;
  token_hash: string;
  name: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

export interface ScimGroupTable {
  id: string;
  tenant_id: string;
  display_name: string;
  external_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface ScimGroupMemberTable {
  group_id: string;
  user_id: string;
}

export interface Database {
  mfa_recovery_codes: MfaRecoveryCodeTable;
  webauthn_credentials: WebauthnCredentialTable;
  auth_flows: AuthFlowTable;
  sso_connections: SsoConnectionTable;
  sso_domains: SsoDomainTable;
  scim_tokens: ScimTokenTable;
  scim_groups: ScimGroupTable;
  scim_group_members: ScimGroupMemberTable;
  login_failures: LoginFailureTable;
  analyzer_rules: AnalyzerRuleTable;
  sessions: SessionTable;
  password_links: PasswordLinkTable;
  signals: SignalTable;
  detection_policies: DetectionPolicyTable;
  webhook_endpoints: WebhookEndpointTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  webhook_replays: WebhookReplayTable;
  webhook_endpoint_rates: WebhookEndpointRateTable;
  webhook_endpoint_stats: WebhookEndpointStatsTable;
  tenants: TenantTable;
  users: UserTable;
  api_tokens: ApiTokenTable;
  enrollment_tokens: EnrollmentTokenTable;
  agents: AgentTable;
  uploads: UploadTable;
  bundles: BundleTable;
  bundle_batches: BundleBatchTable;
  bundle_requests: BundleRequestTable;
  collection_schedules: CollectionScheduleTable;
  bundle_insights: BundleInsightTable;
  audit_log: AuditTable;
}
