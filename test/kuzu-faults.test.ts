// Fault injection without a kill: copies into the graph store fail through the adapter's seam, before
// their transaction runs or after it committed (a COMMIT whose forced checkpoint fails once the
// transaction is in the WAL, as Kuzu 0.11.3 reports "buffer pool is full"). Every acknowledged row must
// survive the failures and a restart, every refused row must stay out, and no sequence number may be
// given to two rows.
import { mkdtempSync, rmSync } from 'node:fs';
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
