// Analyzers of the manifest and the service's view around it: the host's clock, an outdated
// agent, segments left out for the size cap, what could not be collected, what was masked.

import { AGENT_LOG_MEMBER } from '@guard/contract';
import type { LogStats } from '../log-scan.ts';
import { compareVersions } from '../versions.ts';
import { type Analyzer, duration, finding, plural } from './analyzer.ts';

/** Clocks may differ this much before it is worth a finding. */
export const CLOCK_SKEW_TOLERANCE_MS = 60_000;

export const clockSkew: Analyzer = {
  name: 'clock skew',
  description: "generated_at more than 60 s after the upload, or before the console's request was made.",
  codes: ['clock.skew'],
  analyze({ manifest, ctx, inManifest }) {
    const generated = Date.parse(manifest.generated_at);
    const uploaded = Date.parse(ctx.uploadedAt);
    if (generated - uploaded > CLOCK_SKEW_TOLERANCE_MS)
      return [
        finding(
          'warning',
          'clock.skew',
          `The server's clock is ${duration(generated - uploaded)} ahead`,
          `The bundle says it was generated at ${manifest.generated_at}, ${duration(generated - uploaded)} after the service received it (${ctx.uploadedAt}): the host's clock runs ahead. Times in its logs are off by as much.`,
          [inManifest('"generated_at"')],
        ),
      ];
    if (ctx.requestCreatedAt && Date.parse(ctx.requestCreatedAt) - generated > CLOCK_SKEW_TOLERANCE_MS) {
      const behind = Date.parse(ctx.requestCreatedAt) - generated;
      return [
        finding(
          'warning',
          'clock.skew',
          `The server's clock is at least ${duration(behind)} behind`,
          `The bundle says it was generated at ${manifest.generated_at}, before it was requested (${ctx.requestCreatedAt}): the host's clock runs behind by at least ${duration(behind)}. Times in its logs are off by as much.`,
          [inManifest('"generated_at"')],
        ),
      ];
    }
    return [];
  },
};

export const outdatedAgent: Analyzer = {
  name: 'outdated agent',
  description: "An agent older than the newest of the tenant's servers.",
  codes: ['agent.outdated'],
  analyze({ manifest, ctx, inManifest }) {
    if (!ctx.newestTenantVersion || (compareVersions(manifest.agent_version, ctx.newestTenantVersion) ?? 0) >= 0)
      return [];
    return [
      finding(
        'warning',
        'agent.outdated',
        `Agent ${manifest.agent_version} is older than ${ctx.newestTenantVersion}`,
        `This server runs guard-agent ${manifest.agent_version}; the newest among the tenant's servers is ${ctx.newestTenantVersion}.`,
        [inManifest('"agent_version"')],
      ),
    ];
  },
};

export const trimmedSegments: Analyzer = {
  name: 'trimmed segments',
  description: 'Rotated segments left out for the size cap, with the time they covered.',
  codes: ['bundle.trimmed_segments'],
  analyze({ manifest, facts, inManifest }) {
    if (manifest.trimmed_segments.length === 0) return [];
    return [
      finding(
        'warning',
        'bundle.trimmed_segments',
        `${plural(manifest.trimmed_segments.length, 'rotated segment')} left out for the size cap`,
        `${manifest.trimmed_segments.join(', ')} did not fit under the 180 MiB cap. ${trimmedSpan(manifest.trimmed_segments, facts.logs)}`,
        [inManifest('"trimmed_segments"')],
      ),
    ];
  },
};

export const collectionErrors: Analyzer = {
  name: 'collection errors',
  description: 'Each collection error the agent recorded in the manifest.',
  codes: ['bundle.collection_error'],
  analyze({ manifest, inManifest }) {
    return manifest.collection_errors.map((e) =>
      finding('warning', 'bundle.collection_error', `Not collected: ${e.source}`, `${e.source}: ${e.message}`, [
        inManifest(JSON.stringify(e.source)),
      ]),
    );
  },
};

export const redaction: Analyzer = {
  name: 'redaction',
  description: 'How many values were masked, per member.',
  codes: ['bundle.redaction'],
  analyze({ manifest, inManifest }) {
    const masked = Object.entries(manifest.redaction.members)
      .filter(([, n]) => n > 0)
      .map(([member, n]) => `${member}: ${n}`);
    return [
      finding(
        'info',
        'bundle.redaction',
        `${plural(manifest.redaction.values_masked, 'value')} masked`,
        `Values of keys matching ${manifest.redaction.pattern}${manifest.redaction.extra_keys?.length ? ` and ${manifest.redaction.extra_keys.join(', ')}` : ''} were replaced by [REDACTED]${masked.length ? ` (${masked.join(', ')})` : ''}. Nothing else is masked: hostnames, addresses and paths are as logged.`,
        [inManifest('"values_masked"')],
      ),
    ];
  },
};

/**
 * The time a set of trimmed segments covered, from the segments around them that were read:
 * segment N lies between N+1 (older) and N-1 (newer; agent.log for N = 1).
 */
export function trimmedSpan(trimmed: string[], logs: Map<string, LogStats>): string {
  const numberOf = (name: string) => Number(/\.(\d+)\.gz$/.exec(name)?.[1]);
  const read = [...logs.values()]
    .map((l) => ({ n: l.member === AGENT_LOG_MEMBER ? 0 : numberOf(l.member), log: l }))
    .filter((x) => Number.isFinite(x.n))
    .sort((a, b) => a.n - b.n);
  // Trimmed segments between the same two segments read share one span.
  const spans = new Map<string, { names: string[]; from?: string; to?: string }>();
  for (const name of trimmed) {
    const n = numberOf(name);
    if (!Number.isFinite(n)) continue;
    const newer = [...read].reverse().find((x) => x.n < n)?.log;
    const older = read.find((x) => x.n > n)?.log;
    const key = `${newer?.member}|${older?.member}`;
    const span = spans.get(key) ?? { names: [], from: older?.lastTime, to: newer?.firstTime };
    span.names.push(name);
    spans.set(key, span);
  }
  const parts: string[] = [];
  for (const { names, from, to } of spans.values()) {
    const which = names.length === 1 ? names[0] : `${names[0]} … ${names.at(-1)} (${names.length})`;
    if (from && to) parts.push(`${which} covered about ${from} to ${to}`);
    else if (to) parts.push(`${which} covered the time before ${to}`);
  }
  if (parts.length === 0) return 'The time they covered is not known: no segment around them carries times.';
  return `By the segments read around them: ${parts.join('; ')}. Nothing from then is in this bundle.`;
}
