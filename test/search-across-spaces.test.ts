// search_memory without a space, when the tenant's view is not resident, ranks over the views of the
// spaces holding what it reads (loaded round by round) and the tenant's lists kept by the ledger, never
// loading the tenant, and answers byte for byte what the tenant's view answers: results, scores and
// certificates, for several queries, depths, families, filters, current_only, include_invalidated, past
// and present as_of and valid_at, with invalidations and supersession crossing spaces, backfill, entities,
// exchanges of episodes and rows still in the write journal; a hundred results in a hundred spaces too.
// Past MAX_READ_SPACES spaces (reached only through expansion) it falls back to the tenant's view, counted,
// through the same rounds as a read by id (test/read-by-id.test.ts tests that fallback).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import { MAX_READ_SPACES } from '../storage/read/read-by-id.ts';
import { LocalEmbedder } from '../storage/search/embed/local-embedder.ts';
import { SearchIndex } from '../storage/search/search-index.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import type { Context } from '../tools/context.ts';
import { searchMemory, SearchMemoryInput } from '../tools/search-memory.ts';
import {
  FILLER_ROWS,
  restartableLedger,
  SMALL_BUDGET_MB as BUDGET_MB,
  spacesLoaded,
  type RestartableLedger,
} from './helpers/temp-ledger.ts';
import { expectColdAndWarmAsTenantView } from './helpers/same-answers.ts';
import { claimInput, DAY, edgeInput, T0 } from './helpers/write-inputs.ts';

const T = 'acme';
const node = claimInput;
const edge = edgeInput;

let store: RestartableLedger | null = null;
let index: SearchIndex | null = null;
afterEach(async () => {
  await index?.close();
  index = null;
  await store?.remove();
  store = null;
});

/** Restarts the ledger and the search index over the same folders. */
async function restart(s: RestartableLedger): Promise<Ledger> {
  await index?.close();
  const l = await s.open();
  index = await SearchIndex.open(join(s.dir, 'search'), new LocalEmbedder(), l, null);
  return l;
}

async function write(l: Ledger, input: WriteInput): Promise<void> {
  const out = await l.write(T, input);
  expect(out.refused).toEqual([]);
}

async function evictAll(l: Ledger): Promise<void> {
  await l.viewOf(T, 'filler');
  expect(spacesLoaded(l)).toEqual(['filler']);
}

const ctxOf = (ledger: Ledger): Context => ({ ledger, tenant: T, services: { version: 'test', search: index! } });

async function answer(l: Ledger, input: Record<string, unknown>): Promise<string> {
  // Settled, not only caught up: full-text scores change when the index folds appended rows in, a second
  // after the last write, so answers compared with each other are all taken on a settled index.
  await index!.settled();
  const out = await searchMemory.handler(SearchMemoryInput.parse(input), ctxOf(l));
  // tx_as_of is when the server answered, which differs between any two reads.
  return JSON.stringify({ ...out, certificate: { ...out.certificate, tx_as_of: undefined } });
}

const words = (id: string, text: string, extra: Partial<WriteInput['nodes'][number]> = {}): WriteInput['nodes'][number] =>
  node(id, { statement: text, ...extra });

