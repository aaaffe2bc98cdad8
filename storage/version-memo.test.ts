import { describe, expect, it } from 'vitest';
import { nodeVersion } from '../test/helpers/rows.ts';
import { VersionMemo } from './version-memo.ts';

describe('version memos', () => {
  it('keep one value per memo and version', () => {
    const a = new VersionMemo<string>();
    const b = new VersionMemo<number>();
    const v = nodeVersion({ seq: 1, id: 'n1' });
    const w = nodeVersion({ seq: 2, id: 'n2' });
    expect(a.get(v)).toBeUndefined();
    a.set(v, 'first');
    b.set(v, 7);
    a.set(w, 'second');
    expect([a.get(v), b.get(v), a.get(w), b.get(w)]).toEqual(['first', 7, 'second', undefined]);
    a.set(v, 'again');
    expect(a.get(v)).toBe('again');
  });

  it('are invisible to what reads a version: keys, JSON, spreads and copies start without them', () => {
    const memo = new VersionMemo<string>();
    const v = nodeVersion({ seq: 1, id: 'n1' });
    const before = { keys: Object.keys(v), json: JSON.stringify(v) };
    memo.set(v, 'derived');
    expect({ keys: Object.keys(v), json: JSON.stringify(v) }).toEqual(before);
    const copy = { ...v };
    expect(memo.get(copy)).toBeUndefined();
    expect(structuredClone(v)).toEqual(copy);
  });
});
