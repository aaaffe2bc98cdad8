// Dates named in a query ("on 3 June, 2023", "in May 2023", "October 13, 2023", "in 2022") become a
// window of assertion times: the full-text search is asked again among the blocks asserted then, and
// that list is fused with the others, so "what did Maria start on 3 June, 2023" prefers what was said
// that day over the same words said another time. A date without a year names no window.
import type { Micros } from '../../time.ts';

export interface TimeWindow {
  /** Inclusive. */
  from: Micros;
  /** Exclusive. */
  to: Micros;
}

/** English month names, January first. */
export const MONTHS = [
  'january',
  'february',
  'march',
  'april',
  'may',
  'june',
  'july',
  'august',
  'september',
  'october',
  'november',
  'december',
];
const MONTH = `(${MONTHS.join('|')}|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec)`;
const DAY_MONTH_YEAR = new RegExp(`\\b(\\d{1,2})(?:st|nd|rd|th)?\\s+(?:of\\s+)?${MONTH}\\.?,?\\s+(\\d{4})\\b`, 'i');
const MONTH_DAY_YEAR = new RegExp(`\\b${MONTH}\\.?\\s+(\\d{1,2})(?:st|nd|rd|th)?,?\\s+(\\d{4})\\b`, 'i');
const MONTH_YEAR = new RegExp(`\\b${MONTH}\\.?,?\\s+(?:of\\s+)?(\\d{4})\\b`, 'i');
const YEAR = /\b(?:in|during|of|throughout)\s+((?:19|20)\d\d)\b/i;

const DAY = 86_400_000_000;
/**
 * Slack around a named day or month: a day is often talked about the day after ("yesterday"), and
 * the session that reports a month's events may fall a few days into the next.
 */
export const DAY_SLACK_BEFORE = DAY;
export const DAY_SLACK_AFTER = 2 * DAY;
export const MONTH_SLACK_AFTER = 7 * DAY;

const month = (name: string): number => MONTHS.findIndex((m) => m.startsWith(name.toLowerCase().slice(0, 3)));
const utc = (y: number, m: number, d: number): Micros => Date.UTC(y, m, d) * 1000;

/** The window of assertion times a query names, or null when it names no dated day, month or year. */
export function timeWindow(query: string): TimeWindow | null {
  let m = DAY_MONTH_YEAR.exec(query);
  if (m) return day(Number(m[3]), month(m[2] ?? ''), Number(m[1]));
  m = MONTH_DAY_YEAR.exec(query);
  if (m) return day(Number(m[3]), month(m[1] ?? ''), Number(m[2]));
  m = MONTH_YEAR.exec(query);
  if (m) {
    const y = Number(m[2]);
    const mo = month(m[1] ?? '');
    return mo < 0 ? null : { from: utc(y, mo, 1), to: utc(y, mo + 1, 1) + MONTH_SLACK_AFTER };
  }
  m = YEAR.exec(query);
  if (m) return { from: utc(Number(m[1]), 0, 1), to: utc(Number(m[1]) + 1, 0, 1) + MONTH_SLACK_AFTER };
  return null;
}

function day(y: number, mo: number, d: number): TimeWindow | null {
  if (mo < 0 || d < 1 || d > 31) return null;
  const start = utc(y, mo, d);
  return { from: start - DAY_SLACK_BEFORE, to: start + DAY + DAY_SLACK_AFTER };
}
