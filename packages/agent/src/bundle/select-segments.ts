// Cap selection (spec 4.1 rule 5, DESIGN §3 contract — manifest): rotated segments are taken
// newest-first; each segment that would push the stored total over the cap is left out and
// named as trimmed, and an older, smaller one that still fits is taken.

export interface SizedSegment {
  name: string;
  /** Bytes the segment would occupy in the archive (after redaction and re-gzip, if any). */
  size: number;
}

export interface SegmentSelection {
  taken: string[];
  trimmed: string[];
  total: number;
}

/** Decides one segment given the running total; the streaming form of selectSegments. */
export function fitsUnderCap(total: number, size: number, cap: number): boolean {
  return total + size <= cap;
}

/** `segments` newest-first; `baseBytes` is what the other members already take. */
export function selectSegments(segments: SizedSegment[], baseBytes: number, cap: number): SegmentSelection {
  const taken: string[] = [];
  const trimmed: string[] = [];
  let total = baseBytes;
  for (const segment of segments) {
    if (fitsUnderCap(total, segment.size, cap)) {
      taken.push(segment.name);
      total += segment.size;
    } else {
      trimmed.push(segment.name);
    }
  }
  return { taken, trimmed, total };
}
