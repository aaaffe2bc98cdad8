import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { deviceOf, diskCounters, diskSince } from './disk-stats.ts';
import { readInto, readThrough, residentBytes } from './page-cache.ts';

const dir = mkdtempSync(join(tmpdir(), 'page-cache-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('what a bench step read', () => {
  it('sums the bytes that came into the page cache by kind, leaving out what was there or left', () => {
    const before = new Map([
      ['/d/graph/a', 4096],
      ['/d/search/b', 0],
      ['/p/node_modules/x/y.node', 8192],
    ]);
    const after = new Map([
      ['/d/graph/a', 4096 + 1048576],
      ['/d/search/b', 2 * 1048576],
      ['/d/search/c', 1048576],
      ['/p/node_modules/x/y.node', 4096],
    ]);
    const kind = (f: string): string => f.split('/').slice(0, 3).join('/');
    expect(readInto(before, after, kind)).toEqual([
      ['/d/search', 3],
      ['/d/graph', 1],
    ]);
    expect(readInto(null, after, kind)).toBeNull();
  });

  it.runIf(process.platform === 'linux')('reads a file through so its pages are resident, and finds the device it lives on', () => {
    const file = join(dir, 'f');
    writeFileSync(file, Buffer.alloc(256 * 1024, 7));
    expect(readThrough(dir)).toBe(256 * 1024);
    const resident = residentBytes([file]);
    // fincore is util-linux's; a machine without it reads nothing, which the bench says in its notes.
    if (resident) expect(resident.get(file)).toBe(256 * 1024);
    const device = deviceOf(dir);
    const now = diskCounters(device);
    if (device) {
      expect(now).not.toBeNull();
      expect(diskSince(now, now)).toEqual({ reads: 0, readMs: 0, writes: 0, writeMs: 0 });
    }
  });
});
