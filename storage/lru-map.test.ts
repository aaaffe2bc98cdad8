import { describe, expect, it } from 'vitest';
import { LruMap } from './lru-map.ts';

describe('LruMap', () => {
  it('forgets the least recently used entry past its bound', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1).set('b', 2);
    expect(m.get('a')).toBe(1); // a is now the most recent
    m.set('c', 3);
    expect(m.has('b')).toBe(false);
    expect([m.get('a'), m.get('c'), m.size]).toEqual([1, 3, 2]);
  });

  it('peek does not refresh, set of a known key does', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1).set('b', 2);
    expect(m.peek('a')).toBe(1);
    m.set('c', 3);
    expect(m.has('a')).toBe(false);
    m.set('b', 20).set('d', 4);
    expect([m.has('c'), m.get('b')]).toEqual([false, 20]);
  });

  it('deletes what a predicate picks and refuses a bound below one', () => {
    const m = new LruMap<string, string>(10);
    m.set('t1/x', 't1').set('t2/y', 't2').set('t1/z', 't1');
    m.deleteWhere((_k, v) => v === 't1');
    expect([...m.values()]).toEqual(['t2']);
    expect(() => new LruMap(0)).toThrow(/positive integer/);
  });
});
