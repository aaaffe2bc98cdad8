// export_ledger on a tenant whose view is not resident reads the store page by page (storage/bundle/
// bundle-source.ts): its bundle must be the tenant view's, file by file and byte for byte, for the whole
// tenant, one space (an edge of another space joining two of its nodes kept), a category, and past as_of;
// with invalidations and supersession crossing spaces, backfill, verdicts, declarations and rows still in
// the write journal; and without loading the tenant.
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import { formatInstant, type Micros } from '../storage/time.ts';
import { isArchive } from '../tools/archive.ts';
import type { Context } from '../tools/context.ts';
import { declareFact } from '../tools/declare-fact.ts';
import { exportLedger } from '../tools/export-ledger.ts';
import { runOperation } from '../tools/operation.ts';
import { resolveFact } from '../tools/resolve-fact.ts';
import { tarEntries } from './helpers/bundle.ts';
import { claim, restartableLedger, spacesLoaded, type RestartableLedger } from './helpers/temp-ledger.ts';

let folder: RestartableLedger | null = null;
afterEach(async () => {
  await folder?.remove();
  folder = null;
});

const T = 'acme';
const DAY = 86_400_000_000;

const ctxOf = (ledger: Ledger): Context => ({ ledger, tenant: T, services: { version: 'test' } });

/** The bundle's files as name → text, read back from the archive the operation answers. */
async function bundle(ledger: Ledger, input: Record<string, unknown>): Promise<Map<string, string | null>> {
  const out = await runOperation(exportLedger, input, ctxOf(ledger));
  if (!isArchive(out)) throw new Error('export_ledger answered no archive');
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of out.open()) chunks.push(chunk as Buffer);
    return await tarEntries(Buffer.concat(chunks));
  } finally {
    await out.dispose();
  }
}

const lines = (files: Map<string, string | null>, name: string): Record<string, unknown>[] => {
  const entry = [...files.entries()].find(([path]) => path.endsWith(`/${name}`));
  return (entry?.[1] ?? '')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
};

