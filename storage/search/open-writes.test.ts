import { describe, expect, it } from 'vitest';
import type { EdgeRecord, NodeVersion } from '../types.ts';
import { OpenWrites } from './open-writes.ts';

const node = (tenant: string, id: string, seq: number, captured_at: number): NodeVersion =>
  ({ tenant, id, seq, tseq: seq, captured_at, space: 's' }) as NodeVersion;
const edge = (tenant: string, seq: number, captured_at: number): EdgeRecord =>
  ({ tenant, seq, tseq: seq, captured_at, space: 's', source_id: 'x', target_id: 'y' }) as EdgeRecord;
const ids = (nodes: NodeVersion[]): string[] => nodes.map((n) => n.id);

describe('OpenWrites', () => {
  it('passes a write made here through whole', () => {
    const open = new OpenWrites(() => false);
    expect(ids(open.admit({ nodes: [node('t', 'a', 1, 10), node('t', 'b', 2, 10)], edges: [edge('t', 3, 10)] }))).toEqual(['a', 'b']);
    expect(open.size).toBe(0);
    expect(open.lowestSeq()).toBe(Number.POSITIVE_INFINITY);
  });

  it('holds the last imported write of a page until a page of a later write, then gives it first', () => {
    const imported = new Set<object>();
    const open = new OpenWrites((r) => imported.has(r));
    const page = <T extends object>(...rows: T[]): T[] => {
      for (const r of rows) imported.add(r);
      return rows;
    };
    // Write 10 whole, write 20 cut after its first node.
    expect(ids(open.admit({ nodes: page(node('t', 'a', 1, 10), node('t', 'b', 3, 20)), edges: page(edge('t', 2, 10)) }))).toEqual(['a']);
    expect(open.holds('t')).toBe(true);
    expect(open.lowestSeq()).toBe(3);
    // Write 20 goes on: its second node and an edge. Still held.
    expect(open.admit({ nodes: page(node('t', 'c', 4, 20)), edges: page(edge('t', 5, 20)) })).toEqual([]);
    // An edge-only page of write 20, and another tenant's write made here meanwhile: t stays held.
    expect(ids(open.admit({ nodes: [node('u', 'z', 7, 5)], edges: page(edge('t', 6, 20)) }))).toEqual(['z']);
    expect(open.size).toBe(2);
    // A page starting write 30: write 20 is whole and comes first, in seq order; write 30 is held.
    expect(ids(open.admit({ nodes: page(node('t', 'd', 8, 30)), edges: [] }))).toEqual(['b', 'c']);
    expect(ids(open.release('u'))).toEqual([]);
    expect(ids(open.release('t'))).toEqual(['d']);
    expect(open.holds('t')).toBe(false);
  });

  it('gives up a held write when the tenant is written here', () => {
    const imported = new Set<object>();
    const open = new OpenWrites((r) => imported.has(r));
    const held = node('t', 'a', 1, 10);
    imported.add(held);
    expect(open.admit({ nodes: [held], edges: [] })).toEqual([]);
    expect(ids(open.admit({ nodes: [node('t', 'b', 2, 11)], edges: [] }))).toEqual(['a', 'b']);
    expect(open.size).toBe(0);
  });
});
