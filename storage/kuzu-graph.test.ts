// Both write paths of the graph store on real Kuzu: the same rows through prepared statements and through
// COPY load back equal (awkward text included), the size threshold picks the path, and a failing group
// leaves nothing behind on either path.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KuzuGraph, emptyGroup, type CommitGroup } from './kuzu-graph.ts';
import { paramOf } from './kuzu-prepared.ts';
import { OPEN_END } from './time.ts';
import type { EdgeRecord, NodeVersion } from './types.ts';

const AT = 1_763_812_345_678_901; // microseconds, past 2^50: a JS Date or a float would lose digits
const TEXTS: (string | null)[] = [
  '',
  null,
  'line one\nline two\r\nthree',
  'say "hi", then \'bye\'',
  'a\u0000b',
  'tab\there',
  'back\\slash \\n not a newline',
  'é 漢字 🎉',
  '\ud800 lone surrogate',
  ',',
  '"',
  '""',
  'null',
  '\\u0000',
  ' leading and trailing ',
];

function node(seq: number, i: number): NodeVersion {
  const t = TEXTS[i % TEXTS.length] ?? null;
  return {
    seq,
    tenant: i % 2 ? 'tenant "b"' : 'a',
    id: `n${i}\n${t ?? ''}`,
    space: `space ${i % 3}`,
    kind: 'claim',
    statement: t,
    category: i % 4 === 0 ? null : t === null ? '' : `cat ${t}`,
    payload: JSON.stringify({ text: t, n: i, nested: { quote: '"' } }),
    asserted_at: AT + i,
    valid_from: AT - 1,
    valid_to: i % 2 ? OPEN_END : AT + 10,
    captured_at: AT + 2 * i,
    known_at: -1_000 + i,
    batch_id: i % 3 === 0 ? null : `b${i}`,
    fact_key: i % 5 === 0 ? 'k' : null,
    fact_value: i % 5 === 0 ? JSON.stringify(t) : null,
    hash: 'ab'.repeat(32),
  };
}

function edge(seq: number, i: number): EdgeRecord {
  return {
    seq,
    tenant: 'a',
    source_id: `n${i}`,
    target_id: `n${i + 1}`,
    edge_type: 'CAUSES',
    confidence: [null, 1, 0.5, 0, 2, 0.1][i % 6] ?? null,
    lag: i % 2 ? 'PT1H' : null,
    mechanism: TEXTS[i % TEXTS.length] ?? null,
    space: 's',
    asserted_at: AT,
    valid_from: AT,
    valid_to: OPEN_END,
    captured_at: AT + i,
    known_at: AT + i,
    batch_id: null,
    hash: 'cd'.repeat(32),
  };
}

function group(from: number, n: number): CommitGroup {
  const nodes = Array.from({ length: n }, (_, i) => node(from + 2 * i, i));
  const edges = Array.from({ length: n }, (_, i) => edge(from + 2 * i + 1, i));
  return {
    batches: [
      {
        tenant: 'a',
        id: `batch ${from}\n"x"`,
        declared_captured_at: AT - 5,
        reason: TEXTS[from % TEXTS.length] ?? '',
        captured_at: AT + from,
      },
    ],
    nodes,
    edges,
    declarations: [
      {
        seq: from + 2 * n,
        tenant: 'a',
        fact_key: 'k\n"1"',
        key_fields: ['a', 'b "c"'],
        policy: 'strict',
        source_order: from % 2 ? null : ['x', ''],
        declared_at: AT,
      },
    ],
    verdicts: [
      {
        seq: from + 2 * n + 1,
        tenant: 'a',
        fact_key: 'k',
        target_id: null,
        value: JSON.stringify(''),
        outcome: 'chosen',
        method: 'm',
        ruleset: '{}',
        resolver: 'r\u0000',
        decided_at: AT,
        known_at: AT,
        space: null,
        hash: 'ef'.repeat(32),
      },
    ],
    invalidations: [
      {
        seq: from + 2 * n + 2,
        tenant: 'a',
        target_id: `n0\n${TEXTS[from % TEXTS.length] ?? ''}`,
        space: 'space 0',
        reason: TEXTS[(from + 1) % TEXTS.length] ?? '',
        by: from % 2 ? null : '',
        invalidated_at: AT + from,
        known_at: AT + from,
        batch_id: null,
      },
    ],
  };
}

