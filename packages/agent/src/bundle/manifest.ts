import { BUNDLE_VERSION, type BundleTrigger, REDACTION_PATTERN_SOURCE } from '@guard/contract/bundle';
import type { BundleManifest, CollectionError, ManifestMember } from '@guard/contract/manifest';

export interface ManifestInput {
  agentVersion: string;
  generatedAt: Date;
  trigger: BundleTrigger;
  /** The bundle request a console_push bundle answers; recorded only when given. */
  requestId?: string;
  contents: ManifestMember[];
  trimmedSegments: string[];
  /** Values masked per log member; members with no count are reported as 0. */
  maskedByMember: Map<string, number>;
  collectionErrors: CollectionError[];
  /** The operator's `redaction.extra_keys`; recorded only when there are some. */
  extraKeys?: readonly string[];
  /** With --obfuscate: the kinds replaced and the distinct values (the map's entries). */
  obfuscation?: BundleManifest['obfuscation'];
}

/**
 * Builds BUNDLE-MANIFEST.json exactly as the contract (DESIGN §3) lays it out. Three additions
 * appear only when they apply: request_id (DESIGN §4, a console_push bundle),
 * redaction.extra_keys when the operator configured extra keys, and obfuscation (DESIGN §4,
 * bundles, second round) in a bundle collected with --obfuscate.
 */
export function buildManifest(input: ManifestInput): BundleManifest {
  const members: Record<string, number> = {};
  let valuesMasked = 0;
  for (const [name, count] of input.maskedByMember) {
    members[name] = count;
    valuesMasked += count;
  }
  return {
    bundle_version: BUNDLE_VERSION,
    agent_version: input.agentVersion,
    generated_at: input.generatedAt.toISOString(),
    trigger: input.trigger,
    ...(input.requestId !== undefined ? { request_id: input.requestId } : {}),
    contents: input.contents,
    trimmed_segments: input.trimmedSegments,
    redaction: {
      pattern: REDACTION_PATTERN_SOURCE,
      values_masked: valuesMasked,
      members,
      ...(input.extraKeys?.length ? { extra_keys: [...input.extraKeys] } : {}),
    },
    collection_errors: input.collectionErrors,
    ...(input.obfuscation ? { obfuscation: input.obfuscation } : {}),
  };
}

export function manifestBytes(manifest: BundleManifest): Buffer {
  return Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`);
}
