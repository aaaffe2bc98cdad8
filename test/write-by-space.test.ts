// A write (or an invalidation) of a tenant whose view is not resident loads only the spaces its ids live
// in: the views of its own space and of every space holding a version of, or an edge touching, an id it
// names, found in the store's index by id (storage layout 5). Its outcomes and stored rows are those of a
// write planned against the whole tenant; a commit landing between its lookup and its plan that brings a
// named id into another space is never missed; a folder of layout 4 is indexed by id once on open.
import kuzu from 'kuzu';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';
import type { KuzuGraphOptions } from '../storage/log/kuzu/kuzu-graph.ts';
import type { InvalidateInput } from '../storage/log/invalidation-plan.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import type { TenantView } from '../storage/read/tenant-view.ts';
import type { NodeVersion } from '../storage/types.ts';
import { commitStaged, stagedClaim } from './helpers/rows.ts';
import { lookupGate, spacesLoaded } from './helpers/temp-ledger.ts';
import { claimInput, DAY, T0 } from './helpers/write-inputs.ts';

const T = 'acme';
const node = claimInput;

let dirs: string[] = [];
let open: Ledger[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const l of open) await l.close();
  open = [];
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

async function ledgerIn(dir: string, graph: KuzuGraphOptions = {}, idFilter = true): Promise<Ledger> {
  const l = await Ledger.open(dir, { graph: { flushAfterMs: 3_600_000, ...graph }, idFilter });
  open.push(l);
  return l;
}

async function reopen(l: Ledger, graph: KuzuGraphOptions = {}, idFilter = true): Promise<Ledger> {
  await l.close();
  open = open.filter((x) => x !== l);
  return ledgerIn(l.dataDir, graph, idFilter);
}

function newDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'write-by-space-'));
  dirs.push(d);
  return d;
}

/** A view's rows by content (sequence numbers and capture instants differ between two ledgers). */
function held(view: TenantView): unknown {
  return {
    nodes: view.nodesIn().map((n) => `${n.space}/${n.id}/${n.hash}/${n.valid_from}/${n.valid_to}`),
    edges: view.edgesOfSpace().map((e) => `${e.space}/${e.source_id}->${e.target_id}/${e.edge_type}/${e.hash}`),
    invalidations: view.invalidations().map((i) => `${i.space}/${i.target_id}/${i.reason}`),
  };
}

type Op = { write: WriteInput } | { invalidate: InvalidateInput };

const SETUP: Op[] = [
  { write: { space: 'B', nodes: [node('x', { valid_from: T0, valid_to: T0 + 10 * DAY }), node('y')], edges: [] } },
  { write: { space: 'C', nodes: [node('z')], edges: [{ source_id: 'z', target_id: 'y', edge_type: 'CAUSES' }] } },
  { invalidate: { id: 'y', reason: 'wrong' } },
  ...Array.from({ length: 8 }, (_, i): Op => ({ write: { space: `other:${i}`, nodes: [node(`o${i}`), node(`p${i}`)], edges: [] } })),
];

// Each names ids other spaces hold: an id_conflict, a version with a later validity, a re-send, an edge
// bringing an invalidated id into a new space, supersession across spaces, invalidations placed where
// their node lives, an edge whose end is missing.
const CROSSING: Op[] = [
  { write: { space: 'A', nodes: [node('x', { valid_from: T0 + 5 * DAY })], edges: [] } },
  { write: { space: 'A', nodes: [node('x', { valid_from: T0 + 20 * DAY })], edges: [] } },
  { write: { space: 'B', nodes: [node('y')], edges: [] } },
  { write: { space: 'A', nodes: [node('w')], edges: [{ source_id: 'w', target_id: 'y', edge_type: 'SUPPORTS' }] } },
  { write: { space: 'D', nodes: [node('v')], edges: [{ source_id: 'v', target_id: 'z', edge_type: 'SUPERSEDES' }] } },
  { invalidate: { id: 'z', reason: 'replaced' } },
  { invalidate: { id: 'y', reason: 'again' } },
  { invalidate: { id: 'x', reason: 'gone', space: 'A' } },
  { invalidate: { id: 'nowhere', reason: 'none' } },
  { write: { space: 'E', nodes: [node('u')], edges: [{ source_id: 'u', target_id: 'nowhere', edge_type: 'CAUSES' }] } },
  { write: { space: 'E', nodes: [node('x', { valid_from: T0 + 30 * DAY })], edges: [] } },
];

