import { describe, expect, it } from 'vitest';
import {
  OPEN_END,
  compactInstant,
  formatInstant,
  formatNullableEnd,
  instantProblem,
  knowledgeInstantProblem,
  parseInstant,
  parseKnowledgeInstant,
} from './time.ts';

describe('instants', () => {
  it('keeps microseconds and applies offsets', () => {
    const a = parseInstant('2024-03-01T12:00:00.123456+02:00');
    expect(formatInstant(a)).toBe('2024-03-01T10:00:00.123456Z');
  });
  it('applies negative, colon-less and half-hour offsets', () => {
    expect(formatInstant(parseInstant('2024-03-01T00:00:00-05:00'))).toBe('2024-03-01T05:00:00.000000Z');
    expect(formatInstant(parseInstant('2024-03-01T00:00:00+0530'))).toBe('2024-02-29T18:30:00.000000Z');
    expect(formatInstant(parseInstant('2024-03-01T00:00:00+05'))).toBe('2024-02-29T19:00:00.000000Z');
    expect(parseInstant('2024-03-01T10:00:00z')).toBe(parseInstant('2024-03-01T11:00:00+01:00'));
  });
  it('keeps every microsecond digit and truncates below it', () => {
    const base = parseInstant('2024-03-01T00:00:00Z');
    expect(parseInstant('2024-03-01T00:00:00.000001Z') - base).toBe(1);
    expect(parseInstant('2024-03-01T00:00:00.999999Z') - base).toBe(999_999);
    expect(parseInstant('2024-03-01T00:00:00.5Z') - base).toBe(500_000);
    expect(parseInstant('2024-03-01T00:00:00.123456789Z') - base).toBe(123_456);
    expect(formatInstant(base + 7)).toBe('2024-03-01T00:00:00.000007Z');
  });
  it('round-trips through format and parse', () => {
    for (const s of [
      '1970-01-01T00:00:00.000000Z',
      '1999-12-31T23:59:59.999999Z',
      '2200-12-31T23:59:59.999999Z',
      '1700-01-01T00:00:00.000001Z',
    ]) {
      expect(formatInstant(parseInstant(s))).toBe(s);
    }
  });
  it('orders instants before 1970 correctly', () => {
    expect(parseInstant('1969-12-31T23:59:59.999999Z')).toBe(-1);
    expect(formatInstant(-1)).toBe('1969-12-31T23:59:59.999999Z');
  });
  it('widens a date to the last microsecond of the UTC day', () => {
    expect(formatInstant(parseKnowledgeInstant('2024-02-29'))).toBe('2024-02-29T23:59:59.999999Z');
    expect(parseKnowledgeInstant('2024-03-01') + 1).toBe(parseInstant('2024-03-02T00:00:00Z'));
  });
  it('uses a full knowledge instant as given', () => {
    expect(parseKnowledgeInstant('2024-03-01T12:00:00Z')).toBe(parseInstant('2024-03-01T12:00:00Z'));
  });
  it('refuses an instant without offset', () => {
    expect(instantProblem('2024-01-01T00:00:00')).toBe('missing_offset');
    expect(instantProblem('2024-01-01T00:00')).toBe('missing_offset');
    expect(instantProblem('2024-01-01 00:00:00.5')).toBe('missing_offset');
    expect(instantProblem('2024-01-01')).toBe('missing_offset');
    expect(() => parseInstant('2024-01-01T00:00:00')).toThrow();
    expect(knowledgeInstantProblem('2024-01-01T00:00:00')).toBe('missing_offset');
  });
  it('accepts a date only where a knowledge instant is asked for', () => {
    expect(knowledgeInstantProblem('2024-01-01')).toBeNull();
    expect(() => parseInstant('2024-01-01')).toThrow();
  });
  it('refuses years out of range', () => {
    expect(instantProblem('1699-12-31T00:00:00Z')).toBe('out_of_range');
    expect(instantProblem('2201-01-01T00:00:00Z')).toBe('out_of_range');
    expect(instantProblem('9999-01-01T00:00:00Z')).toBe('out_of_range');
    expect(knowledgeInstantProblem('0001-01-01')).not.toBeNull();
  });
  it('refuses invalid calendar dates and clock times', () => {
    for (const s of [
      '2023-02-29T00:00:00Z',
      '2024-02-30T00:00:00Z',
      '2024-13-01T00:00:00Z',
      '2024-00-10T00:00:00Z',
      '2024-04-31T00:00:00Z',
      '2024-01-01T24:00:00Z',
      '2024-01-01T00:60:00Z',
      '2024-01-01T00:00:60Z',
      '2024-01-01T00:00:00+24:00',
      '2024-01-01T00:00:00+01:60',
    ]) {
      expect(instantProblem(s), s).toBe('malformed');
    }
    expect(knowledgeInstantProblem('2023-02-29')).not.toBeNull();
    expect(knowledgeInstantProblem('2024-02-29')).toBeNull();
    expect(instantProblem('1900-02-29T00:00:00Z')).toBe('malformed');
    expect(instantProblem('2000-02-29T00:00:00Z')).toBeNull();
  });
  it('refuses text that is not a timestamp', () => {
    for (const s of [
      '',
      'now',
      'yesterday',
      '2024',
      '2024-1-1T00:00:00Z',
      ' 2024-01-01T00:00:00Z',
      '2024-01-01T00:00:00Z ',
      '1709294400',
    ]) {
      expect(instantProblem(s), s).not.toBeNull();
    }
  });
  it('formats open ends as null and compact file-name instants', () => {
    expect(formatNullableEnd(OPEN_END)).toBeNull();
    expect(formatNullableEnd(0)).toBe('1970-01-01T00:00:00.000000Z');
    expect(compactInstant(parseInstant('2024-03-01T23:59:59.999999Z'))).toBe('20240301T235959999999Z');
  });
});