const dir = mkdtempSync(join(tmpdir(), 'kuzu-graph-test-'));
let prepared: KuzuGraph, copied: KuzuGraph, switching: KuzuGraph;
beforeAll(async () => {
  prepared = await KuzuGraph.open(join(dir, 'prepared'), { preparedMaxRows: Number.MAX_SAFE_INTEGER });
  copied = await KuzuGraph.open(join(dir, 'copied'), { preparedMaxRows: 0 });
  switching = await KuzuGraph.open(join(dir, 'switching'), { preparedMaxRows: 5 });
});
afterAll(async () => {
  for (const g of [prepared, copied, switching]) await g?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('KuzuGraph write paths', () => {
  it('stores the same rows through prepared statements and COPY, and loads them back as written', async () => {
    const groups = [group(1, 1), group(100, TEXTS.length), group(1_000, 40)];
    for (const g of groups) {
      await prepared.commit(g);
      await copied.commit(g);
    }
    expect(prepared.writeStats()).toMatchObject({ preparedGroups: 3, copyGroups: 0 });
    expect(copied.writeStats()).toMatchObject({ preparedGroups: 0, copyGroups: 3 });
    const a = await prepared.loadAll();
    const b = await copied.loadAll();
    expect(a).toEqual(b);
    const all = (k: keyof CommitGroup) => groups.flatMap((g) => g[k] as unknown[]);
    expect(a.nodes).toEqual(all('nodes'));
    expect(a.edges).toEqual(all('edges'));
    expect(a.declarations).toEqual(all('declarations'));
    expect(a.verdicts).toEqual(all('verdicts'));
    expect(a.invalidations).toEqual(all('invalidations'));
    expect(new Set(a.batches.map((x) => x.id))).toEqual(new Set(all('batches').map((x) => (x as { id: string }).id)));
    // Empty text and NULL stay apart on both paths.
    expect(a.nodes.filter((n) => n.statement === '').length).toBeGreaterThan(0);
    expect(a.nodes.filter((n) => n.statement === null).length).toBeGreaterThan(0);
  });

  it('picks the path by the group size: up to the threshold prepared, above it COPY', async () => {
    const one: CommitGroup = { ...emptyGroup(), nodes: [node(10_000, 1)] };
    await switching.commit(one); // 1 row: autocommit
    await switching.commit({
      ...one,
      nodes: [node(10_001, 2), node(10_002, 3)],
      edges: [edge(10_003, 1), edge(10_004, 2), edge(10_005, 3)],
    }); // 5 rows
    expect(switching.writeStats()).toMatchObject({ preparedGroups: 2, preparedRows: 6, copyGroups: 0 });
    await switching.commit({
      ...one,
      nodes: [node(10_006, 4), node(10_007, 5), node(10_008, 6)],
      edges: [edge(10_009, 4), edge(10_010, 5), edge(10_011, 6)],
    }); // 6 rows
    expect(switching.writeStats()).toMatchObject({ preparedGroups: 2, copyGroups: 1, copyRows: 6 });
    const loaded = await switching.loadAll();
    expect(loaded.nodes.map((n) => n.seq)).toEqual([10_000, 10_001, 10_002, 10_006, 10_007, 10_008]);
    expect(loaded.edges.map((e) => e.seq)).toEqual([10_003, 10_004, 10_005, 10_009, 10_010, 10_011]);
  });

  it.each([
    ['prepared', () => prepared],
    ['COPY', () => copied],
  ] as const)('rolls a failing group back whole (%s)', async (_, graph) => {
    const before = await graph().counts();
    // The last table's row repeats a committed primary key: every row before it must go too.
    const bad = group(50_000, 3);
    bad.invalidations = [{ ...bad.invalidations[0]!, seq: 5 }]; // the invalidation of group(1, 1)
    await expect(graph().commit(bad)).rejects.toThrow(/primary key/i);
    expect(await graph().counts()).toEqual(before);
    // The writer is usable afterwards, with no transaction left open.
    await graph().commit(group(60_000, 2));
    expect((await graph().counts()).Block).toBe(before.Block! + 2);
  });

  it('binds instants as exact integers and refuses what an INT64 column would round', () => {
    expect(paramOf(AT, 'int')).toBe(AT);
    expect(paramOf(OPEN_END, 'int')).toBe(OPEN_END);
    expect(() => paramOf(1.5, 'int')).toThrow(TypeError);
    expect(() => paramOf(2 ** 60, 'int')).toThrow(TypeError);
    expect(() => paramOf(Number.NaN, 'float')).toThrow(TypeError);
    expect(paramOf('', 'text')).toBe('""');
    expect(paramOf(null, 'text')).toBeNull();
  });
});