async function run(l: Ledger, ops: Op[], before?: () => Promise<unknown>): Promise<unknown[]> {
  const out: unknown[] = [];
  for (const op of ops) {
    await before?.();
    if ('write' in op) {
      const { captured_at: _, batch: __, ...outcome } = await l.write(T, op.write);
      out.push(outcome);
    } else {
      const outcome = await l.invalidate(T, op.invalidate);
      out.push(
        outcome.kind === 'not_found' || outcome.kind === 'bad_backfill'
          ? outcome
          : { kind: outcome.kind, space: outcome.invalidation.space },
      );
    }
  }
  return out;
}

const SPACES = ['A', 'B', 'C', 'D', 'E'];

describe('a write of a tenant not resident', () => {
  it('loads only the spaces its ids live in, and answers and stores as a write planned on the whole tenant', async () => {
    const whole = await ledgerIn(newDir());
    const bySpace = await ledgerIn(newDir());
    for (const l of [whole, bySpace]) await run(l, SETUP);
    const w = await reopen(whole);
    const s = await reopen(bySpace);

    const expected = await run(w, CROSSING, () => w.load(T));
    const got: unknown[] = [];
    for (const [i, op] of CROSSING.entries()) {
      const before = s.residentSpaces().length;
      got.push(...(await run(s, [op])));
      // Never the tenant, never a space the request does not reach.
      expect(s.tenants()).toEqual([]);
      if (i === 0) {
        expect(before).toBe(0);
        // The spaces holding its ids; its own space A holds none of them and is not loaded.
        expect(spacesLoaded(s)).toEqual(['B']);
      }
    }
    expect(got).toEqual(expected);
    expect(s.residentSpaces().some(([, sp]) => sp.startsWith('other:'))).toBe(false);
    expect(w.planStats().spaces).toBe(0);
    expect(s.planStats()).toMatchObject({ spaces: CROSSING.length, tenant: 0 });
    // Spot checks of what the comparison covers.
    expect(got[0]).toMatchObject({ accepted: 0, refused: [{ id: 'x', reason: 'id_conflict' }] });
    expect(got[1]).toMatchObject({ accepted: 1 });
    expect(got[2]).toMatchObject({ warnings: [{ id: 'y', warning: 'already_remembered' }] });
    expect(got[6]).toEqual({ kind: 'already', space: 'B' });
    expect(got[9]).toMatchObject({ refused: [{ reason: 'missing_endpoint' }] });

    // Stored alike: every space's view read back from the store after a restart.
    const w2 = await reopen(w);
    const s2 = await reopen(s);
    for (const space of SPACES) expect(held(await s2.viewOf(T, space))).toEqual(held(await w2.viewOf(T, space)));
    // A's view holds y's invalidation (its edge brought y in) and x's.
    expect((held(await s2.viewOf(T, 'A')) as { invalidations: string[] }).invalidations.sort()).toEqual(['A/x/gone', 'B/y/wrong']);
  });

  it('never misses a commit that brings a named id into another space between its lookup and its plan', async () => {
    for (const resident of [false, true]) {
      const gate = lookupGate();
      // Without the filter of held ids, x (new) would not be looked up at all: test/held-ids.test.ts races that path.
      const l = await ledgerIn(newDir(), { afterLookup: gate.afterLookup }, false);
      await l.write(T, { space: 'B', nodes: [node('q')], edges: [] });
      if (resident) await l.viewOf(T, 'C');
      gate.shut();
      // The write's lookup has read its answer (x in no space) and waits here.
      const writing = l.write(T, { space: 'A', nodes: [node('x')], edges: [] });
      await gate.reached;
      // Meanwhile a commit puts x in C (staged directly, so nothing of C is loaded for it).
      await commitStaged(l, stagedClaim(T, 'x', 'C'));
      gate.open();
      const outcome = await writing;
      // Planned without x in C it would have been accepted.
      expect(outcome.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
      // C resident: its view joins the plan; not resident: the lookup is made again.
      expect(l.planStats()).toMatchObject(resident ? { stale: 0, widened: 1 } : { stale: 1, widened: 0 });
      expect(l.tenants()).toEqual([]);
    }
  });
});

describe('the spaces of ids looked up or written', () => {
  it('are kept by the ledger as commits land, so a write naming them again asks the store nothing', async () => {
    // Every id not known here is looked up (no filter of held ids), so the lookups are counted exactly.
    const l = await ledgerIn(newDir(), {}, false);
    await l.write(T, { space: 'B', nodes: [node('x')], edges: [] });
    expect(l.planStats().lookedUp).toBe(1);
    // Known as held by B since the commit: a conflict in C is found without asking the store.
    const again = await l.write(T, { space: 'C', nodes: [node('x'), node('fresh')], edges: [] });
    expect(again.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    expect(l.planStats().lookedUp).toBe(2);
    // After a restart nothing is known: the store's index answers the same.
    const r = await reopen(l, {}, false);
    const third = await r.write(T, {
      space: 'D',
      nodes: [node('x')],
      edges: [{ source_id: 'fresh', target_id: 'x', edge_type: 'CAUSES' }],
    });
    expect(third.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    expect(third.accepted).toBe(1);
    expect(r.planStats().lookedUp).toBe(2);
  });
});

describe('a data folder of storage layout 4', () => {
  it('is indexed by id once, with one log line, and a write then finds the spaces of its ids', async () => {
    const dir = newDir();
    let l = await ledgerIn(dir);
    await l.write(T, { space: 'B', nodes: [node('x'), node('y')], edges: [{ source_id: 'x', target_id: 'y', edge_type: 'CAUSES' }] });
    await l.write(T, { space: 'C', nodes: [node('z')], edges: [{ source_id: 'z', target_id: 'x', edge_type: 'CAUSES' }] });
    await l.close();
    open = [];
    // Layout 4 is layout 5 without the index by id.
    const db = new kuzu.Database(join(dir, 'graph', 'graph.kuzu'));
    const conn = new kuzu.Connection(db);
    for (const q of ['DROP TABLE IdentIn', 'DROP TABLE Ident']) {
      const r = await conn.query(q);
      (Array.isArray(r) ? r : [r]).forEach((x) => x.close());
    }
    await conn.close();
    await db.close();
    writeFileSync(join(dir, 'graph', 'layout'), '4');

    const log = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    l = await ledgerIn(dir);
    const lines = log.mock.calls.map((c) => String(c[0])).filter((x) => x.includes('migrated'));
    // x in B and (through z's edge) in C, y in B, z in C.
    expect(lines).toEqual([expect.stringMatching(/from storage layout 4 to 5: 4 \(id, space\) pairs indexed/)]);
    expect(readFileSync(join(dir, 'graph', 'layout'), 'utf8')).toBe('5');
    const outcome = await l.write(T, { space: 'A', nodes: [node('x')], edges: [] });
    expect(outcome.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    expect(spacesLoaded(l)).toEqual(['B', 'C']);
    log.mockClear();
    l = await reopen(l);
    expect(log.mock.calls.filter((c) => String(c[0]).includes('migrated'))).toHaveLength(0);
  });
});
