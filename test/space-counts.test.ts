// A whole tenant's `list_spaces` is counted in the graph store, not from the tenant's loaded rows: it must
// answer what the read model answers at every as_of (backfilled rows and rows still in the write journal
// included), leave other tenants out, and load nothing.
import { afterEach, describe, expect, it } from 'vitest';
import { spaceSummaries } from '../storage/read/space-summary.ts';
import type { Micros } from '../storage/time.ts';
import { claim, restartableLedger, type RestartableLedger } from './helpers/temp-ledger.ts';

let folder: RestartableLedger | null = null;
afterEach(async () => {
  await folder?.remove();
  folder = null;
});

const T = 'acme';

describe('space counts from the graph store', () => {
  it('equal the read model’s at every as_of, without loading the tenant', async () => {
    // Rows stay in the journal until a read of the store copies them in.
    const f = (folder = restartableLedger('space-counts', { graph: { flushAfterMs: 3_600_000 } }));
    let l = await f.open();
    const instants: Micros[] = [l.now()];
    const early = l.now();
    await l.write(T, { space: 'a', nodes: [claim('a1'), claim('a2')], edges: [{ source_id: 'a1', target_id: 'a2', edge_type: 'CAUSES' }] });
    instants.push(l.now());
    await l.write(T, { space: 'b', nodes: [claim('b1')], edges: [] });
    await l.write('other', { space: 'c', nodes: [claim('c1')], edges: [] });
    instants.push(l.now());
    // Known since an instant before every other row: it moves b's first_known_at back.
    await l.write(T, {
      space: 'b',
      backfill: { declared_captured_at: early - 1_000_000, reason: 'import' },
      nodes: [claim('b0')],
      edges: [],
    });
    instants.push(l.now());
    await l.write(T, {
      space: 'c',
      nodes: [claim('c2')],
      edges: [{ source_id: 'c2', target_id: 'a1', edge_type: 'SUPPORTS' }],
    });
    instants.push(early - 500_000, l.now());

    for (const asOf of instants) {
      const fromStore = spaceSummaries(await l.spaceCounts(T, asOf));
      const fromView = (await l.at(T, { asOf })).spaces();
      expect(fromStore, `as_of ${asOf}`).toEqual(fromView);
    }
    const last = spaceSummaries(await l.spaceCounts(T, l.now()));
    expect(last.map((s) => [s.space, s.nodes, s.edges])).toEqual([
      ['a', 2, 1],
      ['b', 2, 0],
      ['c', 1, 1],
    ]);
    expect(spaceSummaries(await l.spaceCounts(T, early - 500_000)).map((s) => s.space)).toEqual(['b']);

    // After a restart nothing is resident, and counting loads nothing.
    l = await f.open();
    expect(spaceSummaries(await l.spaceCounts(T, l.now()))).toEqual(last);
    expect(l.tenants()).toEqual([]);
    expect(l.residentSpaces()).toEqual([]);
  });
});
