// Deleting a tenant's rows in parts (Ledger.dropTenant): a tenant of a few thousand rows (nodes, edges,
// invalidations held by several spaces, a backfill batch) goes in several transactions and leaves no row
// of it in any table, the index by space included, while another tenant's rows stay as they were; another
// tenant's write issued during the deletion is acknowledged before it ends; the tenant is refused
// meanwhile; and a deletion stopped after a part goes on when called again, or when the folder is opened
// again.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Ledger } from '../storage/log/ledger.ts';
import { TenantDropping } from '../storage/log/tenant-drops.ts';
import type { FaultPoint } from '../storage/log/kuzu/kuzu-graph.ts';

const PART_ROWS = 500;
const dirs: string[] = [];
const open: Ledger[] = [];

afterEach(async () => {
  for (const l of open.splice(0)) await l.close().catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** A fresh folder's ledger deleting in parts of PART_ROWS; `fault` sees every part's commit. */
async function openLedger(dataDir?: string, fault?: (point: FaultPoint) => void): Promise<{ ledger: Ledger; dataDir: string }> {
  if (!dataDir) {
    const dir = mkdtempSync(join(tmpdir(), 'tenant-drop-'));
    dirs.push(dir);
    dataDir = join(dir, 'data');
  }
  const ledger = await Ledger.open(dataDir, {
    dropPartRows: PART_ROWS,
    graph: { journalMaxRows: 100, ...(fault ? { fault: (point) => fault(point) } : {}) },
  });
  open.push(ledger);
  return { ledger, dataDir };
}

/** `spaces` spaces of 40 nodes and 11 edges, a node every space names (an edge to it) invalidated, and a backfill. */
async function fill(ledger: Ledger, tenant: string, spaces: number): Promise<void> {
  for (let s = 0; s < spaces; s++) {
    const ids = Array.from({ length: 40 }, (_, i) => `${tenant}-${s}-${i}`);
    const outcome = await ledger.write(tenant, {
      space: `user:${s}`,
      nodes: [
        ...ids.map((id) => ({ id, kind: 'claim', statement: `${tenant} note ${id}` })),
        ...(s === 0 ? [{ id: 'shared', kind: 'claim', statement: 'named by every space' }] : []),
      ],
      edges: [
        ...ids.slice(0, 10).map((id, i) => ({ source_id: id, target_id: ids[i + 1] ?? id, edge_type: 'SUPPORTS' })),
        { source_id: ids[0] ?? '', target_id: 'shared', edge_type: 'SUPPORTS' },
      ],
    });
    expect(outcome.refused).toEqual([]);
  }
  await ledger.invalidate(tenant, { id: 'shared', reason: 'retracted' });
  const back = await ledger.write(tenant, {
    space: 'user:0',
    backfill: { declared_captured_at: 1_000_000, reason: 'imported notes' },
    nodes: [{ id: `${tenant}-old`, kind: 'claim', statement: 'from before', asserted_at: 1_000_000 }],
    edges: [],
  });
  expect(back.refused).toEqual([]);
}

/** Every row of the tenant, every table, as the export reads them. */
const rowsOf = async (ledger: Ledger, tenant: string): Promise<string> =>
  JSON.stringify(await ledger.tenantRows(tenant, 0, Number.MAX_SAFE_INTEGER, 1_000_000));

const total = (counts: Record<string, number>): number => Object.values(counts).reduce((a, b) => a + b, 0);

describe('deleting a tenant in parts', () => {
  it('leaves no row of it in any table and the other tenant as it was', async () => {
    let parts = 0;
    const { ledger } = await openLedger(undefined, (point) => {
      if (point === 'after-delete-part') parts++;
    });
    await fill(ledger, 'other', 4);
    const before = await ledger.storeCounts();
    const otherRows = await rowsOf(ledger, 'other');
    await fill(ledger, 'gone', 60);
    const full = await ledger.storeCounts();
    const goneRows = total(full) - total(before);
    expect(goneRows).toBeGreaterThan(3_000);
    expect(full['HoldsInvalidation']! - before['HoldsInvalidation']!).toBe(60); // held by every space naming 'shared'

    const deleted = await ledger.dropTenant('gone');
    // Rows per table of the ledger; the index by space (TenantSpace, Holds) goes too but is not counted.
    for (const [table, n] of Object.entries(deleted)) expect(n, table).toBe(full[table]! - before[table]!);
    expect(parts).toBeGreaterThanOrEqual(Math.ceil(total(deleted) / PART_ROWS));
    expect(await ledger.storeCounts()).toEqual(before);
    expect(JSON.parse(await rowsOf(ledger, 'gone'))).toMatchObject({ nodes: [], edges: [], batches: [], invalidations: [], spaces: [] });
    expect(await rowsOf(ledger, 'other')).toBe(otherRows);

    // Written again (a copy moved back), the tenant starts from nothing; the other one is still written.
    await ledger.write('gone', { space: 'user:1', nodes: [{ id: 'again', kind: 'claim', statement: 'back' }], edges: [] });
    expect((await ledger.load('gone')).size().nodes).toBe(1);
    await ledger.write('other', { space: 'user:1', nodes: [{ id: 'more', kind: 'claim', statement: 'more' }], edges: [] });
    expect((await ledger.load('other')).size().nodes).toBe(4 * 40 + 1 + 1 + 1);
  });

  it("acknowledges another tenant's write issued during the deletion before the deletion ends, and refuses the tenant", async () => {
    const { ledger } = await openLedger();
    await fill(ledger, 'other', 1);
    await fill(ledger, 'gone', 40);
    const order: string[] = [];
    const drop = ledger.dropTenant('gone').then(() => order.push('drop'));
    let runningAtAck: unknown = null;
    const write = ledger
      .write('other', { space: 'user:0', nodes: [{ id: 'during', kind: 'claim', statement: 'written during the drop' }], edges: [] })
      .then((outcome) => {
        runningAtAck = ledger.dropProgress('gone');
        order.push('write');
        return outcome;
      });
    await expect(ledger.write('gone', { space: 'user:0', nodes: [{ id: 'x', kind: 'claim' }], edges: [] })).rejects.toBeInstanceOf(
      TenantDropping,
    );
    await expect(ledger.load('gone')).rejects.toBeInstanceOf(TenantDropping);
    await expect(ledger.tenantRows('gone', 0, 10, 10)).rejects.toBeInstanceOf(TenantDropping);
    await expect(ledger.spaceCounts('gone', ledger.now())).rejects.toBeInstanceOf(TenantDropping);
    expect((await write).accepted).toBe(1);
    await drop;
    expect(order).toEqual(['write', 'drop']);
    // The deletion had parts left when the write was acknowledged.
    expect(runningAtAck).toMatchObject({ parts: expect.any(Number) });
    expect(ledger.isDropping('gone')).toBe(false);
  });

  it('goes on from where it stopped when a part fails, called again', async () => {
    let parts = 0;
    const { ledger } = await openLedger(undefined, (point) => {
      if (point === 'after-delete-part' && ++parts === 3) throw new Error('stopped after part 3');
    });
    await fill(ledger, 'other', 2);
    const before = await ledger.storeCounts();
    await fill(ledger, 'gone', 40);
    const full = await ledger.storeCounts();
    await expect(ledger.dropTenant('gone')).rejects.toThrow('stopped after part 3');
    // Three parts were committed and rows are left; the tenant stays refused.
    const between = await ledger.storeCounts();
    expect(total(between)).toBeLessThanOrEqual(total(full) - 3 * PART_ROWS);
    expect(total(between)).toBeGreaterThan(total(before));
    expect(ledger.isDropping('gone')).toBe(true);
    await expect(ledger.load('gone')).rejects.toBeInstanceOf(TenantDropping);
    await ledger.dropTenant('gone');
    expect(parts).toBeGreaterThan(3);
    expect(await ledger.storeCounts()).toEqual(before);
    expect(ledger.isDropping('gone')).toBe(false);
  });

  it('goes on when the folder is opened again after a deletion was cut short', async () => {
    let parts = 0;
    const first = await openLedger(undefined, (point) => {
      if (point === 'after-delete-part' && ++parts === 2) throw new Error('killed after part 2');
    });
    await fill(first.ledger, 'other', 2);
    const before = await first.ledger.storeCounts();
    const otherRows = await rowsOf(first.ledger, 'other');
    await fill(first.ledger, 'gone', 30);
    await expect(first.ledger.dropTenant('gone')).rejects.toThrow('killed after part 2');
    await first.ledger.close();

    const { ledger } = await openLedger(first.dataDir);
    // Marked on disk: refused from the open on, and the deletion resumed by the open (a call joins it).
    expect(ledger.isDropping('gone')).toBe(true);
    await expect(ledger.load('gone')).rejects.toBeInstanceOf(TenantDropping);
    await ledger.dropTenant('gone');
    expect(await ledger.storeCounts()).toEqual(before);
    expect(await rowsOf(ledger, 'other')).toBe(otherRows);
    await ledger.close();
    const again = await openLedger(first.dataDir);
    expect(again.ledger.isDropping('gone')).toBe(false);
  });
});