describe('export_ledger without the tenant view, from the store page by page', () => {
  it('stages the bundle the tenant view stages, without loading the tenant', async () => {
    // Pages of 3 rows: every table is read over several pages. Rows stay in the write journal until a read
    // of the store copies them in.
    const f = (folder = restartableLedger('export-by-pages', { exportPageRows: 3, graph: { flushAfterMs: 3_600_000 } }));
    let l = await f.open();
    const instants: Micros[] = [];
    const start = l.now();
    instants.push(start - 3 * DAY);
    // Many spaces, each with a few rows, some of category x.
    for (let s = 0; s < 12; s++)
      await l.write(T, {
        space: `user:${s}`,
        nodes: [{ ...claim(`u${s}a`), category: s % 3 === 0 ? 'x' : null }, claim(`u${s}b`)],
        edges: [{ source_id: `u${s}a`, target_id: `u${s}b`, edge_type: 'CAUSES' }],
      });
    instants.push(l.now());
    // An edge of space user:5 joining two nodes of user:1 (kept in user:1's bundle), and one joining
    // user:1 to user:2 (in neither space's bundle).
    await l.write(T, {
      space: 'user:5',
      nodes: [],
      edges: [
        { source_id: 'u1b', target_id: 'u1a', edge_type: 'SUPPORTS' },
        { source_id: 'u1a', target_id: 'u2a', edge_type: 'SUPPORTS' },
      ],
    });
    // Supersession across spaces: u3a (in user:3) replaces u0a (in user:0); a new version of u0b in user:0.
    await l.write(T, { space: 'user:3', nodes: [], edges: [{ source_id: 'u3a', target_id: 'u0a', edge_type: 'SUPERSEDES' }] });
    await l.write(T, { space: 'user:0', nodes: [{ ...claim('u0b'), statement: 'about u0b, again', category: 'x' }], edges: [] });
    instants.push(l.now());
    // Backfill: known since before every other row, nodes, an edge and an invalidation with their batch.
    await l.write(T, {
      space: 'user:1',
      backfill: { declared_captured_at: start - 2 * DAY, reason: 'import' },
      nodes: [claim('u1old'), { ...claim('u1older'), category: 'x' }],
      edges: [{ source_id: 'u1old', target_id: 'u1a', edge_type: 'SUPPORTS' }],
    });
    instants.push(start - DAY);
    // A node with versions in user:1 and user:7, invalidated (held by both); a retraction of the
    // superseding node.
    await l.write(T, { space: 'user:7', nodes: [claim('u1b')], edges: [] });
    expect((await l.invalidate(T, { id: 'u1b', reason: 'wrong' })).kind).toBe('written');
    instants.push(l.now());
    await l.invalidate(T, { id: 'u3a', reason: 'retracted' });
    await l.write(T, {
      space: 'user:0',
      nodes: [{ id: 'rate', kind: 'fact', statement: 'rate is 3', fact_key: 'rate', fact_value: 3, category: 'x' }],
      edges: [],
    });
    await runOperation(declareFact, { fact_key: 'rate' }, ctxOf(l));
    await runOperation(resolveFact, { fact: 'rate', as_of: formatInstant(l.now()), space: 'user:0' }, ctxOf(l));
    instants.push(l.now());
    // Another tenant's rows, some with the same ids and spaces, are never exported.
    await l.write('other', { space: 'user:1', nodes: [claim('o1'), claim('u1a')], edges: [] });

    // The tenant's view built by commits (not by a load): the bundle it stages, at an instant the rows
    // backfilled after the restart do not reach.
    await l.load(T);
    const beforeRestart = await bundle(l, { as_of: formatInstant(instants[3] ?? 0) });
    expect(l.exportStats()).toEqual({ view: 1, pages: 0 });

    // After a restart: a backfilled invalidation (its commit goes to the engine, the journal with it), then
    // more rows, left in the write journal.
    l = await f.open();
    await l.invalidate(T, { id: 'u1old', reason: 'late news', backfill: { declared_captured_at: start - DAY / 2, reason: 'late' } });
    await l.write(T, { space: 'user:9', nodes: [claim('u9c'), { ...claim('u1a'), category: 'x' }], edges: [] });
    await l.write(T, { space: 'user:9', nodes: [], edges: [{ source_id: 'u9c', target_id: 'u9b', edge_type: 'SUPERSEDES' }] });
    await l.invalidate(T, { id: 'u9c', reason: 'wrong again' });
    instants.push(l.now());
    expect(l.tenants()).toEqual([]);

    const scopes: Record<string, unknown>[] = [
      {},
      { space: 'user:1' },
      { space: 'user:0' },
      { space: 'user:9' },
      { space: 'user:7' },
      { space: 'nobody' },
      { category: 'x' },
      { space: 'user:1', category: 'x' },
    ];
    const inputs = instants.flatMap((asOf) => scopes.map((scope) => ({ as_of: formatInstant(asOf), ...scope })));
    // The writes above loaded the views of the spaces they wrote; the exports load none.
    const written = spacesLoaded(l);
    const paged: Map<string, string | null>[] = [];
    for (const input of inputs) paged.push(await bundle(l, input));
    expect(l.tenants()).toEqual([]);
    expect(spacesLoaded(l)).toEqual(written);
    expect(l.exportStats()).toEqual({ view: 0, pages: inputs.length });

    // What the bundles hold, so the comparison below compares something: journaled rows, the edge of
    // another space inside user:1's bundle, backfill batches, verdicts, declarations and invalidations.
    const latest = inputs.length - scopes.length;
    const whole = paged[latest] ?? new Map();
    expect(lines(whole, 'nodes.jsonl').map((n) => n.id)).toContain('u9c');
    expect(lines(whole, 'invalidations.jsonl').map((i) => i.target_id)).toEqual(['u1b', 'u3a', 'u1old', 'u9c']);
    expect(lines(whole, 'resolutions.jsonl')).toHaveLength(1);
    const manifest = JSON.parse([...whole.entries()].find(([p]) => p.endsWith('/manifest.json'))?.[1] ?? '{}');
    expect(manifest.declarations.facts.map((d: { fact_key: string }) => d.fact_key)).toEqual(['rate']);
    expect(manifest.declarations.batches.map((b: { reason: string }) => b.reason)).toEqual(['import', 'late']);
    const user1 = lines(paged[latest + 1] ?? new Map(), 'edges.jsonl').map((e) => `${e.source_id}>${e.target_id}@${e.space}`);
    expect(user1).toEqual(['u1a>u1b@user:1', 'u1b>u1a@user:5', 'u1old>u1a@user:1']);
    expect(lines(paged[latest + 5] ?? new Map(), 'nodes.jsonl')).toEqual([]);
    // The view staged before the restart stages what the store does after it.
    expect(lines(beforeRestart, 'nodes.jsonl').map((n) => n.id)).toEqual(['u1old', 'u1older']);
    expect(paged[3 * scopes.length]).toEqual(beforeRestart);

    // The same exports from the tenant's view, once it is resident.
    await l.load(T);
    for (const [i, input] of inputs.entries()) expect(paged[i], JSON.stringify(input)).toEqual(await bundle(l, input));
    expect(l.exportStats()).toEqual({ view: inputs.length, pages: inputs.length });
  });
});
