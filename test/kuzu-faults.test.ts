// Fault injection without a kill: copies into the graph store fail through the adapter's seam, before
// their transaction runs or after it committed (a COMMIT whose forced checkpoint fails once the
// transaction is in the WAL, as Kuzu 0.11.3 reports "buffer pool is full"). Every acknowledged row must
// survive the failures and a restart, every refused row must stay out, and no sequence number may be
// given to two rows.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FaultPoint } from '../storage/log/kuzu/kuzu-graph.ts';
import { Ledger } from '../storage/log/ledger.ts';
import type { NodeVersion } from '../storage/types.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';

const TENANT = 't';

/** The faults to inject next: each entry fails one copy at its point. */
class Faults {
  plan: FaultPoint[] = [];
  /** While set, every copy fails before its transaction runs. */
  always: FaultPoint | null = null;
  fired = 0;
  readonly hook = (point: FaultPoint): void => {
    if (this.always === point || this.plan[0] === point) {
      if (this.always !== point) this.plan.shift();
      this.fired++;
      throw new Error(`injected fault ${point}: buffer pool is full`);
    }
  };
}

const nodes = (prefix: string, n: number, space = 's'): WriteInput => ({
  space,
  nodes: Array.from({ length: n }, (_, i) => ({ id: `${prefix}-${i}`, kind: 'note', statement: `${prefix} row ${i}` })),
  edges: [],
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'kuzu-faults-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function reopen(ledger: Ledger): Promise<{ ledger: Ledger; rows: readonly NodeVersion[] }> {
  await ledger.close();
  const again = await Ledger.open(join(dir, 'data'));
  const view = await again.load(TENANT);
  return { ledger: again, rows: view.nodesIn() };
}

function expectUniqueSeqs(rows: readonly NodeVersion[]): void {
  expect(new Set(rows.map((r) => r.seq)).size).toBe(rows.length);
}

describe('copies failing without a kill', () => {
  it('keeps every journaled write when copies fail until the journal is full, and reuses no number', async () => {
    const faults = new Faults();
    // Background copies start at 2,000 rows here (FLUSH_ROWS is larger): they fail while writes go on.
    const ledger = await Ledger.open(join(dir, 'data'), { graph: { fault: faults.hook, flushRows: 2_000 } });
    faults.always = 'before-commit';
    const acked: string[] = [];
    // 50 writes of 200 rows, each acknowledged from the journal while the copies started behind them fail.
    for (let w = 0; w < 50; w++) {
      const out = await ledger.write(TENANT, nodes(`a${w}`, 200));
      expect(out.accepted).toBe(200);
      acked.push(...out.ids);
    }
    expect(faults.fired).toBeGreaterThan(0);
    faults.always = null;
    for (let w = 0; w < 5; w++) acked.push(...(await ledger.write(TENANT, nodes(`b${w}`, 10))).ids);
    const { ledger: again, rows } = await reopen(ledger);
    try {
      expect(new Set(rows.map((r) => r.id))).toEqual(new Set(acked));
      expectUniqueSeqs(rows);
    } finally {
      await again.close();
    }
  }, 240_000); // 10,000 rows journaled one fdatasync at a time, then reloaded: slow on a loaded machine

  it('counts a copy whose commit failed after reaching the engine as committed, journaled or not', async () => {
    const faults = new Faults();
    const ledger = await Ledger.open(join(dir, 'data'), { graph: { fault: faults.hook, journalMaxRows: 50 } });
    const acked: string[] = [];
    acked.push(...(await ledger.write(TENANT, nodes('small', 20))).ids);
    // The journal's copy (forced by the large group's) and the large group commit, then "fail".
    faults.plan = ['after-commit'];
    const big = await ledger.write(TENANT, nodes('big', 300));
    expect(big.accepted).toBe(300);
    acked.push(...big.ids);
    expect(faults.fired).toBe(1);
    // A journaled write after it: its numbers are new, so the next copy cannot mistake it for stored rows.
    acked.push(...(await ledger.write(TENANT, nodes('after', 20))).ids);
    faults.plan = ['after-commit'];
    await ledger.committedSeq(); // a read of the engine copies the journal in; that copy "fails" too
    expect(faults.fired).toBe(2);
    acked.push(...(await ledger.write(TENANT, nodes('last', 20))).ids);
    const { ledger: again, rows } = await reopen(ledger);
    try {
      expect(rows.map((r) => r.id).sort()).toEqual([...acked].sort());
      expectUniqueSeqs(rows);
    } finally {
      await again.close();
    }
  });

  it('refuses a group whose copy failed before its commit, keeps it out, and gives its numbers to nobody', async () => {
    const faults = new Faults();
    const ledger = await Ledger.open(join(dir, 'data'), { graph: { fault: faults.hook, journalMaxRows: 50 } });
    const acked: string[] = [...(await ledger.write(TENANT, nodes('first', 20))).ids];
    faults.plan = ['before-commit'];
    await expect(ledger.write(TENANT, nodes('refused', 300))).rejects.toThrow(/injected fault/);
    // The refused group's journal rows stay in the journal; the next writes take numbers above its own.
    acked.push(...(await ledger.write(TENANT, nodes('next', 20))).ids);
    acked.push(...(await ledger.write(TENANT, nodes('large', 120))).ids);
    const { ledger: again, rows } = await reopen(ledger);
    try {
      expect(rows.map((r) => r.id).sort()).toEqual([...acked].sort());
      expect(rows.some((r) => r.id.startsWith('refused'))).toBe(false);
      expectUniqueSeqs(rows);
    } finally {
      await again.close();
    }
  });
});

/**
 * A key the engine's index keeps though no row holds it (Kuzu 0.11.3 after a SIGKILL during a copy of a
 * large store) is refused as a duplicate, skipped by `ignore_errors`, and the relationships from it fail.
 * Emulated here by cutting the key's row from the copy's staged file for the first `times` attempts: the
 * copy fails the same way, and it must be repaired rather than fail every later copy and every open.
 */
function cutFirstRow(
  dataDir: string,
  table: 'Ident' | 'TenantSpace',
  times: number,
): { hook: (point: FaultPoint, tables: readonly string[]) => void; cut: () => number } {
  let cut = 0;
  return {
    hook: (point, tables) => {
      if (point !== 'before-commit' || !tables.includes(table) || !tables.includes('IdentIn') || cut >= times) return;
      const file = join(dataDir, 'graph', 'staging', `${table}.csv`);
      writeFileSync(file, readFileSync(file, 'utf8').split('\n').slice(1).join('\n'));
      cut++;
    },
    cut: () => cut,
  };
}

describe('a key missing from the index by id or by space', () => {
  it('builds the index by id again and stores the copy, its rows and their index complete', async () => {
    const data = join(dir, 'data');
    const fault = cutFirstRow(data, 'Ident', 1);
    const ledger = await Ledger.open(data, { graph: { fault: fault.hook } });
    try {
      const first = await ledger.write(TENANT, nodes('kept', 20));
      await ledger.committedSeq(); // a read of the engine copies the journal in
      const written = await ledger.write(TENANT, nodes('cut', 20, 'other'));
      await ledger.committedSeq();
      expect(fault.cut()).toBe(1);
      expect(first.accepted + written.accepted).toBe(40);
      const counts = await ledger.storeCounts();
      expect(counts.Block).toBe(40);
      expect(counts.Ident).toBe(40); // the cut id is indexed: built again from the stored rows, then copied
      expect(counts.IdentIn).toBe(40);
    } finally {
      await ledger.close();
    }
  });

  it('opens a store whose journal copy fails that way at every attempt until both indexes are built again', async () => {
    const data = join(dir, 'data');
    const faults = new Faults();
    const before = await Ledger.open(data, { graph: { fault: faults.hook } });
    const acked = [...(await before.write(TENANT, nodes('stored', 10))).ids];
    await before.committedSeq();
    // Journaled, and left in the journal: every copy fails until the store closes.
    faults.always = 'before-commit';
    acked.push(...(await before.write(TENANT, nodes('journaled', 10, 'later'))).ids);
    await before.close();
    const fault = cutFirstRow(data, 'TenantSpace', 2);
    const ledger = await Ledger.open(data, { graph: { fault: fault.hook } });
    try {
      expect(fault.cut()).toBe(2); // the index by id built again first, then the index by space
      const rows = [...(await ledger.load(TENANT)).nodesIn()];
      expect(rows.map((r) => r.id).sort()).toEqual([...acked].sort());
      const counts = await ledger.storeCounts();
      expect(counts.TenantSpace).toBe(2);
      expect(counts.HoldsBlock).toBe(20);
      expect(counts.Ident).toBe(20);
      expect(counts.IdentIn).toBe(20);
    } finally {
      await ledger.close();
    }
  });
});
