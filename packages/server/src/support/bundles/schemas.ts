// Response schemas of the bundle reads, and the summary of a stored bundle.

import { BundleManifest } from '@guard/contract';
import { type Static, Type } from 'typebox';
import { BeforeParam } from '../../kernel/pagination.ts';
import type { BundleWithHost } from '../bundles-repository.ts';

export const BundleDeletion = Type.Object({
  at: Type.String({ description: 'when it was deleted' }),
  reason: Type.Union([Type.Literal('admin'), Type.Literal('retention')], {
    description: "admin: by the tenant's admin; retention: past the tenant's bundle retention",
  }),
  by: Type.String({ description: "the admin's user id, or `retention`" }),
  by_email: Type.Union([Type.String(), Type.Null()], { description: "the admin's email; null for retention" }),
});

export const BundleSummary = Type.Object({
  bundle_id: Type.String(),
  tenant_id: Type.String(),
  agent_id: Type.String(),
  hostname: Type.String(),
  filename: Type.String(),
  size: Type.Integer(),
  sha256: Type.String(),
  uploaded_at: Type.String(),
  agent_version: Type.String(),
  trigger: Type.String(),
  deleted: Type.Union([BundleDeletion, Type.Null()], {
    description: 'set once the bundle was deleted: its file and findings are gone, this record stays',
  }),
});

/** A deleted bundle's detail has neither object_key nor manifest: only the record of it. */
export const BundleDetail = Type.Object({
  ...BundleSummary.properties,
  object_key: Type.Optional(Type.String()),
  manifest: Type.Optional(BundleManifest),
});

export const BundleListQuery = Type.Object({
  tenant_id: Type.Optional(
    Type.String({ maxLength: 64, description: "support staff only; admins and members read their own tenant's" }),
  ),
  agent_id: Type.Optional(Type.String({ maxLength: 64, description: 'the server (agent) that uploaded it' })),
  trigger: Type.Optional(Type.Union([Type.Literal('cli'), Type.Literal('console_push')])),
  since: Type.Optional(Type.String({ format: 'date-time', description: 'uploaded at or after this time' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'uploaded before this time' })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(BeforeParam),
});

export const BundleList = Type.Object({
  bundles: Type.Array(BundleSummary),
  next_before: Type.Union([Type.String(), Type.Null()]),
});

export function bundleSummary(row: BundleWithHost): Static<typeof BundleSummary> {
  const manifest = JSON.parse(row.manifest) as BundleManifest;
  return {
    bundle_id: row.id,
    tenant_id: row.tenant_id,
    agent_id: row.agent_id,
    hostname: row.hostname,
    filename: row.filename,
    size: row.size,
    sha256: row.sha256,
    uploaded_at: row.uploaded_at,
    agent_version: manifest.agent_version,
    trigger: manifest.trigger,
    deleted:
      row.deleted_at == null
        ? null
        : {
            at: row.deleted_at,
            reason: row.deleted_reason === 'retention' ? 'retention' : 'admin',
            by: row.deleted_by ?? '',
            by_email: row.deleted_by_email,
          },
  };
}
