// One interface per table. Timestamps are RFC 3339 UTC strings; ids are prefixed random ids.

export type Role = 'admin' | 'member' | 'support';

export interface TenantTable {
  id: string;
  name: string;
  created_at: string;
}

export interface UserTable {
  id: string;
  /** null for vendor support staff, who belong to no tenant. */
  tenant_id: string | null;
  email: string;
  role: Role;
  password_hash: string;
  created_at: string;
}

export interface ApiTokenTable {
  id: string;
  user_id: string;
  token_hash: string;
  name: string;
  created_at: string;
  revoked_at: string | null;
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

export interface Database {
  tenants: TenantTable;
  users: UserTable;
  api_tokens: ApiTokenTable;
  enrollment_tokens: EnrollmentTokenTable;
  agents: AgentTable;
  uploads: UploadTable;
  bundles: BundleTable;
  audit_log: AuditTable;
}
