// Who may see and do what in the console: the one table the navigation and every write
// control read. The server enforces the same rules; this only hides what would be refused.

export type Role = 'admin' | 'member' | 'support';

const RULES = {
  readSignals: ['admin', 'member'],
  readServers: ['admin', 'member', 'support'],
  manageEnrollment: ['admin'],
  /** Ask a server for a support bundle (console push): support staff only where the tenant allows it. */
  requestBundles: ['admin', 'support'],
  /** Whether vendor support may request bundles from the tenant's servers. */
  manageSupportAccess: ['admin'],
  /** The tenant's collection schedule: bundles requested weekly and on critical signals. */
  manageCollectionSchedule: ['admin'],
  readBundles: ['admin', 'member', 'support'],
  /** Delete one of the tenant's bundles (its file and findings go; the record stays). */
  deleteBundles: ['admin'],
  readAudit: ['admin', 'support'],
  /** The analyzer rules every bundle is matched against (vendor-wide). */
  manageAnalyzers: ['support'],
  /** Analyse a bundle again with the analyzers and rules of now. */
  analyseBundles: ['admin', 'support'],
  readWebhooks: ['admin', 'member'],
  manageWebhooks: ['admin'],
  /** Erase a signal's payload on request, and set how long the delivery log is kept. */
  manageRetention: ['admin'],
  manageUsers: ['admin'],
  /** The tenant's detection policy (which host detection signal types its agents raise). */
  readDetection: ['admin', 'member'],
  manageDetection: ['admin'],
  /** The tenant's single sign-on connections (OpenID Connect, SAML). */
  manageSso: ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof RULES;

export function can(role: Role | undefined, permission: Permission): boolean {
  return role !== undefined && (RULES[permission] as readonly Role[]).includes(role);
}

/** Where a role lands after signing in at the console's root. */
export function homePath(role: Role): string {
  return role === 'support' ? '/support/bundles' : '/signals';
}
