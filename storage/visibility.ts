// The one visibility rule of the ledger. Every read uses these functions; the property tests check the
// reads against a reference model built on them.
import type { Micros } from './time.ts';

export interface Temporal {
  known_at: Micros;
  asserted_at: Micros;
  valid_from: Micros;
  valid_to: Micros;
}

/** Known at `asOf`: the row's knowledge instant (declared backfill or capture) is at or before it. */
export function knownAt(row: { known_at: Micros }, asOf: Micros): boolean {
  return row.known_at <= asOf;
}

/** In force at `validAt`: asserted by then, and the half-open interval [valid_from, valid_to) holds it. */
export function inForceAt(row: Omit<Temporal, 'known_at'>, validAt: Micros | undefined): boolean {
  if (validAt === undefined) return true;
  return row.asserted_at <= validAt && row.valid_from <= validAt && validAt < row.valid_to;
}

export function visible(row: Temporal, asOf: Micros, validAt: Micros | undefined): boolean {
  return knownAt(row, asOf) && inForceAt(row, validAt);
}

/** Two half-open intervals [a1, a2) and [b1, b2) share an instant. */
export function overlaps(a1: Micros, a2: Micros, b1: Micros, b2: Micros): boolean {
  return a1 < b2 && b1 < a2;
}