describe('search without a space, of a tenant not resident', () => {
  it('loads only the spaces holding what it reads, and answers as the tenant view does', async () => {
    store = restartableLedger('search-across', { memoryMb: BUDGET_MB, graph: { flushAfterMs: 3_600_000 } });
    let l = await restart(store);
    const marks: Micros[] = [];
    await write(l, {
      space: 'filler',
      nodes: Array.from({ length: FILLER_ROWS }, (_, i) => words(`filler${i}`, `inventory line ${i} of spare bolts`)),
      edges: [],
    });
    await write(l, {
      space: 'A',
      nodes: [
        words('a1', 'The river flooded the northern rail line after heavy rain', { category: 'weather' }),
        words('a2', 'Commuters faced long delays on the rail line'),
        words('a3', 'The harbour ferry timetable changed for the winter', { valid_from: T0, valid_to: T0 + 10 * DAY }),
        words('joanna', 'Joanna', { kind: 'entity' }),
      ],
      edges: [edge('a1', 'CAUSES', 'a2'), edge('a2', 'SUPPORTS', 'a3')],
    });
    marks.push(l.now());
    await write(l, {
      space: 'B',
      nodes: [
        words('b1', 'Joanna said the old buildings by the river are lovely', { kind: 'note' }),
        words('b2', 'The river flood closed the rail line for three days'),
        words('b3', 'Lovely scenery there', { kind: 'episode' }),
        words('b4', 'Yes, we walked past the flooded station', { kind: 'episode' }),
      ],
      edges: [
        edge('b1', 'CAUSES', 'a3'),
        edge('b2', 'SUPERSEDES', 'a1'),
        edge('b3', 'MENTIONS', 'joanna'),
        edge('b1', 'MENTIONS', 'joanna'),
      ],
    });
    await write(l, {
      space: 'C',
      nodes: [
        words('c1', 'Rain gauges recorded a record rainfall by the river'),
        words('a3', 'The harbour ferry runs hourly', { valid_from: T0 + 20 * DAY }),
      ],
      edges: [edge('c1', 'CONTRADICTS', 'b1'), edge('c1', 'TRIGGERS', 'a1')],
    });
    marks.push(l.now());
    await l.invalidate(T, { id: 'c1', reason: 'wrong gauge' });
    await write(l, {
      space: 'D',
      backfill: { declared_captured_at: marks[0]!, reason: 'imported late' },
      nodes: [words('d1', 'A flood warning for the river was issued in the morning', { category: 'weather' })],
      edges: [edge('d1', 'TRIGGERS', 'b2'), edge('d1', 'QUALIFIES', 'a2')],
    });
    marks.push(l.now());

    // Restarted: every row above is in the engine; the rows below stay in the write journal.
    l = await restart(store);
    expect(l.tenants()).toEqual([]);
    await write(l, {
      space: 'E',
      nodes: [words('e1', 'The rail line reopened after the flood'), words('e2', 'Ferry service resumed on the river')],
      edges: [edge('e1', 'SUPERSEDES', 'b2'), edge('e2', 'SUPERSEDES', 'a3'), edge('e1', 'CAUSES', 'a2')],
    });
    await l.invalidate(T, { id: 'b1', reason: 'retracted' });
    await l.invalidate(T, { id: 'e2', reason: 'gone', space: 'E' });
    marks.push(l.now());

    // Full-text scores change when the index settles after these writes: both paths answer after it.
    await index!.settled();
    const queries = ['river flood rail', 'What did Joanna say about the buildings?', 'ferry timetable', 'walked past station'];
    // Instants, not "now" (each read would resolve it anew).
    const asOfs = [marks[0]! - 1, ...marks.slice(1)].map((m) => formatInstant(m));
    const lenses: Record<string, unknown>[] = [
      {},
      { valid_at: formatInstant(T0 + 25 * DAY) },
      { current_only: 'true' },
      { include_invalidated: 'true' },
      { kind: 'claim' },
      { category: 'weather' },
      { family: ['argumentative', 'general'] },
    ];
    const reads: Record<string, unknown>[] = [];
    for (const query of queries)
      for (const as_of of asOfs)
        for (const lens of lenses) for (const depth of [0, 1, 3]) reads.push({ query, as_of, depth, limit: 5, ...lens });

    // Cold: every view but the filler's evicted before each query's first read at each as_of.
    const cold: string[] = [];
    for (const read of reads) {
      if (read['depth'] === 0 && Object.keys(read).length === 4) await evictAll(l);
      cold.push(await answer(l, read));
      expect(l.tenants()).toEqual([]);
      expect(spacesLoaded(l).filter((s) => !['filler', 'A', 'B', 'C', 'D', 'E'].includes(s))).toEqual([]);
    }
    // Warm (the spaces' views resident from earlier reads), then the tenant's view resident: it answers.
    await expectColdAndWarmAsTenantView(
      reads,
      cold,
      (read) => answer(l, read),
      () => l.load(T),
      () => l.acrossStats(),
    );

    // What the comparison covers: expansions at depth 3, superseded and invalidated blocks left out or
    // marked, an entity's mention, masked rows and backfill in certificates.
    type Out = {
      results: { node: { id: string; superseded_by: string[]; invalidated?: unknown }; match: string }[];
      certificate: Record<string, unknown>;
    };
    const at = (input: Record<string, unknown>): Out => {
      const key = (r: Record<string, unknown>): string => JSON.stringify(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : 1)));
      const i = reads.findIndex((r) => key(r) === key({ ...input, limit: 5 }));
      expect(i).toBeGreaterThanOrEqual(0);
      return JSON.parse(cold[i]!) as Out;
    };
    const ids = (o: Out): string[] => o.results.map((r) => r.node.id);
    const last = asOfs.at(-1)!;
    const deep = at({ query: 'ferry timetable', as_of: last, depth: 3 });
    expect(deep.results.filter((r) => r.match === 'expansion').map((r) => r.node.id)).toEqual(['a1', 'e1', 'b2', 'd1']);
    // a3's successor e2 is invalidated: it replaces nothing.
    expect(deep.results.find((r) => r.node.id === 'a3')?.node.superseded_by).toEqual([]);
    expect(ids(at({ query: 'river flood rail', as_of: last, depth: 0, current_only: 'true' }))).not.toContain('b2');
    expect(ids(at({ query: 'river flood rail', as_of: last, depth: 0 }))).toContain('b2');
    expect(deep.results.find((r) => r.node.id === 'b2')?.node.superseded_by).toEqual(['e1']);
    // Messages of one write lift each other: b3 says nothing of a station.
    expect(ids(at({ query: 'walked past station', as_of: last, depth: 0 })).slice(0, 2)).toEqual(['b4', 'b3']);
    expect(ids(at({ query: 'What did Joanna say about the buildings?', as_of: asOfs[2]!, depth: 0 }))).toContain('b1');
    expect(ids(at({ query: 'What did Joanna say about the buildings?', as_of: last, depth: 0 }))).not.toContain('b1');
    const kept = at({ query: 'What did Joanna say about the buildings?', as_of: last, depth: 0, include_invalidated: 'true' });
    expect(kept.results.find((r) => r.node.id === 'b1')?.node.invalidated).toBeDefined();
    expect(at({ query: 'river flood rail', as_of: asOfs[1]!, depth: 1 }).certificate).toHaveProperty('backfill');
    expect(at({ query: 'river flood rail', as_of: asOfs[0]!, depth: 1 }).certificate).toHaveProperty('masked');
  }, 300_000);

  it(`answers a search whose results span more than 100 spaces from those spaces (the tenant only past ${MAX_READ_SPACES})`, async () => {
    store = restartableLedger('search-across-wide', { graph: { flushAfterMs: 3_600_000 } });
    let l = await restart(store);
    const n = 106; // more spaces than the results a search may ask for (limit 100)
    for (let i = 0; i < n; i++) await write(l, { space: `s${i}`, nodes: [words(`h${i}`, `lighthouse keeper log ${i}`)], edges: [] });
    await write(l, { space: 'quiet', nodes: [words('q', 'orchard apples')], edges: [] });
    const as_of = formatInstant(l.now());
    const reads = [
      { query: 'lighthouse keeper', as_of, limit: 100, depth: 0 },
      { query: 'orchard apples', as_of, limit: 1, depth: 1 },
    ];
    await l.load(T);
    const whole: string[] = [];
    for (const read of reads) whole.push(await answer(l, read));
    l = await restart(store);
    expect(await answer(l, reads[1]!)).toBe(whole[1]);
    expect(l.acrossStats()).toEqual({ spaces: 1, tenant: 0 });
    // A hundred results in a hundred spaces: still answered from their spaces, the tenant never loaded.
    expect(await answer(l, reads[0]!)).toBe(whole[0]);
    expect((JSON.parse(whole[0]!) as { results: unknown[] }).results).toHaveLength(100);
    expect(l.acrossStats()).toEqual({ spaces: 2, tenant: 0 });
    expect(l.tenants()).toEqual([]);
    expect(l.residentSpaces().length).toBeGreaterThanOrEqual(100);
  }, 120_000);
});
