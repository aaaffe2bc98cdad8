// Both write paths of the graph store on real Kuzu: the same rows through the write journal and through
// COPY load back equal (awkward text included), the size threshold picks the path, a failing COPY leaves
// nothing behind, and rows a crash left in the journal are copied in on open, once.
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyRowsFor, KuzuGraph, type KuzuGraphOptions } from './kuzu-graph.ts';
import { journalRecordOf } from './tables.ts';
import { emptyGroup, idPlacements, type CommitGroup } from '../../commit-group.ts';
import { checkCell } from './table-rows.ts';
import { fill } from '../../read/resident-views.ts';
import { TenantView } from '../../read/tenant-view.ts';
import { encodeRecord, readSegment } from './write-journal.ts';
import { OPEN_END } from '../../time.ts';
import type { EdgeRecord, NodeVersion } from '../../types.ts';

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
    tseq: seq,
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
    tseq: seq,
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
    spaces: [],
    invalidationSpaces: [],
    batches: [
      {
        tenant: 'a',
        id: `batch ${from}\n"x"`,
        declared_captured_at: AT - 5,
        reason: TEXTS[from % TEXTS.length] ?? '',
        captured_at: AT + from,
        tseq: from,
      },
    ],
    nodes,
    edges,
    declarations: [
      {
        seq: from + 2 * n,
        tseq: from + 2 * n,
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
        tseq: from + 2 * n + 1,
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
        tseq: from + 2 * n + 2,
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
let journaled: KuzuGraph, copied: KuzuGraph, switching: KuzuGraph;
beforeAll(async () => {
  journaled = await KuzuGraph.open(join(dir, 'journaled'), { journalMaxRows: Number.MAX_SAFE_INTEGER, flushAfterMs: 3_600_000 });
  copied = await KuzuGraph.open(join(dir, 'copied'), { journalMaxRows: 0 });
  switching = await KuzuGraph.open(join(dir, 'switching'), { journalMaxRows: 5, flushAfterMs: 3_600_000 });
});
afterAll(async () => {
  for (const g of [journaled, copied, switching]) await g?.close();
  rmSync(dir, { recursive: true, force: true });
});

const segments = (graphDir: string): string[] => readdirSync(graphDir).filter((f) => f.startsWith('journal-'));

describe('KuzuGraph write paths', () => {
  it('stores the same rows through the journal and COPY, and loads them back as written', async () => {
    // Without backfill batches: a group that opens one is copied at once (see the next test).
    const groups = [group(1, 1), group(100, TEXTS.length), group(1_000, 40)].map((g) => ({ ...g, batches: [] }));
    for (const g of groups) {
      await journaled.commit(g);
      await copied.commit(g);
    }
    expect(journaled.writeStats()).toMatchObject({ journalGroups: 3, copyGroups: 0 });
    expect(journaled.journalRows()).toBeGreaterThan(0); // acknowledged from the journal, not yet in the engine
    expect(copied.writeStats()).toMatchObject({ journalGroups: 0, copyGroups: 3 });
    const a = await journaled.loadAll(); // a read copies the journal in first
    expect(journaled.journalRows()).toBe(0);
    expect(journaled.writeStats().flushes).toBeGreaterThan(0);
    const b = await copied.loadAll();
    expect(a).toEqual(b);
    const all = (k: keyof CommitGroup) => groups.flatMap((g) => g[k] as unknown[]);
    expect(a.nodes).toEqual(all('nodes'));
    expect(a.edges).toEqual(all('edges'));
    expect(a.declarations).toEqual(all('declarations'));
    expect(a.verdicts).toEqual(all('verdicts'));
    expect(a.invalidations).toEqual(all('invalidations'));
    // Empty text and NULL stay apart on both paths.
    expect(a.nodes.filter((n) => n.statement === '').length).toBeGreaterThan(0);
    expect(a.nodes.filter((n) => n.statement === null).length).toBeGreaterThan(0);
  });

  it('picks the path by the group size: up to the threshold journaled, above it COPY with the journal', async () => {
    const one: CommitGroup = { ...emptyGroup(), nodes: [node(10_000, 1)] };
    await switching.commit(one);
    await switching.commit({
      ...one,
      nodes: [node(10_001, 2), node(10_002, 3)],
      edges: [edge(10_003, 1), edge(10_004, 2), edge(10_005, 3)],
    }); // 5 rows
    expect(switching.writeStats()).toMatchObject({ journalGroups: 2, journalRows: 6, copyGroups: 0 });
    expect(switching.journalRows()).toBe(6);
    await switching.commit({
      ...one,
      nodes: [node(10_006, 4), node(10_007, 5), node(10_008, 6)],
      edges: [edge(10_009, 4), edge(10_010, 5), edge(10_011, 6)],
    }); // 6 rows: copied at once, and the journal's six with them
    expect(switching.writeStats()).toMatchObject({ journalGroups: 2, copyGroups: 1, copyRows: 6, flushedRows: 6 });
    expect(switching.journalRows()).toBe(0);
    expect(segments(join(dir, 'switching'))).toHaveLength(1); // the sealed segment is gone, a fresh one open
    const loaded = await switching.loadAll();
    expect(loaded.nodes.map((n) => n.seq)).toEqual([10_000, 10_001, 10_002, 10_006, 10_007, 10_008]);
    expect(loaded.edges.map((e) => e.seq)).toEqual([10_003, 10_004, 10_005, 10_009, 10_010, 10_011]);
    // A small group that opens a backfill batch is copied at once: its key is the client's batch id.
    const before = switching.writeStats().copyGroups;
    await switching.commit({ ...group(40_000, 1), edges: [], declarations: [], verdicts: [], invalidations: [] });
    expect(switching.writeStats().copyGroups).toBe(before + 1);
  });

  it('journals a bulk group by default: a 1,000-row import is acknowledged before any copy, a backfill copied at once', async () => {
    const bulkDir = join(dir, 'bulk');
    const bulk = await KuzuGraph.open(bulkDir, { flushAfterMs: 3_600_000 });
    try {
      const rows: CommitGroup = { ...emptyGroup(), nodes: Array.from({ length: 1_000 }, (_, i) => node(60_000 + i, i)) };
      await bulk.commit(rows);
      expect(bulk.writeStats()).toMatchObject({ journalGroups: 1, journalRows: 1_000, copyGroups: 0 });
      expect(bulk.journalRows()).toBe(1_000); // durable in the journal, not yet in the engine
      await bulk.commit({ ...group(70_000, 1), edges: [], declarations: [], verdicts: [], invalidations: [] });
      expect(bulk.writeStats()).toMatchObject({ journalGroups: 1, copyGroups: 1, flushedRows: 1_000 });
      expect(bulk.journalRows()).toBe(0); // copied with the backfill, in its transaction
      expect((await bulk.loadAll()).nodes.map((n) => n.seq)).toEqual([...rows.nodes.map((n) => n.seq), 70_000]);
    } finally {
      await bulk.close();
    }
  });

  it('copies the journal in the background once writes go quiet, or at once past its row threshold', async () => {
    // A copy costs a fixed ~0.3-1 s of CPU: one a second under a steady stream of writes was most of
    // what the writes cost. The timer waits for a pause of flushAfterMs, not flushAfterMs from the first row.
    const quietDir = join(dir, 'quiet');
    const quiet = await KuzuGraph.open(quietDir, { flushAfterMs: 1_500, flushRows: 500 });
    try {
      const started = performance.now();
      let seq = 90_000;
      while (performance.now() - started < 3_000) {
        await quiet.commit({ ...emptyGroup(), nodes: [node(seq, seq)] });
        seq++;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(quiet.writeStats().flushes).toBe(0); // writes never paused for 1.5 s: nothing copied yet
      expect(quiet.journalRows()).toBe(seq - 90_000);
      for (let waited = 0; quiet.journalRows() > 0 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(quiet.journalRows()).toBe(0); // copied once they paused
      expect(quiet.writeStats().flushes).toBe(1);
    } finally {
      await quiet.close();
    }
    // Past flushRows a copy starts at once, the timer (an hour here) aside.
    const full = await KuzuGraph.open(join(dir, 'full'), { flushAfterMs: 3_600_000, flushRows: 500 });
    try {
      await full.commit({ ...emptyGroup(), nodes: Array.from({ length: 400 }, (_, i) => node(95_000 + i, i)) });
      await new Promise((r) => setTimeout(r, 200));
      expect(full.journalRows()).toBe(400);
      await full.commit({ ...emptyGroup(), nodes: Array.from({ length: 200 }, (_, i) => node(96_000 + i, i)) });
      for (let waited = 0; full.journalRows() > 0 && waited < 30_000; waited += 50) await new Promise((r) => setTimeout(r, 50));
      expect(full.journalRows()).toBe(0);
      expect(full.writeStats().flushes).toBe(1);
    } finally {
      await full.close();
    }
  }, 60_000);

  it('holds writers at twice SVC_JOURNAL_COPY_ROWS, copying from that size on', async () => {
    // The setting is read when the store opens; tests' flushRows leave the cap alone, the setting moves both.
    const saved = process.env.SVC_JOURNAL_COPY_ROWS;
    process.env.SVC_JOURNAL_COPY_ROWS = '100';
    const small = await KuzuGraph.open(join(dir, 'copy-rows'), { flushAfterMs: 3_600_000 }).finally(() => {
      if (saved === undefined) delete process.env.SVC_JOURNAL_COPY_ROWS;
      else process.env.SVC_JOURNAL_COPY_ROWS = saved;
    });
    try {
      const most: number[] = [];
      for (let g = 0; g < 12; g++) {
        await small.commit({ ...emptyGroup(), nodes: Array.from({ length: 50 }, (_, i) => node(97_000 + g * 50 + i, i)) });
        most.push(small.journalRows());
      }
      // A write that brings the journal to 200 rows returns only once a copy took it below.
      expect(Math.max(...most)).toBeLessThan(200);
      expect(small.writeStats().flushes).toBeGreaterThanOrEqual(2);
      expect(small.writeStats().journalRows).toBe(600); // every group acknowledged from the journal
    } finally {
      await small.close();
    }
  }, 60_000);

  it('rolls a failing COPY group back whole, with the journal rows, and keeps them for the next copy', async () => {
    await switching.commit({ ...emptyGroup(), nodes: [node(20_000, 1)] }); // journaled
    const before = await copied.counts();
    // The last table's row repeats a committed primary key: every row before it must go too.
    const bad = group(50_000, 3);
    bad.invalidations = [{ ...bad.invalidations[0]!, seq: 5 }]; // the invalidation of group(1, 1)
    await expect(copied.commit(bad)).rejects.toThrow(/primary key/i);
    expect(await copied.counts()).toEqual(before);
    // The writer is usable afterwards, with no transaction left open.
    await copied.commit(group(60_000, 2));
    expect((await copied.counts()).Block).toBe(before.Block! + 2);

    await switching.commit({ ...emptyGroup(), nodes: [node(20_001, 2)] }); // journaled
    // The journal's timer is off for this store, so both journaled rows are still there.
    const pending = switching.journalRows();
    expect(pending).toBe(2);
    const bigBad = group(70_000, 3);
    bigBad.nodes[0] = { ...bigBad.nodes[0]!, seq: 10_000 }; // stored already
    await expect(switching.commit(bigBad)).rejects.toThrow(/primary key/i);
    expect(switching.journalRows()).toBe(pending); // still durable in the journal
    const after = await switching.loadAll();
    expect(after.nodes.map((n) => n.seq).filter((q) => q >= 20_000 && q < 40_000)).toEqual([20_000, 20_001]);
  });

  it('serves reads issued beside copies without failing either (Kuzu checkpoints after each COPY)', async () => {
    // Before reads were queued with copies, most of these copies failed after a 5 s checkpoint timeout.
    const started = performance.now();
    const before = (await copied.counts()).Block!;
    for (let i = 0; i < 8; i++) {
      const reads = [copied.nodesBetween(0, Number.MAX_SAFE_INTEGER, 1_000_000), copied.counts(), copied.lastWritten()];
      const write = copied.commit({ ...emptyGroup(), nodes: [node(80_000 + i, i)] });
      await Promise.all([...reads, write]);
    }
    expect((await copied.counts()).Block).toBe(before + 8);
    // Each overlap that stalled would have cost the checkpoint's whole timeout.
    expect(performance.now() - started).toBeLessThan(20_000);
  });

  it('refuses a cell an INT64 column would round before it is journaled', async () => {
    expect(() => checkCell(AT, 'int')).not.toThrow();
    expect(() => checkCell(OPEN_END, 'int')).not.toThrow();
    expect(() => checkCell(1.5, 'int')).toThrow(TypeError);
    expect(() => checkCell(2 ** 60, 'int')).toThrow(TypeError);
    expect(() => checkCell(Number.NaN, 'float')).toThrow(TypeError);
    expect(() => checkCell(null, 'int')).not.toThrow();
    const rows = journaled.journalRows();
    await expect(journaled.commit({ ...emptyGroup(), nodes: [{ ...node(30_000, 1), asserted_at: 1.5 }] })).rejects.toThrow(TypeError);
    expect(journaled.journalRows()).toBe(rows);
  });

  it('stores a cell left undefined as NULL, as the journal records it, instead of failing every copy', async () => {
    const odd = { ...node(40_000, 2), id: 'undefined-cell', category: undefined } as unknown as NodeVersion;
    await journaled.commit({ ...emptyGroup(), nodes: [odd] });
    expect(journaled.journalRows()).toBeGreaterThan(0);
    const loaded = await journaled.loadAll(); // copies the journal in
    expect(journaled.journalRows()).toBe(0);
    expect(loaded.nodes.find((n) => n.id === 'undefined-cell')).toMatchObject({ category: null, statement: odd.statement });
  });
});

describe('write journal recovery', () => {
  it('copies in what a crash left in the journal, skips rows already stored, and stops at a torn record', async () => {
    const graphDir = join(dir, 'crashed');
    const first = await KuzuGraph.open(graphDir, { journalMaxRows: 0 });
    await first.commit(group(100_000, 2)); // copied in at once
    await first.close();
    // Segments as a crashed process would have left them: one record whose rows are already in the engine
    // (killed between the copy's commit and the segment's deletion), one new record, and a torn record
    // after it (killed mid-append, so never acknowledged).
    const name = join(graphDir, 'journal-0000000900.log');
    const unbatched = (g: CommitGroup): CommitGroup => ({ ...g, batches: [] }); // batches are never journaled
    appendFileSync(name, encodeRecord(journalRecordOf(unbatched(group(100_000, 2)))));
    appendFileSync(name, encodeRecord(journalRecordOf(unbatched(group(200_000, 3)))));
    appendFileSync(name, encodeRecord(journalRecordOf(unbatched(group(300_000, 1)))).subarray(0, 40));
    expect(readSegment(name)).toHaveLength(2);

    const reopened = await KuzuGraph.open(graphDir);
    expect(reopened.journalRows()).toBe(0);
    expect(segments(graphDir)).toHaveLength(1);
    const loaded = await reopened.loadAll();
    const g1 = group(100_000, 2);
    const g2 = group(200_000, 3);
    // The new rows keep their order and content under numbers past everything used before, since an
    // interrupted copy may have left their old keys in Kuzu's index; the stored ones keep theirs.
    const renumbered = loaded.nodes.slice(g1.nodes.length);
    expect(loaded.nodes.slice(0, g1.nodes.length)).toEqual(g1.nodes);
    expect(renumbered.map(({ seq: _, ...n }) => n)).toEqual(g2.nodes.map(({ seq: _, ...n }) => n));
    expect(Math.min(...renumbered.map((n) => n.seq))).toBeGreaterThan(300_000);
    const byOld = [...g2.nodes, ...g2.edges, ...g2.declarations, ...g2.verdicts, ...g2.invalidations].sort((a, b) => a.seq - b.seq);
    const byNew = [
      ...renumbered,
      ...loaded.edges.slice(g1.edges.length),
      ...loaded.declarations.slice(1),
      ...loaded.verdicts.slice(1),
      ...loaded.invalidations.slice(1),
    ].sort((a, b) => a.seq - b.seq);
    expect(byNew.map((r) => JSON.stringify({ ...r, seq: 0 }))).toEqual(byOld.map((r) => JSON.stringify({ ...r, seq: 0 })));
    expect(reopened.renumberedAbove()).toBe(200_000 - 1);
    expect(loaded.batches.map((b) => b.id)).toEqual([g1.batches[0]!.id]);
    expect(loaded.nodes).toHaveLength(g1.nodes.length + g2.nodes.length); // the torn record was never acknowledged
    // The original numbers stay unused, so inserting them again would not meet a stale index entry.
    expect(loaded.nodes.some((n) => n.seq >= 200_000 && n.seq < 300_000)).toBe(false);
    // The index of rows by space was renumbered with them: each space loads its own rows, all of them.
    const pairs = new Map([...loaded.nodes, ...loaded.edges, ...loaded.invalidations].map((r) => [`${r.tenant}/${r.space}`, r]));
    expect(pairs.size).toBeGreaterThan(0);
    for (const { tenant, space } of pairs.values()) {
      const own = await reopened.loadSpace(tenant, space);
      const mine = <R extends { tenant: string; space: string }>(rows: R[]): R[] =>
        rows.filter((r) => r.tenant === tenant && r.space === space);
      expect(own.nodes).toEqual(mine(loaded.nodes));
      expect(own.edges).toEqual(mine(loaded.edges));
      expect(own.invalidations).toEqual(mine(loaded.invalidations));
    }
    expect((await reopened.loadSpace('nobody', 'nowhere')).nodes).toEqual([]);
    await reopened.close();
  });
});

describe('loads of several spaces', () => {
  it("split each space's rows as a load of it alone does, journal included, and as the tenant's view cuts them", async () => {
    const graphDir = join(dir, 'several');
    const first = await KuzuGraph.open(graphDir, { journalMaxRows: 0 });
    const stored = group(100_000, 6);
    await first.commit(stored); // copied in at once
    await first.close();
    const g = await KuzuGraph.open(graphDir, { journalMaxRows: Number.MAX_SAFE_INTEGER, flushAfterMs: 3_600_000 });
    const late = { ...group(200_000, 4), batches: [] }; // a group with a batch (a backfill) is copied in at once
    // A stored invalidation newly held by another space through a journaled Holds row, a journaled one too.
    late.invalidationSpaces = [
      { space: 'space 2', row: stored.invalidations[0]! },
      { space: 'space 1', row: late.invalidations[0]! },
    ];
    await g.commit(late);
    expect(g.journalRows()).toBeGreaterThan(0);
    for (const tenant of ['a', 'tenant "b"']) {
      const spaces = [...new Set([...stored.nodes, ...stored.edges, ...late.nodes].filter((r) => r.tenant === tenant).map((r) => r.space))];
      expect(spaces.length).toBeGreaterThan(1);
      const together = await g.loadSpaces(tenant, [...spaces, 'nowhere', spaces[0]!]);
      expect([...together.keys()]).toEqual([...spaces, 'nowhere']);
      expect(together.get('nowhere')).toEqual({ nodes: [], edges: [], invalidations: [] });
      for (const space of spaces) expect(together.get(space)).toEqual(await g.loadSpace(tenant, space));
      if (tenant === 'a') {
        const seqs = (space: string): number[] => together.get(space)!.invalidations.map((i) => i.seq);
        expect(seqs('space 2')).toContain(stored.invalidations[0]!.seq);
        expect(seqs('space 1')).toContain(late.invalidations[0]!.seq);
      }
      // The tenant's node and edge rows (the journal copied in first), cut into spaces by the view. (Its
      // invalidations are cut by the ids a space's rows name, which the holds made up above do not follow.)
      const whole = new TenantView(tenant);
      fill(whole, await g.loadTenant(tenant));
      for (const space of spaces) {
        const { nodes, edges } = whole.rowsOfSpace(space);
        expect({ nodes: together.get(space)!.nodes, edges: together.get(space)!.edges }).toEqual({ nodes, edges });
      }
    }
    await g.close();
  });

  it('shares turns among the loads asked at once, each caller given the rows its space loads alone', async () => {
    const g = await KuzuGraph.open(join(dir, 'space-turns'), { flushAfterMs: 3_600_000 });
    try {
      await g.commit(group(100_000, 8));
      await g.counts(); // copies the journal in
      await g.commit({ ...group(200_000, 5), batches: [] }); // journaled rows beside the stored ones
      expect(g.journalRows()).toBeGreaterThan(0);
      const asked = (['a', 'tenant "b"'] as const).flatMap((tenant) =>
        ['space 0', 'space 1', 'space 2', 's', 'nowhere'].map((space) => ({ tenant, space })),
      );
      const alone = [];
      for (const { tenant, space } of asked) alone.push(await g.loadSpace(tenant, space));
      for (const table of ['nodes', 'edges', 'invalidations'] as const) expect(alone.some((rows) => rows[table].length > 0)).toBe(true);
      const turns = g.spaceLoadTurns();
      const together = await Promise.all(asked.map(({ tenant, space }) => g.loadSpace(tenant, space)));
      expect(together).toEqual(alone);
      // One turn per caller before; now a turn per tenant (and the one the first caller started at once).
      expect(g.spaceLoadTurns() - turns).toBeLessThanOrEqual(3);
    } finally {
      await g.close();
    }
  });
});

/**
 * A store whose copies can be held before their COMMIT: after `hold()`, the next copy stops there
 * (`atCommit` resolves) until `release()`.
 */
async function storeWithHeldCopies(
  name: string,
  options: Pick<KuzuGraphOptions, 'flushAfterMs' | 'flushRows'> = {},
): Promise<{ g: KuzuGraph; hold: () => { atCommit: Promise<void>; release: () => void } }> {
  let holding: Promise<void> | null = null;
  let reached: () => void = () => undefined;
  const g = await KuzuGraph.open(join(dir, name), {
    journalMaxRows: Number.MAX_SAFE_INTEGER,
    flushAfterMs: 3_600_000,
    ...options,
    beforeCopyCommit: async () => {
      if (!holding) return;
      reached();
      await holding;
    },
  });
  const hold = (): { atCommit: Promise<void>; release: () => void } => {
    const atCommit = new Promise<void>((r) => {
      reached = r;
    });
    let release!: () => void;
    holding = new Promise<void>((r) => {
      release = () => {
        holding = null;
        r();
      };
    });
    return { atCommit, release };
  };
  return { g, hold };
}

describe('background copies of the journal', () => {
  it('carry more rows as the store grows, within their range, unless SVC_JOURNAL_COPY_ROWS sets them', async () => {
    expect([0, 1_000_000, 3_000_000, 10_000_000].map((n) => copyRowsFor(n))).toEqual([64_000, 64_000, 125_000, 128_000]);
    const path = join(dir, 'copies-grow');
    const options = {
      journalMaxRows: Number.MAX_SAFE_INTEGER,
      flushAfterMs: 3_600_000,
      copyRows: { min: 100, max: 400, storedRowsPerRow: 2 },
    };
    const settled = async (g: KuzuGraph): Promise<number> => {
      for (const until = Date.now() + 10_000; g.journalRows() > 0 && Date.now() < until;) await new Promise((r) => setTimeout(r, 20));
      return g.journalRows();
    };
    const g = await KuzuGraph.open(path, options);
    try {
      expect(g.copyRows()).toBe(100);
      await g.commit({ ...group(1_000, 300), batches: [] }); // 600 rows, past 100: a copy starts at once
      expect(await settled(g)).toBe(0);
      expect(g.copyRows()).toBe(300); // 600 stored / 2
      await g.commit({ ...group(5_000, 100), batches: [] }); // 200 rows: under 300, they wait in the journal
      await new Promise((r) => setTimeout(r, 300));
      expect(g.journalRows()).toBeGreaterThanOrEqual(200);
      await g.commit({ ...group(7_000, 60), batches: [] }); // 320 rows now: a copy starts
      expect(await settled(g)).toBe(0);
      expect(g.copyRows()).toBe(400); // 920 stored / 2, at most 400
    } finally {
      await g.close();
    }
    const again = await KuzuGraph.open(path, { ...options, copyRows: { ...options.copyRows, max: 10_000 } });
    expect(again.copyRows()).toBe(460); // counted on open
    await again.close();
    process.env.SVC_JOURNAL_COPY_ROWS = '250';
    try {
      const fixed = await KuzuGraph.open(path, options);
      expect(fixed.copyRows()).toBe(250);
      await fixed.close();
    } finally {
      delete process.env.SVC_JOURNAL_COPY_ROWS;
    }
  });

  it('copies the rows appended while a copy ran, with no later write or read to start it', async () => {
    const { g, hold } = await storeWithHeldCopies('quiet-timer-during-copy', { flushRows: 100, flushAfterMs: 20 });
    try {
      const held = hold();
      await g.commit({ ...group(1_000, 60), batches: [] }); // 120 rows: a background copy starts at once
      await held.atCommit;
      await g.commit({ ...group(3_000, 2), batches: [] }); // journaled while that copy is held
      await new Promise((r) => setTimeout(r, 200)); // the quiet timer fires while the copy still runs
      expect(g.journalRows()).toBeGreaterThan(0);
      held.release();
      const until = Date.now() + 10_000;
      while (g.journalRows() > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(g.journalRows()).toBe(0);
      expect(g.writeStats().flushes).toBe(2);
    } finally {
      await g.close();
    }
  });
});

describe('KuzuGraph reads for planning writes', () => {
  const held = (g: CommitGroup, tenant: string): { ids: Set<string>; spaces: Set<string> } => ({
    ids: new Set([
      ...g.nodes.filter((n) => n.tenant === tenant).map((n) => n.id),
      ...g.edges.filter((e) => e.tenant === tenant).flatMap((e) => [e.source_id, e.target_id]),
    ]),
    spaces: new Set([...g.nodes, ...g.edges, ...g.invalidations].filter((r) => r.tenant === tenant).map((r) => r.space)),
  });

  it("lists a tenant's ids and spaces, and its (id, space) pairs, stored and journaled, awkward text included", async () => {
    const g = await KuzuGraph.open(join(dir, 'keys'), { journalMaxRows: Number.MAX_SAFE_INTEGER, flushAfterMs: 3_600_000 });
    try {
      const stored = { ...group(1_000, 30), batches: [] };
      await g.commit(stored);
      await g.counts(); // copies the journal in
      const journaled = { ...group(2_000, 30), batches: [] };
      for (const n of journaled.nodes) n.id = `later ${n.id}`;
      await g.commit(journaled);
      expect(g.journalRows()).toBeGreaterThan(0);
      for (const tenant of ['a', 'tenant "b"', 'nobody']) {
        const ids = new Set<string>();
        const spaces = new Set<string>();
        let count = -1;
        await g.tenantKeys(tenant, { count: (n) => (count = n), id: (id) => ids.add(id), space: (s) => spaces.add(s) });
        const a = held(stored, tenant);
        const b = held(journaled, tenant);
        expect(ids).toEqual(new Set([...a.ids, ...b.ids]));
        expect(spaces).toEqual(new Set([...a.spaces, ...b.spaces]));
        expect(count).toBe(ids.size + spaces.size);
        // The same scan's pairs: each id with every space holding it.
        const pairs = new Set<string>();
        let pairCount = -1;
        await g.tenantPlacements(tenant, { count: (n) => (pairCount = n), pair: (id, space) => pairs.add(JSON.stringify([id, space])) });
        const want = [...idPlacements(stored), ...idPlacements(journaled)].filter(([t]) => t === tenant);
        expect(pairs).toEqual(new Set(want.map(([, id, space]) => JSON.stringify([id, space]))));
        expect(pairCount).toBe(pairs.size);
        if (tenant === 'a') expect([...pairs].some((p) => !p.startsWith('["later'))).toBe(true);
      }
    } finally {
      await g.close();
    }
  });

  it("loads spaces beside a copy's statements, each row once whether or not the copy has landed", async () => {
    // A cold user's first read under an import waited for the copy in progress and the one queued after it.
    const { g, hold } = await storeWithHeldCopies('load-beside');
    const rowsOf = (from: number, space: string, n: number): CommitGroup => ({
      ...emptyGroup(),
      nodes: Array.from({ length: n }, (_, i) => ({ ...node(from + i, i), tenant: 'a', space, id: `${space} ${from + i}` })),
    });
    const seqs = (rows: { nodes: NodeVersion[] }): number[] => rows.nodes.map((n) => n.seq);
    try {
      await g.commit(rowsOf(3_000, 'p', 5));
      await g.counts(); // stored
      await g.commit(rowsOf(3_100, 'q', 4));
      await g.commit(rowsOf(3_200, 'p', 2)); // both journaled, then held in a copy before its COMMIT
      const { atCommit, release } = hold();
      const reading = g.counts();
      await atCommit;
      let timer: NodeJS.Timeout | undefined;
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('the loads waited for the copy held before its COMMIT')), 10_000);
      });
      const [p, q] = await Promise.race([Promise.all([g.loadSpace('a', 'p'), g.loadSpace('a', 'q')]), stuck]).finally(() => {
        clearTimeout(timer);
        release();
      });
      expect(seqs(p)).toEqual([3_000, 3_001, 3_002, 3_003, 3_004, 3_200, 3_201]);
      expect(seqs(q)).toEqual([3_100, 3_101, 3_102, 3_103]);
      await reading;
      expect(g.journalRows()).toBe(0);
      expect(seqs(await g.loadSpace('a', 'p'))).toEqual(seqs(p)); // landed: the same rows from the engine alone
      expect(seqs(await g.loadSpace('a', 'q'))).toEqual(seqs(q));
    } finally {
      await g.close();
    }
  });

  it('looks many ids up one at a time in an index past its scan limit, with the answer of the lists', async () => {
    const stored = { ...group(1_000, 60), batches: [] };
    const answers: Map<string, Set<string>>[] = [];
    const lookups: number[] = [];
    for (const [name, identScanRowsMax] of [
      ['lists', undefined],
      ['one-by-one', 50],
    ] as const) {
      const g = await KuzuGraph.open(join(dir, `ident-${name}`), { identScanRowsMax });
      try {
        await g.commit(stored);
        await g.counts(); // copies the journal in
        const ids = [...held(stored, 'a').ids, 'nowhere'];
        expect(ids.length).toBeGreaterThan(40); // past IDENT_LOOKUPS_MAX, where lists are used below the limit
        const before = g.identLookups();
        answers.push(await g.spacesHolding('a', ids));
        lookups.push(g.identLookups() - before);
        if (identScanRowsMax !== undefined) {
          // Hundreds of ids take several turns on the reader: a lookup asked meanwhile is answered first.
          const order: string[] = [];
          const many = g
            .spacesHolding('a', [...ids, ...Array.from({ length: 300 }, (_, i) => `absent ${i}`)])
            .then(() => order.push('many'));
          const one = g.spacesHolding('a', [ids[0]!]).then(() => order.push('one'));
          await Promise.all([many, one]);
          expect(order).toEqual(['one', 'many']);
        }
      } finally {
        await g.close();
      }
    }
    expect(lookups[0]).toBe(1); // one list
    expect(lookups[1]).toBe(held(stored, 'a').ids.size + 1); // one lookup per id
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]!.size).toBe(held(stored, 'a').ids.size);
  });

  it('answers gets by id asked at once in shared turns, each with its own spaces, stored or journaled', async () => {
    const g = await KuzuGraph.open(join(dir, 'ident-turns'), { flushAfterMs: 3_600_000 });
    try {
      const stored = { ...group(1_000, 90), batches: [] };
      stored.edges.forEach((e, k) => k % 2 && (e.space = 'space "third"')); // ids stored in two spaces
      await g.commit(stored);
      await g.counts(); // copies the journal in
      const journaled = { ...group(2_000, 10), batches: [] };
      for (const n of journaled.nodes) n.id = `later ${n.id}`;
      for (const e of journaled.edges) e.space = 'space "other"'; // brings stored ids into a second space
      await g.commit(journaled);
      expect(g.journalRows()).toBeGreaterThan(0);
      const nodes = [...stored.nodes, ...journaled.nodes].filter((n) => n.tenant === 'a');
      const ids = [...new Set([...nodes.map((n) => n.id), ...held(stored, 'a').ids, 'nowhere'])];
      // The answer of the lists (past IDENT_LOOKUPS_MAX ids, below the scan limit), an id's every space.
      const lists = await g.spacesHolding('a', ids);
      expect([...lists.values()].some((spaces) => spaces.size > 1)).toBe(true);
      const turns = g.identLookupTurns();
      const answers = await Promise.all(ids.map((id) => g.spacesHolding('a', [id])));
      ids.forEach((id, i) => expect(answers[i]!.get(id)).toEqual(lists.get(id)));
      nodes.forEach((n) => expect(lists.get(n.id)).toContain(n.space));
      // One turn per caller before; now the callers asking while a turn runs share the next one.
      expect(g.identLookupTurns() - turns).toBeLessThanOrEqual(Math.ceil(ids.length / 16) + 1);
      expect(ids.length).toBeGreaterThan(32);
    } finally {
      await g.close();
    }
  });

  it("looks ids up beside a copy's statements, not behind them, seeing the rows being copied", async () => {
    const { g, hold } = await storeWithHeldCopies('beside');
    try {
      const first = { ...group(1_000, 10), batches: [] };
      await g.commit(first);
      await g.counts();
      const second = { ...group(2_000, 10), batches: [] };
      for (const n of second.nodes) n.id = `second ${n.id}`;
      await g.commit(second);
      const { atCommit, release } = hold();
      // A read of the engine copies the journal in; its copy is held open before its COMMIT.
      const reading = g.counts();
      await atCommit;
      const ids = [first.nodes[0]!.id, second.nodes[2]!.id, 'nowhere'];
      // Released whatever the lookup does, so a failing lookup fails the test instead of hanging its close.
      const beside = await g.spacesHolding('a', ids).finally(release);
      expect(beside.get(first.nodes[0]!.id)).toEqual(new Set([first.nodes[0]!.space]));
      expect(beside.get(second.nodes[2]!.id)).toEqual(new Set([second.nodes[2]!.space]));
      expect(beside.has('nowhere')).toBe(false);
      await reading;
      expect(g.journalRows()).toBe(0);
      // Landed: the same answer from the engine alone.
      expect(await g.spacesHolding('a', ids)).toEqual(beside);
    } finally {
      await g.close();
    }
  });
});
