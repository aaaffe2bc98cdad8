// get_memory and why without a space, when the tenant's view is not resident, load only the views of the
// spaces holding the ids they read (a why walk widening space by space), never the tenant, and answer
// byte for byte what the tenant's view answers: bodies and certificates, at several as_of and valid_at,
// with invalidations, supersession, backfill and edges crossing spaces, and rows still in the write
// journal. Past MAX_READ_SPACES spaces a why falls back to the tenant's view.
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import { MAX_READ_SPACES } from '../storage/read/read-by-id.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import type { Context } from '../tools/context.ts';
import { getMemory, GetMemoryInput } from '../tools/get-memory.ts';
import { why, WhyInput } from '../tools/why.ts';
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
afterEach(async () => {
  await store?.remove();
  store = null;
});

async function write(l: Ledger, input: WriteInput): Promise<void> {
  const out = await l.write(T, input);
  expect(out.refused).toEqual([]);
}

/** A cold start for the next read: loading the filler space evicts every view but its own. */
async function evictAll(l: Ledger): Promise<void> {
  await l.viewOf(T, 'filler');
  expect(l.residentSpaces().map(([, s]) => s)).toEqual(['filler']);
}

const ctxOf = (ledger: Ledger): Context => ({ ledger, tenant: T, services: { version: 'test' } });

type Read = { op: 'get'; input: Record<string, unknown> } | { op: 'why'; input: Record<string, unknown> };

async function answer(l: Ledger, read: Read): Promise<string> {
  const out =
    read.op === 'get'
      ? await getMemory.handler(GetMemoryInput.parse(read.input), ctxOf(l))
      : await why.handler(WhyInput.parse(read.input), ctxOf(l));
  // tx_as_of is when the server answered, which differs between any two reads.
  return JSON.stringify({ ...out, certificate: { ...out.certificate, tx_as_of: undefined } });
}

