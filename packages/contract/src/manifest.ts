// BUNDLE-MANIFEST.json (spec 2.2; DESIGN §3 contract — manifest, §4 bundle requests): its one
// schema. The agent builds a manifest of its type; `upload` and the service's register check
// one with parseManifest; the service serves it back with a bundle's detail (response schema).
// Plain JSON Schema typed by TypeBox's Static, as in wire.ts.

import type { Static } from 'typebox';
import { BUNDLE_TRIGGERS, BUNDLE_VERSION, MANIFEST_MEMBER, OBFUSCATION_KINDS } from './bundle.ts';
import { copyDeclared, type FieldPath, fieldName, firstFault } from './schema-check.ts';
import { Sha256Hex } from './wire.ts';

/** A member name: a plain file name, and not the manifest's own. */
const MEMBER_NAME_PATTERN = `^(?!${MANIFEST_MEMBER.replaceAll('.', '\\.')}$)[A-Za-z0-9._-]{1,255}$`;
const Count = { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER } as const;

export const ManifestMember = {
  type: 'object',
  required: ['name', 'size', 'sha256'],
  properties: {
    name: { type: 'string', pattern: MEMBER_NAME_PATTERN, description: 'member file name in the archive' },
    size: { ...Count, description: 'bytes stored in the archive' },
    sha256: { ...Sha256Hex, description: 'SHA-256 of the stored bytes, 64 lowercase hex digits' },
  },
} as const;
export type ManifestMember = Static<typeof ManifestMember>;

export const CollectionError = {
  type: 'object',
  required: ['source', 'message'],
  properties: {
    source: { type: 'string', description: 'what could not be collected' },
    message: { type: 'string', description: 'why' },
  },
} as const;
export type CollectionError = Static<typeof CollectionError>;

export const BundleManifest = {
  type: 'object',
  description: 'BUNDLE-MANIFEST.json of a support bundle',
  required: [
    'bundle_version',
    'agent_version',
    'generated_at',
    'trigger',
    'contents',
    'trimmed_segments',
    'redaction',
    'collection_errors',
  ],
  properties: {
    bundle_version: { type: 'integer', const: BUNDLE_VERSION },
    agent_version: { type: 'string', minLength: 1 },
    generated_at: { type: 'string', description: 'when the bundle was built (ISO 8601)' },
    trigger: { type: 'string', enum: [...BUNDLE_TRIGGERS] },
    request_id: {
      type: 'string',
      minLength: 1,
      description: 'with trigger console_push: the id of the bundle request it answers',
    },
    contents: {
      type: 'array',
      items: ManifestMember,
      description: 'every member but the manifest, each name once',
    },
    trimmed_segments: {
      type: 'array',
      items: { type: 'string' },
      description: 'rotated segments left out for the size cap',
    },
    redaction: {
      type: 'object',
      required: ['pattern', 'values_masked', 'members'],
      properties: {
        pattern: { type: 'string', description: 'the attribute-key pattern whose values were masked' },
        values_masked: Count,
        members: { type: 'object', additionalProperties: Count, description: 'values masked per log member' },
        extra_keys: {
          type: 'array',
          items: { type: 'string' },
          description:
            "the operator's redaction.extra_keys (key names and ^...$ patterns masked on top of pattern); " +
            "present only when the agent was configured with some: a manifest without it is exactly the contract's",
        },
      },
    },
    collection_errors: {
      type: 'array',
      items: CollectionError,
      description: 'sources that could not be collected; the bundle was built without them',
    },
    obfuscation: {
      type: 'object',
      required: ['kinds', 'values'],
      properties: {
        kinds: {
          type: 'array',
          items: { type: 'string', enum: [...OBFUSCATION_KINDS] },
          description: 'the kinds of value replaced by tokens (host, ip, user, email)',
        },
        values: { ...Count, description: 'distinct values replaced: the entries of the private map' },
      },
      description:
        'present only in a bundle collected with --obfuscate (DESIGN §4, bundles, second round); ' +
        'the map from tokens to originals stays beside the bundle, never inside it',
    },
  },
} as const;
export type BundleManifest = Static<typeof BundleManifest>;

/**
 * What each field must be, in the words of parseManifest's errors; a field without its own
 * entry is reported by the nearest enclosing one (`[]` stands for any index).
 */
const MUST_BE: Record<string, string> = {
  '': 'a JSON object',
  bundle_version: `${BUNDLE_VERSION}`,
  agent_version: 'a non-empty string',
  generated_at: 'an ISO 8601 timestamp',
  trigger: `one of ${BUNDLE_TRIGGERS.join(', ')}`,
  request_id: 'a non-empty string',
  contents: 'an array',
  'contents[]': 'an object',
  'contents[].name': 'a plain file name other than the manifest',
  'contents[].size': 'a non-negative integer',
  'contents[].sha256': '64 lowercase hex digits',
  trimmed_segments: 'an array of strings',
  redaction: 'an object',
  'redaction.pattern': 'a string',
  'redaction.values_masked': 'a non-negative integer',
  'redaction.members': 'an object of non-negative integers',
  'redaction.extra_keys': 'an array of strings',
  collection_errors: 'an array of {source, message}',
  obfuscation: 'an object {kinds, values}',
  'obfuscation.kinds': `an array of ${OBFUSCATION_KINDS.join(', ')}`,
  'obfuscation.values': 'a non-negative integer',
};

/**
 * Validates an untrusted manifest (for example one read back from an archive by `upload`)
 * and returns it typed, or throws an Error that names the first offending field. A missing
 * or null collection_errors is read as [] (agents before it was added). The result is a fresh
 * object holding the schema's fields only: unknown ones are dropped, so nothing of unbounded
 * shape travels on from here. Two rules JSON Schema cannot state are checked after it:
 * generated_at is a date Date.parse reads, and member names are unique.
 */
export function parseManifest(value: unknown): BundleManifest {
  const fail = (field: string, want: string): never => {
    throw new Error(`invalid ${MANIFEST_MEMBER}: ${field} must be ${want}`);
  };
  const doc = isRecord(value) ? { ...value, collection_errors: value.collection_errors ?? [] } : value;
  const fault = firstFault(BundleManifest, doc);
  if (fault) {
    const [path, want] = ruleFor(fault.path);
    if (want === undefined) throw new Error(`invalid ${MANIFEST_MEMBER}: ${fieldName(fault.path)} ${fault.message}`);
    fail(path.length === 0 ? 'the document' : fieldName(path), want);
  }
  const manifest = copyDeclared(BundleManifest, doc as BundleManifest);
  if (Number.isNaN(Date.parse(manifest.generated_at))) fail('generated_at', MUST_BE.generated_at);
  const seen = new Set<string>();
  for (const [i, { name }] of manifest.contents.entries()) {
    if (seen.has(name)) fail(`contents[${i}].name`, 'unique');
    seen.add(name);
  }
  return manifest;
}

/** The nearest enclosing field of `path` that MUST_BE words, with those words. */
function ruleFor(path: FieldPath): [FieldPath, string | undefined] {
  for (let n = path.length; n > 0; n--) {
    const key = path
      .slice(0, n)
      .map((p, i) => (typeof p === 'number' ? '[]' : i === 0 ? p : `.${p}`))
      .join('');
    if (MUST_BE[key] !== undefined) return [path.slice(0, n), MUST_BE[key]];
  }
  return path.length === 0 ? [[], MUST_BE['']] : [path, undefined];
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
