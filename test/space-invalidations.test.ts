// A read of one space answers from that space's own read model (storage layout 4), which holds the
// invalidations of the ids its rows name. Found by the property test: a SUPERSEDES edge written in s2
// from a node living only in s1, whose invalidation s2 did not hold, still hid its target from a
// current_only read of s2 (an invalidated node supersedes nothing). Both orders (the invalidation before
// and after the edge), on the view kept up to date by commits and on one loaded from the store.
import { afterEach, describe, expect, it } from 'vitest';
import type { Ledger } from '../storage/log/ledger.ts';
import { formatInstant } from '../storage/time.ts';
import { claim, restartableLedger, type RestartableLedger } from './helpers/temp-ledger.ts';
import type { Context } from '../tools/context.ts';
import { listMemories, type ListMemoriesOutput } from '../tools/list-memories.ts';
import { runOperation } from '../tools/operation.ts';

let folder: RestartableLedger | null = null;
afterEach(async () => {
  await folder?.remove();
  folder = null;
});

const T = 'acme';

/** The current, unsuperseded nodes of s2 with whatever supersedes them, as a read confined to s2 shows them. */
async function currentOfS2(ledger: Ledger): Promise<[string, string[]][]> {
  const ctx: Context = { ledger, tenant: T, services: { version: 'test' } };
  const out = (await runOperation(
    listMemories,
    { space: 's2', current_only: true, as_of: formatInstant(ledger.now()) },
    ctx,
  )) as ListMemoriesOutput;
  return out.items.map((n) => [n.id, n.superseded_by]);
}

async function check(order: 'invalidated first' | 'edge first'): Promise<void> {
  const f = (folder = restartableLedger('space-invalidations'));
  let l = await f.open();
  await l.write(T, { space: 's1', nodes: [claim('e')], edges: [] });
  await l.write(T, { space: 's2', nodes: [claim('d')], edges: [] });
  expect(await currentOfS2(l)).toEqual([['d', []]]);
  const supersede = async (): Promise<void> => {
    const w = await l.write(T, { space: 's2', nodes: [], edges: [{ source_id: 'e', target_id: 'd', edge_type: 'SUPERSEDES' }] });
    expect(w.accepted).toBe(1);
  };
  const invalidate = async (): Promise<void> => {
    expect((await l.invalidate(T, { id: 'e', reason: 'wrong' })).kind).toBe('written');
  };
  if (order === 'invalidated first') {
    await invalidate();
    await supersede();
  } else {
    await supersede();
    // e supersedes d in s2 while it stands.
    expect(await currentOfS2(l)).toEqual([]);
    await invalidate();
  }
  // s2's view was resident throughout: the commits brought it the invalidation of e.
  expect(l.residentSpaces()).toContainEqual([T, 's2']);
  expect(await currentOfS2(l)).toEqual([['d', []]]);
  // Loaded from the store's index of rows by space after a restart.
  l = await f.open();
  expect(await currentOfS2(l)).toEqual([['d', []]]);
  expect(l.tenants()).not.toContain(T);
}

describe('a space holds the invalidations of the ids its edges name', () => {
  it('when the invalidation comes before the edge', () => check('invalidated first'));
  it('when the edge comes before the invalidation', () => check('edge first'));
});
