// A space's read model is cut from its tenant's when that one is resident (a whole-tenant read's is), without
// a read of the store: such a read first waits for the write journal's copy, seconds after a bulk fill.
// The cut holds what the store's index of rows by space gives after a restart, invalidations crossing
// spaces included.
import { afterEach, describe, expect, it } from 'vitest';
import type { TenantView } from '../storage/read/tenant-view.ts';
import { claim, restartableLedger, type RestartableLedger } from './helpers/temp-ledger.ts';

let folder: RestartableLedger | null = null;
afterEach(async () => {
  await folder?.remove();
  folder = null;
});

const T = 'acme';

/** What a view holds, by content (sequence numbers may differ between a journal and the store). */
function held(view: TenantView): { nodes: string[]; edges: string[]; invalidations: string[]; verdicts: number } {
  return {
    nodes: view.nodesIn().map((n) => `${n.space}/${n.id}/${n.hash}`),
    edges: view.edgesOfSpace().map((e) => `${e.space}/${e.source_id}->${e.target_id}/${e.hash}`),
    invalidations: view.invalidations().map((i) => `${i.space}/${i.target_id}/${i.reason}`),
    verdicts: view.verdicts().length,
  };
}

describe("a space's read model cut from its resident tenant", () => {
  it('reads nothing from the store and holds what the store gives after a restart', async () => {
    let failCopies = false;
    const f = (folder = restartableLedger('space-cut', {
      // Rows stay in the journal until a read of the store copies them; a copy fails while failCopies.
      graph: {
        flushAfterMs: 3_600_000,
        fault: (point) => {
          if (failCopies && point === 'before-commit') throw new Error('copy refused by the test');
        },
      },
    }));
    let l = await f.open();
    // Resident as a read without a space makes it (a write alone loads only the spaces it names).
    await l.load(T);
    await l.write(T, { space: 's1', nodes: [claim('e'), claim('x'), claim('only-s1')], edges: [] });
    await l.write(T, { space: 's2', nodes: [claim('d')], edges: [{ source_id: 'e', target_id: 'd', edge_type: 'SUPERSEDES' }] });
    await l.write(T, { space: 's3', nodes: [claim('y')], edges: [{ source_id: 'x', target_id: 'y', edge_type: 'CAUSES' }] });
    expect((await l.invalidate(T, { id: 'e', reason: 'wrong' })).kind).toBe('written');
    expect((await l.invalidate(T, { id: 'only-s1', reason: 'gone' })).kind).toBe('written');
    await l.write(T, { space: 's2', nodes: [], edges: [{ source_id: 'x', target_id: 'd', edge_type: 'SUPPORTS' }] });
    expect(l.tenants()).toContain(T);

    // Any read of the store would copy the journal first, and that copy fails now.
    failCopies = true;
    const cut = { s1: held(await l.viewOf(T, 's1')), s2: held(await l.viewOf(T, 's2')), s3: held(await l.viewOf(T, 's3')) };
    failCopies = false;
    expect(cut.s2.nodes).toHaveLength(1);
    expect(cut.s2.edges).toHaveLength(2);
    // s2 names e (invalidated in s1) through its edge; it does not name only-s1.
    expect(cut.s2.invalidations).toEqual(['s1/e/wrong']);
    expect(cut.s1.invalidations).toEqual(['s1/e/wrong', 's1/only-s1/gone']);
    expect(cut.s3.invalidations).toEqual([]);

    l = await f.open();
    const stored = { s1: held(await l.viewOf(T, 's1')), s2: held(await l.viewOf(T, 's2')), s3: held(await l.viewOf(T, 's3')) };
    expect(l.tenants()).not.toContain(T);
    expect(stored).toEqual(cut);
  });
});
