import { describe, expect, it } from 'vitest';
import { OPEN_END, parseInstant } from './time.ts';
import { inForceAt, knownAt, overlaps, visible } from './visibility.ts';

const T = parseInstant('2024-03-01T12:00:00Z');
const row = { known_at: T, asserted_at: T, valid_from: T, valid_to: T + 1_000_000 };

describe('visibility', () => {
  it('is known exactly at as_of and after, not 1 µs before', () => {
    expect(knownAt(row, T)).toBe(true);
    expect(knownAt(row, T + 1)).toBe(true);
    expect(knownAt(row, T - 1)).toBe(false);
  });
  it('holds from valid_from inclusive to valid_to exclusive', () => {
    expect(inForceAt(row, T)).toBe(true);
    expect(inForceAt(row, T - 1)).toBe(false);
    expect(inForceAt(row, T + 999_999)).toBe(true);
    expect(inForceAt(row, T + 1_000_000)).toBe(false);
    expect(inForceAt(row, T + 1_000_001)).toBe(false);
  });
  it('without valid_at every known row is in force', () => {
    expect(inForceAt({ ...row, valid_to: T + 1 }, undefined)).toBe(true);
  });
  it('is not in force before it was asserted, even when valid earlier', () => {
    const late = { known_at: T, asserted_at: T + 500, valid_from: T - 1_000, valid_to: OPEN_END };
    expect(inForceAt(late, T - 500)).toBe(false);
    expect(inForceAt(late, T + 499)).toBe(false);
    expect(inForceAt(late, T + 500)).toBe(true);
  });
  it('an open interval holds for ever', () => {
    expect(inForceAt({ ...row, valid_to: OPEN_END }, parseInstant('2200-12-31T23:59:59Z'))).toBe(true);
  });
  it('combines both clocks', () => {
    expect(visible(row, T, T)).toBe(true);
    expect(visible(row, T - 1, T)).toBe(false);
    expect(visible(row, T, T + 1_000_000)).toBe(false);
    expect(visible(row, T, undefined)).toBe(true);
  });
  it('half-open intervals that only touch do not overlap', () => {
    expect(overlaps(0, 10, 10, 20)).toBe(false);
    expect(overlaps(10, 20, 0, 10)).toBe(false);
    expect(overlaps(0, 10, 9, 20)).toBe(true);
    expect(overlaps(0, OPEN_END, 5, 6)).toBe(true);
    expect(overlaps(5, 6, 5, 6)).toBe(true);
  });
});
