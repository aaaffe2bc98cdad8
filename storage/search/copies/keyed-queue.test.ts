// The copy files' thread serves a search ahead of other files' appends, never ahead of its own file's.
import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.ts';

const drain = (q: KeyedQueue<{ key: string; n: string }>): string[] => {
  const out: string[] = [];
  for (let item = q.next(); item; item = q.next()) out.push(item.n);
  return out;
};

describe('the copy files thread queue', () => {
  it('serves searches first, each after its own key’s earlier work, the rest in order per key', () => {
    const q = new KeyedQueue<{ key: string; n: string }>();
    const push = (key: string, n: string, urgent = false): void => q.push({ key, n }, urgent);
    push('a', 'a1');
    push('b', 'b1');
    push('a', 'a2');
    push('c', 'c1');
    push('b', 'b2');
    push('b', 'b-search', true);
    push('a', 'a3');
    push('c', 'c-search', true);
    push('b', 'b3');
    expect(q.size).toBe(9);
    expect(q.urgent).toBe(true);
    expect(drain(q)).toEqual(['b1', 'b2', 'b-search', 'c1', 'c-search', 'a1', 'a2', 'a3', 'b3']);
    expect(q.size).toBe(0);
    expect(q.urgent).toBe(false);
  });

  it('keeps each key’s order whatever is pushed while it drains', () => {
    const q = new KeyedQueue<{ key: string; n: string }>();
    const seen = new Map<string, number[]>();
    let n = 0;
    for (let round = 0; round < 200; round++) {
      const key = `k${round % 7}`;
      q.push({ key, n: `${key}:${n++}` }, round % 5 === 0);
      if (round % 3 === 0) {
        const item = q.next()!;
        const [k, i] = item.n.split(':');
        seen.set(k!, [...(seen.get(k!) ?? []), Number(i)]);
      }
    }
    for (const item of drain(q)) {
      const [k, i] = item.split(':');
      seen.set(k!, [...(seen.get(k!) ?? []), Number(i)]);
    }
    for (const order of seen.values()) expect(order).toEqual([...order].sort((x, y) => x - y));
    expect([...seen.values()].flat()).toHaveLength(200);
  });
});
