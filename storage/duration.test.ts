import { describe, expect, it } from 'vitest';
import { parseLag } from './duration.ts';

describe('lag parsing', () => {
  it('keeps ISO 8601 durations in canonical form', () => {
    expect(parseLag('P3D')).toBe('P3D');
    expect(parseLag('PT36H')).toBe('P1DT12H');
    expect(parseLag('pt90m')).toBe('PT1H30M');
    expect(parseLag('P1W')).toBe('P7D');
    expect(parseLag('P1Y2M3DT4H5M6S')).toBe('P1Y2M3DT4H5M6S');
    expect(parseLag('PT0.5S')).toBe('PT0.5S');
    expect(parseLag('PT0S')).toBe('PT0S');
  });
  it('reads plain intervals', () => {
    expect(parseLag('3 days')).toBe('P3D');
    expect(parseLag('36 hours')).toBe('P1DT12H');
    expect(parseLag('90 minutes')).toBe('PT1H30M');
    expect(parseLag('1 day')).toBe('P1D');
    expect(parseLag('2 weeks')).toBe('P14D');
    expect(parseLag('1 hour 30 minutes')).toBe('PT1H30M');
    expect(parseLag('1 day, 2 hours and 3 minutes')).toBe('P1DT2H3M');
    expect(parseLag('6 months')).toBe('P6M');
    expect(parseLag('2 years')).toBe('P2Y');
    expect(parseLag('1.5 hours')).toBe('PT1H30M');
    expect(parseLag('45s')).toBe('PT45S');
    expect(parseLag('  3 Days ')).toBe('P3D');
  });
  it('gives equal intervals one canonical form', () => {
    expect(parseLag('36 hours')).toBe(parseLag('PT36H'));
    expect(parseLag('90 minutes')).toBe(parseLag('PT1H30M'));
  });
  it('refuses sentences and non-intervals', () => {
    for (const s of [
      '',
      'P',
      'PT',
      'soon',
      'a few days',
      'about 3 days',
      '3 days after the meeting',
      'three days',
      '3',
      'days',
      '3 fortnights',
      'P3X',
      'PT3D',
      '-3 days',
      'x'.repeat(300),
      '3 days'.repeat(60),
    ]) {
      expect(parseLag(s), s).toBeNull();
    }
  });
});
