import { describe, expect, it } from 'vitest';
import { formatInstant, parseInstant, parseKnowledgeInstant, instantProblem } from './time.ts';

describe('instants', () => {
  it('keeps microseconds and applies offsets', () => {
    const a = parseInstant('2024-03-01T12:00:00.123456+02:00');
    expect(formatInstant(a)).toBe('2024-03-01T10:00:00.123456Z');
  });
  it('widens a date to the last microsecond of the UTC day', () => {
    expect(formatInstant(parseKnowledgeInstant('2024-02-29'))).toBe('2024-02-29T23:59:59.999999Z');
  });
  it('refuses an instant without offset', () => {
    expect(instantProblem('2024-01-01T00:00:00')).toBe('missing_offset');
    expect(() => parseInstant('2024-01-01T00:00:00')).toThrow();
  });
});
