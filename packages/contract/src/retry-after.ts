// Retry-After (RFC 9110 §10.2.3), read one way by every Guard program that honours it: the
// agent's HTTP client (429/5xx from the service) and the server's webhook worker (a
// receiver's answer). Its value is delay-seconds or an HTTP-date; anything else is treated as
// if the header were absent. Pure: the clock comes in as an argument.

/**
 * delay-seconds of more digits than this (over 300 years) are refused as not meant, rather
 * than turned into a number that is not exact (2^53 ms) or not finite.
 */
const MAX_DELAY_DIGITS = 10;

const DAY_NAMES = ['Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat', 'Sun'];
const LONG_DAY_NAMES = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

// The three forms of RFC 9110 §5.6.7, case-sensitive as it says; all are UTC.
//   IMF-fixdate   Sun, 06 Nov 1994 08:49:37 GMT
//   rfc850-date   Sunday, 06-Nov-94 08:49:37 GMT   (obsolete)
//   asctime-date  Sun Nov  6 08:49:37 1994          (obsolete)
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';
const IMF_FIXDATE = new RegExp(`^([A-Za-z]{3}), (\\d{2}) ([A-Za-z]{3}) (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^([A-Za-z]{6,9}), (\\d{2})-([A-Za-z]{3})-(\\d{2}) ${TIME} GMT$`);
const ASCTIME_DATE = new RegExp(`^([A-Za-z]{3}) ([A-Za-z]{3}) ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

/**
 * Milliseconds to wait that a Retry-After value asks for: delay-seconds × 1000, or the time
 * from `nowMs` until its HTTP-date (0 for a date in the past). undefined when the header is
 * absent, empty or neither form (a negative or fractional number, an ISO 8601 timestamp, a
 * date with an impossible day or time…). Of a list of values the first is read.
 */
export function parseRetryAfter(value: string | readonly string[] | undefined, nowMs: number): number | undefined {
  const v = (typeof value === 'string' ? value : value?.[0])?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return v.length <= MAX_DELAY_DIGITS ? Number(v) * 1000 : undefined;
  const at = parseHttpDate(v, nowMs);
  return at === undefined ? undefined : Math.max(0, at - nowMs);
}

/** An HTTP-date (RFC 9110 §5.6.7) as epoch milliseconds, or undefined. */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) {
    if (!DAY_NAMES.includes(m[1])) return undefined;
    return utc(Number(m[4]), m[3], m[2], m[5], m[6], m[7]);
  }
  m = RFC850_DATE.exec(text);
  if (m) {
    if (!LONG_DAY_NAMES.includes(m[1])) return undefined;
    // A two-digit year more than 50 years ahead is the most recent past year with those digits.
    const thisYear = new Date(nowMs).getUTCFullYear();
    let year = Math.floor(thisYear / 100) * 100 + Number(m[4]);
    if (year > thisYear + 50) year -= 100;
    return utc(year, m[3], m[2], m[5], m[6], m[7]);
  }
  m = ASCTIME_DATE.exec(text);
  if (m) {
    if (!DAY_NAMES.includes(m[1])) return undefined;
    return utc(Number(m[7]), m[2], m[3].trim().padStart(2, '0'), m[4], m[5], m[6]);
  }
  return undefined;
}

function utc(year: number, monthName: string, day: string, hour: string, minute: string, second: string) {
  const month = MONTHS.indexOf(monthName);
  const [d, h, min, s] = [day, hour, minute, second].map(Number);
  if (month < 0 || h > 23 || min > 59 || s > 60) return undefined; // 60: a leap second
  const date = new Date(0);
  date.setUTCFullYear(year, month, d); // not Date.UTC: it reads years 0-99 as 1900-1999
  // A day the month does not have (31 Apr, 29 Feb 2027) would roll over into the next month.
  if (date.getUTCMonth() !== month || date.getUTCDate() !== d) return undefined;
  return date.getTime() + ((h * 60 + min) * 60 + s) * 1000;
}
