// Agent versions compared as semantic versions (MAJOR.MINOR.PATCH[-PRERELEASE]); a version
// that is not one compares with nothing, so it is never called older.

const SEMVER = /^v?(\d{1,9})\.(\d{1,9})\.(\d{1,9})(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

/** Negative when a < b, positive when a > b, 0 when equal; undefined when either is not a version. */
export function compareVersions(a: string, b: string): number | undefined {
  const x = SEMVER.exec(a.trim());
  const y = SEMVER.exec(b.trim());
  if (!x || !y) return undefined;
  for (let i = 1; i <= 3; i++) {
    const d = Number(x[i]) - Number(y[i]);
    if (d !== 0) return d;
  }
  // A pre-release is older than its release; pre-releases compare field by field (SemVer §11).
  if (x[4] === undefined || y[4] === undefined) return x[4] === y[4] ? 0 : x[4] === undefined ? 1 : -1;
  const p = x[4].split('.');
  const q = y[4].split('.');
  for (let i = 0; i < Math.max(p.length, q.length); i++) {
    if (p[i] === undefined) return -1;
    if (q[i] === undefined) return 1;
    const pn = /^\d+$/.test(p[i]);
    const qn = /^\d+$/.test(q[i]);
    if (pn && qn && Number(p[i]) !== Number(q[i])) return Number(p[i]) - Number(q[i]);
    if (pn !== qn) return pn ? -1 : 1;
    if (p[i] !== q[i]) return p[i] < q[i] ? -1 : 1;
  }
  return 0;
}

/** The newest of these versions (those that are versions), or undefined. */
export function newestVersion(versions: Iterable<string>): string | undefined {
  let best: string | undefined;
  for (const v of versions) {
    if (compareVersions(v, v) === undefined) continue;
    if (best === undefined || (compareVersions(v, best) ?? 0) > 0) best = v;
  }
  return best;
}
