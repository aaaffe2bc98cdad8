// Opening the store after an unclean stop: the journal copied in from a child process, and a store whose
// copy crashes the engine rebuilt from its rows, every acknowledged row kept and the old files aside.
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { KuzuGraph } from './kuzu-graph.ts';
import { READY, REBUILD_DIR, recoverApart, runStep, STORE_FILE, swapRebuilt, uncleanStore, type RepairStep } from './store-repair.ts';
import { emptyGroup } from '../../commit-group.ts';
import { journalRecordOf } from './tables.ts';
import { encodeRecord } from './write-journal.ts';
import { OPEN_END } from '../../time.ts';
import type { NodeVersion } from '../../types.ts';

const dir = mkdtempSync(join(tmpdir(), 'store-repair-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const AT = 1_700_000_000_000_000;
const node = (seq: number): NodeVersion => ({
  seq,
  tseq: seq,
  tenant: 'a',
  id: `n${seq}`,
  space: `s${seq % 3}`,
  kind: 'claim',
  statement: `row ${seq}`,
  category: null,
  payload: '{}',
  asserted_at: AT + seq,
  valid_from: AT + seq,
  valid_to: OPEN_END,
  captured_at: AT + seq,
  known_at: AT + seq,
  batch_id: null,
  fact_key: null,
  fact_value: null,
  hash: 'ab'.repeat(32),
});

/** A store of 40 rows in the engine and 10 acknowledged rows left in its journal, as a kill leaves it. */
async function leftByAKill(at: string): Promise<void> {
  const copied = await KuzuGraph.open(at, { journalMaxRows: 0 });
  await copied.commit({ ...emptyGroup(), nodes: Array.from({ length: 40 }, (_, i) => node(i + 1)) });
  await copied.close();
  // Appended and never copied, as a SIGKILL leaves the journal's segment.
  appendFileSync(
    join(at, 'journal-0000000900.log'),
    encodeRecord(journalRecordOf({ ...emptyGroup(), nodes: Array.from({ length: 10 }, (_, i) => node(41 + i)) })),
  );
}

const ids = async (at: string): Promise<number> => {
  const graph = await KuzuGraph.open(at);
  try {
    return (await graph.counts()).Block ?? -1;
  } finally {
    await graph.close();
  }
};

describe('opening the store after an unclean stop', () => {
  it('copies the journal in from a child when the stop left rows in it, and does nothing after a clean stop', async () => {
    const at = join(dir, 'child');
    await leftByAKill(at);
    expect(uncleanStore(at)).toBe(true);
    const steps: RepairStep[] = [];
    await recoverApart(
      at,
      () => undefined,
      (d, step) => (steps.push(step), runStep(d, step)),
    );
    expect(steps).toEqual(['recover']);
    expect(uncleanStore(at)).toBe(false);
    expect(await ids(at)).toBe(50);
    await recoverApart(
      at,
      () => undefined,
      (d, step) => (steps.push(step), runStep(d, step)),
    );
    expect(steps).toEqual(['recover']);
  }, 60_000);

  it('rebuilds the store when the copy crashes the engine: every row kept, the old files aside, then the journal copied', async () => {
    const at = join(dir, 'crash');
    await leftByAKill(at);
    const steps: RepairStep[] = [];
    const lines: string[] = [];
    // The first copy ends as Kuzu 0.11.3's did after a kill during a checkpoint (docs/storage.md).
    const crashing = async (d: string, step: RepairStep) => {
      steps.push(step);
      if (steps.length === 1) return { ok: false as const, signal: 'SIGSEGV' as const, message: 'ended by SIGSEGV' };
      return runStep(d, step);
    };
    await recoverApart(at, (line) => lines.push(line), crashing);
    expect(steps).toEqual(['recover', 'rebuild', 'recover']);
    expect(lines.join('\n')).toMatch(
      /ended the process \(SIGSEGV\)[\s\S]*rebuilt in \d+ ms, every table's rows counted equal; the old files are in .*broken-/,
    );
    const aside = readdirSync(at).filter((n) => n.startsWith('broken-'));
    expect(aside).toHaveLength(1);
    expect(existsSync(join(at, aside[0]!, STORE_FILE))).toBe(true);
    expect(existsSync(join(at, REBUILD_DIR))).toBe(false);
    // The 40 rows the engine held and the 10 the journal held, each once; the sequence goes on above them.
    const graph = await KuzuGraph.open(at);
    expect((await graph.counts()).Block).toBe(50);
    expect((await graph.lastWritten()).seq).toBeGreaterThanOrEqual(50);
    await graph.commit({ ...emptyGroup(), nodes: [node(1_000_000)] });
    expect((await graph.counts()).Block).toBe(51);
    await graph.close();
  }, 60_000);

  it("sets the engine's WAL aside when replaying it crashes the engine, and copies the journal in again", async () => {
    const at = join(dir, 'wal');
    await leftByAKill(at);
    // Kuzu 0.11.3 replaying a WAL that a kill during a COPY's forced checkpoint left (docs/storage.md).
    writeFileSync(join(at, `${STORE_FILE}.wal`), 'a WAL the engine crashes on');
    const steps: RepairStep[] = [];
    const lines: string[] = [];
    const crashing = async (d: string, step: RepairStep) => {
      steps.push(step);
      if (existsSync(join(d, `${STORE_FILE}.wal`))) return { ok: false as const, signal: 'SIGSEGV' as const, message: 'ended by SIGSEGV' };
      return runStep(d, step);
    };
    await recoverApart(at, (line) => lines.push(line), crashing, new Date('2026-11-29T10:00:00Z'));
    expect(steps).toEqual(['recover', 'recover']);
    expect(lines.join('\n')).toMatch(/the engine's graph.kuzu.wal set aside in .*broken-2026-11-29T10-00-00-000Z/);
    expect(readdirSync(join(at, 'broken-2026-11-29T10-00-00-000Z'))).toEqual([`${STORE_FILE}.wal`]);
    expect(await ids(at)).toBe(50);
  }, 60_000);

  it('refuses with where the files are when the store cannot be read to rebuild it, and leaves them untouched', async () => {
    const at = join(dir, 'unreadable');
    mkdirSync(at, { recursive: true });
    writeFileSync(join(at, STORE_FILE), 'not a store');
    writeFileSync(join(at, `${STORE_FILE}.wal`), 'x');
    const crashing = async (d: string, step: RepairStep) =>
      step === 'recover' ? { ok: false as const, signal: 'SIGSEGV' as const, message: 'ended by SIGSEGV' } : runStep(d, step);
    await expect(recoverApart(at, () => undefined, crashing, new Date('2026-11-29T10:00:00Z'))).rejects.toThrow(
      /ended the process \(SIGSEGV\), and the store could not be rebuilt from its rows: .+ The store is where it was, its WAL in .*broken-/,
    );
    expect(readdirSync(at).sort()).toEqual(['broken-2026-11-29T10-00-00-000Z', STORE_FILE]);
    expect(readdirSync(join(at, 'broken-2026-11-29T10-00-00-000Z'))).toEqual([`${STORE_FILE}.wal`]);
  }, 60_000);

  it("puts a tenant's deletion into the data file before it is done, so no WAL set aside can bring its rows back", async () => {
    const at = join(dir, 'drop');
    const graph = await KuzuGraph.open(at, { journalMaxRows: 0 });
    await graph.commit({ ...emptyGroup(), nodes: Array.from({ length: 20 }, (_, i) => node(i + 1)) });
    expect(existsSync(join(at, `${STORE_FILE}.wal`))).toBe(false);
    let done = false;
    while (!done) done = (await graph.deleteTenantPart('a', 8)).done;
    expect(existsSync(join(at, `${STORE_FILE}.wal`))).toBe(false);
    await graph.close();
  });

  it('finishes a swap a stop interrupted, and drops a rebuild that was never completed', async () => {
    const at = join(dir, 'swap');
    mkdirSync(join(at, REBUILD_DIR), { recursive: true });
    writeFileSync(join(at, REBUILD_DIR, STORE_FILE), 'rebuilt');
    swapRebuilt(at);
    expect(readdirSync(at)).toEqual([]);
    mkdirSync(join(at, REBUILD_DIR), { recursive: true });
    writeFileSync(join(at, STORE_FILE), 'old');
    writeFileSync(join(at, REBUILD_DIR, STORE_FILE), 'rebuilt');
    writeFileSync(join(at, REBUILD_DIR, READY), '{}');
    const aside = swapRebuilt(at, join(at, 'broken-2026-11-29T10-00-00-000Z'));
    expect(aside).toBe(join(at, 'broken-2026-11-29T10-00-00-000Z'));
    expect(readdirSync(at).sort()).toEqual(['broken-2026-11-29T10-00-00-000Z', STORE_FILE]);
  });
});
