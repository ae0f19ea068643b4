// The diff of two bundles (DESIGN §4, bundles second round):
//   GET /v1/support/bundles/{id}/diff?against={other}
// `against` defaults to the same server's bundle uploaded just before this one. Members come
// from the registered manifests (name and SHA-256; the analysis checked every member against
// them), findings from each bundle's analysis (by code), and system.json's compared fields from
// the summary the analysis kept (contract systemFields). Read like the bundle itself and
// audited (bundle.diff); `against` is looked up in the bundle's own tenant only.

import { type BundleManifest, type Finding, type SystemFieldValue, systemFieldChanged } from '@guard/contract';
import { type Static, Type } from 'typebox';
import { audit } from '../../audit/index.ts';
import type { UserPrincipal } from '../../auth/index.ts';
import { ApiError, notFound } from '../../kernel/errors.ts';
import type { ComparableBundle } from '../bundles-repository.ts';
import type { SupportContext } from '../context.ts';
import { bundleDeleted } from '../deletion.ts';
import { findReadable } from './reads.ts';

export const MEMBER_CHANGES = ['added', 'removed', 'changed', 'same'] as const;
export type MemberChange = (typeof MEMBER_CHANGES)[number];

const FieldValue = Type.Union([Type.String(), Type.Number(), Type.Boolean(), Type.Null()]);

export const BundleDiffQuery = Type.Object({
  against: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 64,
      description: "another bundle of the same tenant; default: the same server's previous bundle",
    }),
  ),
});

export const BundleDiff = Type.Object({
  bundle_id: Type.String(),
  against: Type.String({ description: 'the bundle compared with (the earlier side)' }),
  against_uploaded_at: Type.String(),
  members: Type.Array(
    Type.Object({
      name: Type.String(),
      change: Type.Union([
        Type.Literal('added'),
        Type.Literal('removed'),
        Type.Literal('changed'),
        Type.Literal('same'),
      ]),
    }),
    { description: 'every member of either bundle but the manifest, by name' },
  ),
  findings: Type.Object({
    new: Type.Array(Type.String(), { description: 'finding codes of this bundle that `against` has not' }),
    resolved: Type.Array(Type.String(), { description: 'finding codes of `against` that this bundle has not' }),
  }),
  system_changes: Type.Union(
    [
      Type.Array(
        Type.Object({
          field: Type.String({ description: 'dotted name, e.g. kernel.release, detectors.exec, spool.depth' }),
          before: FieldValue,
          after: FieldValue,
        }),
      ),
      Type.Null(),
    ],
    {
      description:
        "system.json's fields that differ (only fields both bundles report); null when either bundle's system.json was not read",
    },
  ),
});
export type BundleDiff = Static<typeof BundleDiff>;

interface Side {
  members: { name: string; sha256: string }[];
  findingCodes: string[];
  system: Record<string, SystemFieldValue> | undefined;
}

/** The pure comparison: `later` is the bundle asked about, `earlier` the one it is compared with. */
export function compareBundles(
  later: Side,
  earlier: Side,
): Pick<BundleDiff, 'members' | 'findings' | 'system_changes'> {
  const before = new Map(earlier.members.map((m) => [m.name, m.sha256]));
  const after = new Map(later.members.map((m) => [m.name, m.sha256]));
  const names = [...new Set([...after.keys(), ...before.keys()])].sort();
  const members = names.map((name) => {
    const a = after.get(name);
    const b = before.get(name);
    const change: MemberChange = b === undefined ? 'added' : a === undefined ? 'removed' : a === b ? 'same' : 'changed';
    return { name, change };
  });
  const laterCodes = new Set(later.findingCodes);
  const earlierCodes = new Set(earlier.findingCodes);
  const findings = {
    new: [...laterCodes].filter((c) => !earlierCodes.has(c)).sort(),
    resolved: [...earlierCodes].filter((c) => !laterCodes.has(c)).sort(),
  };
  let system_changes: BundleDiff['system_changes'] = null;
  if (later.system && earlier.system) {
    const was = earlier.system;
    system_changes = Object.entries(later.system)
      .filter(([field, value]) => field in was && systemFieldChanged(field, was[field], value))
      .map(([field, value]) => ({ field, before: was[field], after: value }));
  }
  return { members, findings, system_changes };
}

function sideOf(row: ComparableBundle): Side {
  const manifest = JSON.parse(row.manifest) as BundleManifest;
  const findings = JSON.parse(row.findings ?? '[]') as Finding[];
  const summary = row.summary === null ? undefined : (JSON.parse(row.summary) as { system?: Side['system'] });
  return {
    members: manifest.contents.map((m) => ({ name: m.name, sha256: m.sha256 })),
    findingCodes: findings.map((f) => f.code),
    system: summary?.system,
  };
}

function requireAnalysed(row: ComparableBundle): void {
  if (row.insight_state === 'done' || row.insight_state === 'failed') return;
  throw new ApiError(
    409,
    'analysis_pending',
    `bundle ${row.id} is still being analysed: compare it once its insights are done`,
  );
}

export async function diffBundle(
  ctx: SupportContext,
  user: UserPrincipal,
  id: string,
  againstId: string | undefined,
): Promise<BundleDiff> {
  // Whoever may read the bundle may compare it: the reads' own rule, then its analysis.
  const readable = await findReadable(ctx, user, id);
  if (readable.deleted_at != null) throw bundleDeleted();
  const bundle = await ctx.bundles.comparable(readable.tenant_id, readable.id);
  if (!bundle) throw notFound('bundle');
  if (againstId === id)
    throw new ApiError(422, 'same_bundle', 'against names this bundle itself: name another bundle to compare with');
  const against =
    againstId === undefined
      ? await ctx.bundles.previousOf(bundle)
      : await ctx.bundles.comparable(bundle.tenant_id, againstId);
  if (!against) {
    if (againstId !== undefined) {
      const deleted = await ctx.bundles.find(bundle.tenant_id, againstId);
      if (deleted?.deleted_at != null) throw bundleDeleted();
      throw notFound('against bundle');
    }
    throw new ApiError(
      409,
      'no_previous_bundle',
      'this is the first bundle of its server: there is no earlier one to compare with (name one with ?against=)',
    );
  }
  requireAnalysed(bundle);
  requireAnalysed(against);
  await audit(ctx, user, 'bundle.diff', bundle.id, bundle.tenant_id);
  return {
    bundle_id: bundle.id,
    against: against.id,
    against_uploaded_at: against.uploaded_at,
    ...compareBundles(sideOf(bundle), sideOf(against)),
  };
}
