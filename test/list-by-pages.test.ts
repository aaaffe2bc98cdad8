// list_memories without a space on a tenant whose view is not resident is read from the store page by
// page (storage/read/list-by-pages.ts): its answers must be those of the tenant's view, byte for byte but
// the instant the server answered, at past and present as_of, with every filter and page size, walking
// every cursor; with invalidations and supersession crossing spaces, a retracted successor, backfill,
// verdicts and rows still in the write journal; and without loading the tenant.
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import { claim, restartableLedger, type RestartableLedger } from './helpers/temp-ledger.ts';
import type { Context } from '../tools/context.ts';
import { declareFact } from '../tools/declare-fact.ts';
import { listMemories, type ListMemoriesOutput } from '../tools/list-memories.ts';
import { runOperation } from '../tools/operation.ts';
import { resolveFact } from '../tools/resolve-fact.ts';

let folder: RestartableLedger | null = null;
afterEach(async () => {
  await folder?.remove();
  folder = null;
});

const T = 'acme';
const DAY = 86_400_000_000;

const ctxOf = (ledger: Ledger, tenant = T): Context => ({ ledger, tenant, services: { version: 'test' } });

async function list(ledger: Ledger, input: Record<string, unknown>): Promise<ListMemoriesOutput> {
  return (await runOperation(listMemories, input, ctxOf(ledger))) as ListMemoriesOutput;
}

/** Every page of a read, walked by cursor, as the text each answer would be sent as; `now` read as the present. */
async function walk(ledger: Ledger, input: Record<string, unknown>): Promise<string[]> {
  const pages: string[] = [];
  let cursor: string | undefined;
  for (let i = 0; i < 100; i++) {
    const page = await list(ledger, cursor === undefined ? input : { ...input, cursor });
    // The instant the server answered differs between two calls; with as_of `now`, as_of too.
    const certificate: Record<string, unknown> = { ...page.certificate, tx_as_of: '-' };
    if (input.as_of === 'now') certificate.as_of = '-';
    pages.push(JSON.stringify({ ...page, certificate }));
    if (page.next_cursor === null) return pages;
    cursor = page.next_cursor;
  }
  throw new Error('more than 100 pages');
}

describe('list_memories without a space, from the store page by page', () => {
  it('answers as the tenant view does, without loading the tenant', async () => {
    // Rows stay in the write journal until a read of the store copies them in.
    const f = (folder = restartableLedger('list-by-pages', { graph: { flushAfterMs: 3_600_000 } }));
    let l = await f.open();
    const instants: Micros[] = [];
    const start = l.now();
    instants.push(start - 3 * DAY);
    await l.write(T, {
      space: 'a',
      nodes: [
        { ...claim('a1'), category: 'x' },
        claim('a2'),
        { ...claim('a3'), category: 'x', valid_from: start - 10 * DAY, valid_to: start - 5 * DAY },
        { id: 'rate', kind: 'fact', statement: 'rate is 3', fact_key: 'rate', fact_value: 3 },
      ],
      edges: [{ source_id: 'a1', target_id: 'a2', edge_type: 'CAUSES' }],
    });
    instants.push(l.now());
    await l.write(T, { space: 'b', nodes: [{ ...claim('b1'), kind: 'note' }, claim('a2'), claim('b2')], edges: [] });
    // Supersession across spaces: b1 (in b) replaces a1 (in a); c9 (in c) replaces a3, then c9 is retracted.
    await l.write(T, { space: 'b', nodes: [], edges: [{ source_id: 'b1', target_id: 'a1', edge_type: 'SUPERSEDES' }] });
    await l.write(T, { space: 'c', nodes: [claim('c9')], edges: [{ source_id: 'c9', target_id: 'a3', edge_type: 'SUPERSEDES' }] });
    instants.push(l.now());
    // Backfill: known since before every other row.
    await l.write(T, {
      space: 'b',
      backfill: { declared_captured_at: start - 2 * DAY, reason: 'import' },
      nodes: [claim('b0'), { ...claim('b00'), category: 'x' }],
      edges: [{ source_id: 'b0', target_id: 'b00', edge_type: 'SUPPORTS' }],
    });
    instants.push(start - DAY);
    // An invalidation written in c of a node held by a and b; the retraction of c9.
    await l.invalidate(T, { id: 'a2', reason: 'wrong', space: 'c' });
    instants.push(l.now());
    await l.invalidate(T, { id: 'c9', reason: 'retracted' });
    await runOperation(declareFact, { fact_key: 'rate' }, ctxOf(l));
    await runOperation(resolveFact, { fact: 'rate', as_of: formatInstant(l.now()), space: 'a' }, ctxOf(l));
    instants.push(l.now());
    // Another tenant's rows are never listed.
    await l.write('other', { space: 'a', nodes: [claim('o1'), claim('a1')], edges: [] });

    // After a restart: a backfilled invalidation (a backfill's commit goes to the engine, the journal with
    // it), then more rows, left in the write journal.
    l = await f.open();
    await l.invalidate(T, { id: 'b0', reason: 'late news', backfill: { declared_captured_at: start - DAY / 2, reason: 'late' } });
    await l.write(T, { space: 'd', nodes: [claim('d1'), { ...claim('a1'), category: 'x' }], edges: [] });
    await l.write(T, { space: 'd', nodes: [], edges: [{ source_id: 'd1', target_id: 'b2', edge_type: 'SUPERSEDES' }] });
    await l.invalidate(T, { id: 'd1', reason: 'wrong again' });
    instants.push(l.now());
    expect(l.tenants()).toEqual([]);

    const lenses: Record<string, unknown>[] = [
      {},
      { kind: 'claim' },
      { category: 'x' },
      { valid_at: formatInstant(start - 7 * DAY) },
      { current_only: true },
      { include_invalidated: true },
      { current_only: true, include_invalidated: true },
    ];
    const reads: Record<string, unknown>[] = [];
    // First a read of everything at the present: its rows come from the journal before anything copies it in.
    reads.push({ as_of: 'now', limit: 1000, include_invalidated: true });
    for (const limit of [1, 3, 1000]) {
      for (const lens of lenses) reads.push({ as_of: 'now', limit, ...lens });
      for (const asOf of instants) for (const lens of lenses) reads.push({ as_of: formatInstant(asOf), limit, ...lens });
    }

    const paged: string[][] = [];
    for (const input of reads) paged.push(await walk(l, input));
    // The whole journal-fed present read saw the rows written after the restart.
    expect(JSON.parse(paged[0]?.[0] ?? '{}').items.map((n: { id: string }) => n.id)).toContain('d1');
    expect(l.tenants()).toEqual([]);
    expect(paged.flat().some((p) => p.includes('"masked":{'))).toBe(true);
    expect(paged.flat().some((p) => p.includes('"invalidated":'))).toBe(true);
    expect(paged.flat().some((p) => p.includes('"backfill":'))).toBe(true);
    // Past its deadline a paged read stops before it reads a page (its signal is checked at every one).
    const late = AbortSignal.abort(new Error('past its deadline'));
    await expect(l.listByPages(T, { asOf: 'now', currentOnly: true }, { limit: 5 }, late)).rejects.toThrow('past its deadline');
    expect(l.tenants()).toEqual([]);

    // The same reads through the tenant's view, once it is resident.
    await l.load(T);
    expect(l.tenants()).toEqual([T]);
    for (const [i, input] of reads.entries()) expect(paged[i], JSON.stringify(input)).toEqual(await walk(l, input));
  });
});
