// Instants are integers of microseconds since the Unix epoch. ISO strings exist only at the edges:
// parse on the way in, format with six fraction digits on the way out. A JS Date is milliseconds, so
// the fraction is carried separately and never round-trips through Date.

export type Micros = number;

/** The largest instant kept; open intervals (`valid_to: null`) are stored as this sentinel. */
export const OPEN_END: Micros = Number.MAX_SAFE_INTEGER;

// Microsecond integers stay exact in a double only up to 2^53 (about ±285 years around 1970), so the
// accepted calendar is bounded well inside that range.
export const MIN_YEAR = 1700;
export const MAX_YEAR = 2200;

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

export type InstantProblem = 'missing_offset' | 'malformed' | 'out_of_range';

const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : (MONTH_DAYS[month - 1] ?? 0);
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function utcMillis(y: number, mo: number, d: number, h: number, mi: number, s: number): number {
  const date = new Date(0);
  date.setUTCFullYear(y, mo - 1, d);
  date.setUTCHours(h, mi, s, 0);
  return date.getTime();
}

/** Why a string is not an instant with an offset, or null when it is one. */
export function instantProblem(text: string): InstantProblem | null {
  const r = parseInstantResult(text);
  return typeof r === 'number' ? null : r;
}

function parseInstantResult(text: string): Micros | InstantProblem {
  const m = INSTANT.exec(text);
  if (!m) {
    const noOffset = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(text) || DATE_ONLY.test(text);
    return noOffset ? 'missing_offset' : 'malformed';
  }
  const [, ys, mos, ds, hs, mis, ss, frac, z, sign, ohs, oms] = m;
  const y = Number(ys),
    mo = Number(mos),
    d = Number(ds),
    h = Number(hs),
    mi = Number(mis),
    s = Number(ss ?? '0');
  if (y < MIN_YEAR || y > MAX_YEAR) return 'out_of_range';
  if (mo < 1 || mo > 12 || d < 1 || d > daysInMonth(y, mo) || h > 23 || mi > 59 || s > 59) return 'malformed';
  let offsetMin = 0;
  if (!z) {
    const oh = Number(ohs),
      om = Number(oms ?? '0');
    if (oh > 23 || om > 59) return 'malformed';
    offsetMin = (sign === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const fracMicros = Number(((frac ?? '') + '000000').slice(0, 6));
  return (utcMillis(y, mo, d, h, mi, s) - offsetMin * 60_000) * 1000 + fracMicros;
}

/** Parses an ISO 8601 instant that carries an offset. Throws on anything else. */
export function parseInstant(text: string): Micros {
  const r = parseInstantResult(text);
  if (typeof r !== 'number') throw new RangeError(`not an instant with an offset (${r}): ${text}`);
  return r;
}

/** A knowledge instant: a full instant, or a date widened to 23:59:59.999999 UTC of that day. */
export function parseKnowledgeInstant(text: string): Micros {
  const d = DATE_ONLY.exec(text);
  if (!d) return parseInstant(text);
  const y = Number(d[1]),
    mo = Number(d[2]),
    day = Number(d[3]);
  if (y < MIN_YEAR || y > MAX_YEAR || mo < 1 || mo > 12 || day < 1 || day > daysInMonth(y, mo)) {
    throw new RangeError(`not a date: ${text}`);
  }
  return utcMillis(y, mo, day, 23, 59, 59) * 1000 + 999_999;
}

export function knowledgeInstantProblem(text: string): InstantProblem | null {
  const d = DATE_ONLY.exec(text);
  if (d && (Number(d[1]) < MIN_YEAR || Number(d[1]) > MAX_YEAR)) return 'out_of_range';
  try {
    parseKnowledgeInstant(text);
    return null;
  } catch {
    return instantProblem(text) ?? 'malformed';
  }
}

/** Formats an instant as `YYYY-MM-DDTHH:MM:SS.ffffffZ`. */
export function formatInstant(us: Micros): string {
  const ms = Math.floor(us / 1000);
  const frac = us - ms * 1000; // 0..999 microseconds below the millisecond
  const iso = new Date(ms).toISOString(); // YYYY-MM-DDTHH:MM:SS.mmmZ
  // Joined, not concatenated: a concatenation is kept as a tree of its parts (the sliced ISO text holding its
  // whole parent), and formatted instants are cached as long as the read model's rows (~3× the memory).
  return [iso.slice(0, 23), String(frac).padStart(3, '0'), 'Z'].join('');
}

export function formatNullableEnd(us: Micros): string | null {
  return us >= OPEN_END ? null : formatInstant(us);
}

/** A compact form of an instant for file names: 20240301T235959999999Z. */
export function compactInstant(us: Micros): string {
  return formatInstant(us).replace(/[-:.]/g, '');
}

export function nowMicros(): Micros {
  // performance.timeOrigin + now() gives sub-millisecond resolution on the wall clock.
  return Math.floor((performance.timeOrigin + performance.now()) * 1000);
}
