import { describe, expect, it } from 'vitest';
import { nodeVersion } from '../../test/helpers/rows.ts';
import { declarationInForce, latestDeclaration, rowsWithKey, sameRules } from './facts.ts';
import { TenantView } from './tenant-view.ts';
import type { Declaration, NodeVersion, Policy } from '../types.ts';

let seq = 0;
const decl = (fact_key: string, policy: Policy, declared_at: number): Declaration => ({
  seq: ++seq,
  tseq: seq,
  tenant: 't',
  fact_key,
  key_fields: [],
  policy,
  source_order: null,
  declared_at,
});
const node = (id: string, fact_key: string | null, space = 's'): NodeVersion =>
  nodeVersion({ seq: ++seq, id, space, fact_key, fact_value: fact_key === null ? null : '1' });

describe('declarations in force', () => {
  const view = new TenantView('t');
  view.addDeclaration(decl('rate', 'latest_valid', 100));
  view.addDeclaration(decl('other', 'strict', 150));
  view.addDeclaration(decl('rate', 'strict', 200));
  it('none before the first declaration', () => {
    expect(declarationInForce(view, 'rate', 99)).toBeNull();
  });
  it('each applies from its own declared_at (inclusive) until the next', () => {
    expect(declarationInForce(view, 'rate', 100)?.policy).toBe('latest_valid');
    expect(declarationInForce(view, 'rate', 199)?.policy).toBe('latest_valid');
    expect(declarationInForce(view, 'rate', 200)?.policy).toBe('strict');
    expect(latestDeclaration(view, 'rate')?.policy).toBe('strict');
  });
  it('keys do not mix', () => {
    expect(declarationInForce(view, 'other', 1_000)?.fact_key).toBe('other');
    expect(declarationInForce(view, 'nothing', 1_000)).toBeNull();
  });
  it('same rules compares policy, key fields and source order', () => {
    const base = { key_fields: ['a'], policy: 'source_priority' as const, source_order: ['x', 'y'] };
    expect(sameRules(base, { ...base, key_fields: ['a'] })).toBe(true);
    expect(sameRules(base, { ...base, source_order: ['y', 'x'] })).toBe(false);
    expect(sameRules(base, { ...base, source_order: null })).toBe(false);
    expect(sameRules(base, { ...base, policy: 'strict' })).toBe(false);
  });
});

describe('rows carrying a key', () => {
  it('indexes rows appended after the first look', () => {
    const view = new TenantView('t');
    view.addNode(node('a', 'k'));
    view.addNode(node('b', null));
    expect(rowsWithKey(view, 'k').map((n) => n.id)).toEqual(['a']);
    view.addNode(node('c', 'k', 'other'));
    view.addNode(node('d', 'j'));
    expect(rowsWithKey(view, 'k').map((n) => n.id)).toEqual(['a', 'c']);
    expect(rowsWithKey(view, 'k', 'other').map((n) => n.id)).toEqual(['c']);
    expect(rowsWithKey(view, 'j').map((n) => n.id)).toEqual(['d']);
    expect(rowsWithKey(view, 'none')).toEqual([]);
  });
});
