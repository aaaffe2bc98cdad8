// What a refused instant is told. The parser answers "not an instant"; a reader needs the slip itself
// (February has no 30th, there is no hour 24) before the general form, or they fix the wrong thing.
import { MAX_YEAR, MIN_YEAR, type InstantProblem } from '../storage/time.ts';

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
] as const;

const PROBLEM_TEXT: Record<InstantProblem, string> = {
  missing_offset: 'must carry a timezone offset, e.g. 2024-03-01T12:00:00Z (an instant without one is ambiguous)',
  malformed: 'must be an ISO 8601 instant with a timezone offset, e.g. 2024-03-01T12:00:00Z',
  out_of_range: `must lie between the years ${MIN_YEAR} and ${MAX_YEAR} (instants are kept to the microsecond within that range)`,
};

function ordinal(n: number): string {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${['th', 'st', 'nd', 'rd'][n % 10] ?? 'th'}`;
}

function isLeap(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

function daysIn(year: number, month: number): number {
  if (month === 2) return isLeap(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * The calendar or clock slip in a text shaped like a date or an instant (`2024-02-30`, `T24:00`), said
 * with the nearest real value; null when the fields are all in range or the text has another shape.
 */
export function calendarSlip(text: string): string | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2}))?)?/.exec(text);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (mo < 1 || mo > 12) return `there is no month ${mo} (months run 01 to 12)`;
  const days = daysIn(y, mo);
  if (d < 1 || d > days) {
    const month = MONTHS[mo - 1] ?? '';
    const why = mo === 2 && d === 29 ? ` (${y} is not a leap year)` : '';
    const nearest = `${m[1]}-${m[2]}-${pad(Math.min(Math.max(d, 1), days))}`;
    return d < 1
      ? `there is no day 0 (days run from 01), e.g. ${nearest}`
      : `${month} ${y} has no ${ordinal(d)}${why}: it has ${days} days, e.g. ${nearest}`;
  }
  if (m[4] !== undefined) {
    const [h, mi, s] = [Number(m[4]), Number(m[5]), Number(m[6] ?? '0')];
    if (h > 23) return `there is no hour ${h} (hours run 00 to 23; midnight is T00:00 of the next day)`;
    if (mi > 59) return `there is no minute ${mi} (minutes run 00 to 59)`;
    if (s > 59) return `there is no second ${s} (seconds run 00 to 59)`;
  }
  return null;
}

/** The refusal text of an instant: the slip when there is one, else what form is expected; `more` lists other accepted forms. */
export function instantProblemText(text: string, problem: InstantProblem, more = ''): string {
  if (problem !== 'out_of_range') {
    const slip = calendarSlip(text);
    if (slip !== null) return slip;
  }
  return PROBLEM_TEXT[problem] + more;
}
