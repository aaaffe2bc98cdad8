// The timing line of a search is diagnostics: it must not hold up the answer it describes.
import { afterEach, describe, expect, it, vi } from 'vitest';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
  vi.resetModules();
});

describe('SearchTiming.report', () => {
  it('writes its line after the current task, not during it', async () => {
    vi.stubEnv('SVC_SEARCH_TIMING', '1');
    vi.resetModules();
    const { SearchTiming } = await import('./timing.ts');
    const lines: string[] = [];
    vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    });
    const timing = new SearchTiming();
    timing.add('text', 1.234);
    timing.report({ pool: 40 });
    expect(lines).toEqual([]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^search-timing \{"text":1\.23,"pool":40,"total":[\d.]+\}\n$/);
  });
});