describe('a read by id without a space, of a tenant not resident', () => {
  it('loads only the spaces holding what it reads, and answers as the tenant view does', async () => {
    store = restartableLedger('read-by-id', { memoryMb: BUDGET_MB, graph: { flushAfterMs: 3_600_000 } });
    let l = await store.open();
    const marks: Micros[] = [];
    await write(l, { space: 'filler', nodes: Array.from({ length: FILLER_ROWS }, (_, i) => node(`filler${i}`)), edges: [] });
    for (let i = 0; i < 6; i++)
      await write(l, { space: `other:${i}`, nodes: [node(`o${i}`), node(`p${i}`)], edges: [edge(`o${i}`, 'CAUSES', `p${i}`)] });
    await write(l, {
      space: 'A',
      nodes: [node('a1'), node('a2'), node('a3', { valid_from: T0, valid_to: T0 + 10 * DAY })],
      edges: [edge('a1', 'CAUSES', 'a2'), edge('a2', 'SUPPORTS', 'a3')],
    });
    marks.push(l.now());
    await write(l, {
      space: 'B',
      nodes: [node('b1'), node('b2')],
      edges: [edge('b1', 'CAUSES', 'a3'), edge('b2', 'SUPERSEDES', 'a1'), edge('o0', 'MENTIONS', 'b1')],
    });
    // A later version of a3, in another space.
    await write(l, {
      space: 'C',
      nodes: [node('c1'), node('a3', { valid_from: T0 + 20 * DAY })],
      edges: [edge('c1', 'CONTRADICTS', 'b1')],
    });
    marks.push(l.now());
    await l.invalidate(T, { id: 'c1', reason: 'wrong' });
    await write(l, {
      space: 'D',
      backfill: { declared_captured_at: marks[0]!, reason: 'imported late' },
      nodes: [node('d1')],
      edges: [edge('d1', 'TRIGGERS', 'b2'), edge('d1', 'QUALIFIES', 'a2')],
    });
    marks.push(l.now());

    // Restarted: every row above is in the engine; the rows below stay in the write journal.
    l = await store.open();
    expect(l.tenants()).toEqual([]);
    await write(l, { space: 'E', nodes: [node('e1'), node('e2')], edges: [edge('e1', 'CAUSES', 'c1'), edge('e2', 'SUPERSEDES', 'b2')] });
    await l.invalidate(T, { id: 'b2', reason: 'retracted' });
    await l.invalidate(T, { id: 'a3', reason: 'gone', space: 'A' });
    await write(l, { space: 'F', nodes: [node('f1')], edges: [edge('f1', 'CONCURRENT_SIGNAL', 'd1'), edge('f1', 'SUPPORTS', 'e2')] });
    marks.push(l.now());

    const ids = ['a1', 'a2', 'a3', 'b1', 'b2', 'c1', 'd1', 'e1', 'e2', 'f1', 'o0', 'nowhere'];
    // Instants, not "now" (each read would resolve it anew).
    const asOfs = [marks[0]! - 1, ...marks.slice(1)].map((m) => formatInstant(m));
    const validAts = [undefined, formatInstant(T0 + 25 * DAY)];
    const reads: Read[] = [];
    for (const id of ids)
      for (const as_of of asOfs)
        for (const valid_at of validAts) {
          const lens = valid_at === undefined ? { id, as_of } : { id, as_of, valid_at };
          reads.push({ op: 'get', input: lens }, { op: 'get', input: { ...lens, include_invalidated: 'true' } });
          for (const depth of [1, 3, 10]) reads.push({ op: 'why', input: { ...lens, depth } });
        }

    // Cold: every view but the filler's evicted before each id's first get and first why (the reads after
    // them, of the same id, find some of their spaces resident).
    const cold: string[] = [];
    for (const read of reads) {
      if (read.op === 'get' ? read.input['include_invalidated'] === undefined : read.input['depth'] === 1) await evictAll(l);
      cold.push(await answer(l, read));
      const loaded = spacesLoaded(l).filter((s) => s !== 'filler');
      expect(l.tenants()).toEqual([]);
      // A get loads exactly the spaces holding its id (its versions, the edges touching it) and, for the
      // invalidation of a successor, one of the successor's.
      if (read.op === 'get' && read.input['id'] === 'a3') expect(loaded).toEqual(['A', 'B', 'C']);
      if (read.op === 'get' && read.input['id'] === 'e1') expect(loaded).toEqual(['E']);
      // a1's successor b2 is held by B, D and E: its invalidations are in each, so B (holding a1) suffices.
      if (read.op === 'get' && read.input['id'] === 'a1') expect(loaded).toEqual(['A', 'B']);
      if (read.input['id'] === 'nowhere') expect(loaded).toEqual([]);
      // o0 reaches B only by a MENTIONS edge, which neither get nor why follows past the edge itself.
      if (read.op === 'why' && read.input['id'] === 'o0') expect(loaded).toEqual(['B', 'other:0']);
      if (read.input['id'] !== 'o0') expect(loaded.filter((s) => s.startsWith('other:'))).toEqual([]);
    }
    // Warm (the spaces' views resident from earlier reads), then the tenant's view resident: it answers.
    await expectColdAndWarmAsTenantView(
      reads,
      cold,
      (read) => answer(l, read),
      () => l.load(T),
      () => l.byIdStats(),
    );
    // What the comparison covers (the cold answers, equal to the tenant view's): supersession seen and then undone by a retracted successor, a chain
    // crossing five spaces, an invalidated subject, masked rows and backfill in certificates.
    const at = (op: Read['op'], input: Record<string, unknown>): Record<string, unknown> =>
      JSON.parse(cold[reads.findIndex((r) => r.op === op && JSON.stringify(r.input) === JSON.stringify(input))]!) as Record<
        string,
        unknown
      >;
    expect(at('get', { id: 'a1', as_of: formatInstant(marks[2]!) })).toMatchObject({ item: { superseded_by: ['b2'] } });
    expect(at('get', { id: 'a1', as_of: formatInstant(marks[3]!) })).toMatchObject({ item: { superseded_by: [] } });
    const chain = at('why', { id: 'f1', as_of: formatInstant(marks[3]!), depth: 10 }) as { chain: { node: { space: string } }[] };
    expect(new Set(chain.chain.map((c) => c.node.space))).toEqual(new Set(['A', 'D', 'E', 'F']));
    expect(at('get', { id: 'c1', as_of: formatInstant(marks[3]!) })).toMatchObject({ item: null, reason: 'invalidated' });
    expect(at('get', { id: 'd1', as_of: formatInstant(marks[1]!) })).toHaveProperty('certificate.backfill');
    expect(at('get', { id: 'a3', as_of: formatInstant(marks[3]!), include_invalidated: 'true' })).toHaveProperty(
      'item.invalidated.reason',
      'gone',
    );
    expect(at('why', { id: 'a2', as_of: formatInstant(marks[1]!), depth: 3 })).toHaveProperty('certificate.masked.node');
  }, 180_000);

  it(`falls back to the tenant's view past ${MAX_READ_SPACES} spaces`, async () => {
    store = restartableLedger('read-by-id-wide', { graph: { flushAfterMs: 3_600_000 } });
    let l = await store.open();
    // A hub linked from more spaces than a read by id loads, one spoke in each.
    const n = MAX_READ_SPACES + 2;
    await write(l, { space: 'hub', nodes: [node('hub')], edges: [] });
    for (let i = 0; i < n; i++) await write(l, { space: `s${i}`, nodes: [node(`h${i}`)], edges: [edge(`h${i}`, 'CAUSES', 'hub')] });
    // One instant for both ledgers ("now" would differ).
    const as_of = formatInstant(l.now());
    const reads: Read[] = [
      { op: 'why', input: { id: 'h0', as_of, depth: 0 } },
      { op: 'get', input: { id: 'h1', as_of } },
      { op: 'why', input: { id: 'hub', as_of, depth: 1 } },
      { op: 'get', input: { id: 'hub', as_of } },
    ];
    const whole: string[] = [];
    await l.load(T);
    for (const read of reads) whole.push(await answer(l, read));
    l = await store.open();
    expect(await answer(l, reads[0]!)).toBe(whole[0]);
    expect(await answer(l, reads[1]!)).toBe(whole[1]);
    expect(l.residentSpaces().map(([, s]) => s)).toEqual(['s0', 's1']);
    expect(l.tenants()).toEqual([]);
    expect(await answer(l, reads[2]!)).toBe(whole[2]);
    expect(JSON.parse(whole[2]!)).toMatchObject({ chain: { length: n + 1 } });
    expect(l.byIdStats()).toEqual({ spaces: 2, tenant: 1 });
    expect(l.tenants()).toEqual([T]);
    // Resident now: the tenant's view answers, without counting as a fallback.
    expect(await answer(l, reads[3]!)).toBe(whole[3]);
    expect(l.byIdStats()).toEqual({ spaces: 2, tenant: 1 });
  });
});
