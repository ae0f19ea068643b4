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

/**
 * The policy one segment at a time, for collect, which learns each segment's stored size
 * only once it has been scanned (and perhaps redacted): offer segments newest-first.
 */
export class SegmentSelector {
  readonly taken: string[] = [];
  readonly trimmed: string[] = [];
  total: number;
  private readonly cap: number;

  /** `baseBytes` is what the other members already take. */
  constructor(baseBytes: number, cap: number) {
    this.total = baseBytes;
    this.cap = cap;
  }

  /** Whether a segment of `size` bytes would fit under the cap now. */
  fits(size: number): boolean {
    return this.total + size <= this.cap;
  }

  /** Takes the segment (true) if it fits under the cap, else names it trimmed (false). */
  offer(segment: SizedSegment): boolean {
    if (!this.fits(segment.size)) {
      this.trimmed.push(segment.name);
      return false;
    }
    this.taken.push(segment.name);
    this.total += segment.size;
    return true;
  }
}

/** `segments` newest-first; `baseBytes` is what the other members already take. */
export function selectSegments(segments: SizedSegment[], baseBytes: number, cap: number): SegmentSelection {
  const selector = new SegmentSelector(baseBytes, cap);
  for (const segment of segments) selector.offer(segment);
  return { taken: selector.taken, trimmed: selector.trimmed, total: selector.total };
}
