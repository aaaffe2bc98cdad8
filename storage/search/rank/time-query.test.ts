import { describe, expect, it } from 'vitest';
import { timeWindow } from './time-query.ts';

const day = (iso: string) => Date.parse(iso) * 1000;

describe('dates named in a query', () => {
  it('reads a day in either order, with slack around it', () => {
    for (const q of ['What did Maria start on 3 June, 2023?', 'What did Maria start on June 3, 2023?', 'on the 3rd of June 2023']) {
      const w = timeWindow(q);
      expect(w, q).not.toBeNull();
      expect(w!.from).toBeLessThanOrEqual(day('2023-06-03T00:00:00Z'));
      expect(w!.to).toBeGreaterThan(day('2023-06-03T23:59:59Z'));
      expect(w!.to - w!.from).toBeLessThanOrEqual(4 * 86_400_000_000);
    }
  });

  it('reads a month with its year and a year alone', () => {
    const m = timeWindow('What workout class did Maria start in December 2023?')!;
    expect(m.from).toBe(day('2023-12-01T00:00:00Z'));
    expect(m.to).toBeGreaterThan(day('2023-12-31T23:59:59Z'));
    const y = timeWindow('How many times has Melanie gone to the beach in 2023?')!;
    expect(y.from).toBe(day('2023-01-01T00:00:00Z'));
    expect(y.to).toBeGreaterThan(day('2023-12-31T23:59:59Z'));
  });

  it('names no window without a year, or without a date', () => {
    expect(timeWindow('When did Melanie go camping in June?')).toBeNull();
    expect(timeWindow('What does Joanna do while she writes?')).toBeNull();
    expect(timeWindow('room 2023 is booked')).toBeNull();
  });
});
