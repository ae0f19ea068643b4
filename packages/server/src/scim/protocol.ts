// SCIM 2.0's wire vocabulary (RFC 7643, RFC 7644): schema URNs, the media type, the error
// body, list responses and paging. Pure: no database, no Fastify.

export const SCIM_MEDIA_TYPE = 'application/scim+json';

export const SCHEMA = {
  user: 'urn:ietf:params:scim:schemas:core:2.0:User',
  group: 'urn:ietf:params:scim:schemas:core:2.0:Group',
  list: 'urn:ietf:params:scim:api:messages:2.0:ListResponse',
  patchOp: 'urn:ietf:params:scim:api:messages:2.0:PatchOp',
  error: 'urn:ietf:params:scim:api:messages:2.0:Error',
  serviceProviderConfig: 'urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig',
  resourceType: 'urn:ietf:params:scim:schemas:core:2.0:ResourceType',
  schema: 'urn:ietf:params:scim:schemas:core:2.0:Schema',
} as const;

/** RFC 7644 §3.12's scimType values that Guard answers with. */
export type ScimType =
  | 'invalidFilter'
  | 'tooMany'
  | 'uniqueness'
  | 'mutability'
  | 'invalidSyntax'
  | 'invalidPath'
  | 'noTarget'
  | 'invalidValue';

/** An error answered in SCIM's own shape (RFC 7644 §3.12), by the /scim/v2 plugin only. */
export class ScimError extends Error {
  readonly status: number;
  readonly scimType: ScimType | undefined;
  constructor(status: number, detail: string, scimType?: ScimType) {
    super(detail);
    this.name = 'ScimError';
    this.status = status;
    this.scimType = scimType;
  }
}

export const invalidValue = (detail: string) => new ScimError(400, detail, 'invalidValue');
export const scimNotFound = (what: 'User' | 'Group' | 'ResourceType' | 'Schema', id: string) =>
  new ScimError(404, `${what} ${JSON.stringify(id)} not found`);

export interface ScimErrorBody {
  schemas: [typeof SCHEMA.error];
  /** The HTTP status, as a string (RFC 7644 §3.12). */
  status: string;
  scimType?: ScimType;
  detail: string;
}

export function errorBody(status: number, detail: string, scimType?: ScimType): ScimErrorBody {
  return { schemas: [SCHEMA.error], status: String(status), ...(scimType ? { scimType } : {}), detail };
}

/** Pages of a list: `startIndex` is 1-based; `count` is at most MAX_PAGE_SIZE. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 200;

export interface Paging {
  /** 1-based index of the first result. */
  startIndex: number;
  count: number;
}

/**
 * RFC 7644 §3.4.2.4: a startIndex below 1 is taken as 1, a negative count as 0; a count over
 * the service's maximum is cut to it (the response's itemsPerPage tells the client).
 */
export function paging(query: { startIndex?: number; count?: number }): Paging {
  const startIndex = Math.max(1, Math.trunc(query.startIndex ?? 1));
  const count = Math.min(MAX_PAGE_SIZE, Math.max(0, Math.trunc(query.count ?? DEFAULT_PAGE_SIZE)));
  return { startIndex, count };
}

export function listResponse<T>(resources: T[], total: number, page: Paging) {
  return {
    schemas: [SCHEMA.list],
    totalResults: total,
    startIndex: page.startIndex,
    itemsPerPage: resources.length,
    Resources: resources,
  };
}

/**
 * A boolean as identity providers send it: JSON true/false, or (Microsoft Entra ID) the
 * strings "True"/"False" in any case. Anything else is an invalidValue.
 */
export function scimBoolean(value: unknown, attribute: string): boolean {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string') {
    const v = value.toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
  }
  throw invalidValue(`${attribute} must be true or false`);
}
