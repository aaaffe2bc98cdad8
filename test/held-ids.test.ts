// A tenant's filter of the ids and spaces its store holds (storage/log/held-keys.ts): a write naming only
// ids the tenant never wrote asks the store nothing once the filter is built, and a write into a new space
// loads no view from the store; the plan is the one a lookup would have given, including when a commit
// lands between the filter's answer and the plan, and after a restart (the filter is read again from the
// store, the write journal's rows included, or taken back from the last clean close when nothing was
// written since).
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BloomFilter, HeldKeys } from '../storage/log/held-keys.ts';
import { HELD_KEYS_FILE } from '../storage/log/held-keys-file.ts';
import { Ledger } from '../storage/log/ledger.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import type { NodeVersion } from '../storage/types.ts';
import { emptyGroup } from '../storage/commit-group.ts';
import { commitStaged, stagedClaim } from './helpers/rows.ts';
import { lookupGate, spacesLoaded } from './helpers/temp-ledger.ts';

const T = 'acme';
const node = (id: string): WriteInput['nodes'][number] => ({ id, kind: 'claim', statement: `about ${id}` });

let dirs: string[] = [];
let open: Ledger[] = [];
afterEach(async () => {
  for (const l of open) await l.close();
  open = [];
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs = [];
});

async function ledgerIn(dir?: string, afterLookup?: () => Promise<void>): Promise<Ledger> {
  const d = dir ?? mkdtempSync(join(tmpdir(), 'held-ids-'));
  if (!dir) dirs.push(d);
  const l = await Ledger.open(d, { graph: { flushAfterMs: 3_600_000, afterLookup } });
  open.push(l);
  return l;
}

async function reopen(l: Ledger): Promise<Ledger> {
  await l.close();
  open = open.filter((x) => x !== l);
  return ledgerIn(l.dataDir);
}

/** A node row of `id` in `space`, staged directly (nothing of the space is loaded for it). */
const stagedRow = (id: string, space: string): NodeVersion => stagedClaim(T, id, space);

describe('the filter of ids a tenant holds', () => {
  it('never answers absent for a key added, and answers present for few keys never added', () => {
    const f = new BloomFilter(20_000);
    for (let i = 0; i < 20_000; i++) f.add(`id-${i}`);
    for (let i = 0; i < 20_000; i++) expect(f.mayHold(`id-${i}`)).toBe(true);
    let wrong = 0;
    for (let i = 0; i < 20_000; i++) if (f.mayHold(`other-${i}`)) wrong++;
    expect(wrong).toBeLessThan(20_000 * 0.001);
    // ~20 bits a key, whatever the keys' length.
    expect(f.bytes).toBeLessThanOrEqual(Math.ceil((20_000 * 20) / 8) + 8);
  });

  it('answers as the filter of the keys as text would, bit for bit, with slices grown past its room', async () => {
    // The reference: the filter's definition on the keys' text (`i<id>`, `s<space>`), slice after slice
    // of twice the room. The filter itself hashes each key once, without making its text.
    const slices = [new BloomFilter(4_096)];
    const add = (key: string): void => {
      let last = slices[slices.length - 1]!;
      if (last.count >= last.room) slices.push((last = new BloomFilter(2 * last.room)));
      last.add(key);
    };
    const held = new HeldKeys(async (_tenant, sink) => {
      sink.count(100);
      for (let i = 0; i < 100; i++) sink.id(`stored-${i}`);
    });
    for (let i = 0; i < 100; i++) add(`istored-${i}`);
    held.idAbsent('a', 'x');
    await held.settled('a');
    const rows = Array.from({ length: 30_000 }, (_, i) => ({ ...stagedRow(`n${i}`, 'S'), tenant: 'a' }));
    held.commit({ ...emptyGroup(), nodes: rows });
    for (const r of rows) add(`i${r.id}`);
    add('sS');
    expect(slices.length).toBeGreaterThanOrEqual(3);
    let maybe = 0;
    for (let i = 0; i < 20_000; i++) {
      const id = `probe-${i}`;
      const expected = !slices.some((f) => f.mayHold(`i${id}`));
      expect(held.idAbsent('a', id)).toBe(expected);
      if (!expected) maybe++;
    }
    expect(maybe).toBeGreaterThan(0); // some false "maybe held" answers, matched one by one
    expect(held.spaceAbsent('a', 'S')).toBe(false);
    for (const space of ['T', 'U', 'S2']) expect(held.spaceAbsent('a', space)).toBe(!slices.some((f) => f.mayHold(`s${space}`)));
  });

  it('keeps every key committed while it is read, grows past its room, and forgets tenants past its budget', async () => {
    let finish!: () => void;
    const reading = new Promise<void>((r) => {
      finish = r;
    });
    const held = new HeldKeys(async (tenant, sink) => {
      sink.count(1);
      sink.id(`${tenant}-stored`);
      await reading;
    }, 80_000);
    expect(held.idAbsent('a', 'x')).toBe(false); // not built: starts the build
    // Landed while the store was read: kept.
    const row = { ...stagedRow('during', 'S'), tenant: 'a' };
    held.commit({ ...emptyGroup(), nodes: [row] });
    finish();
    await held.settled('a');
    expect(held.ready('a')).toBe(true);
    expect(held.idAbsent('a', 'a-stored')).toBe(false);
    expect(held.idAbsent('a', 'during')).toBe(false);
    expect(held.spaceAbsent('a', 'S')).toBe(false);
    expect(held.idAbsent('a', 'never')).toBe(true);
    expect(held.spaceAbsent('a', 'T')).toBe(true);
    // Far past its room (4,096 keys at least): still no key lost.
    const many = Array.from({ length: 20_000 }, (_, i) => ({ ...stagedRow(`n${i}`, 'S'), tenant: 'a' }));
    held.commit({ ...emptyGroup(), nodes: many });
    expect(held.ready('a')).toBe(true);
    for (const r of many) expect(held.idAbsent('a', r.id)).toBe(false);
    expect(held.ready('a')).toBe(true);
    // Another tenant's build pushes the two over the budget: the least recently used is forgotten.
    held.idAbsent('b', 'x');
    await held.settled('b');
    expect(held.ready('b')).toBe(true);
    expect(held.ready('a')).toBe(false);
  });

  it('lets a write of new ids into a new space ask the store nothing, and plans it as a lookup would', async () => {
    const l = await ledgerIn();
    await l.write(T, { space: 'B', nodes: [node('x'), node('y')], edges: [] });
    expect(await l.heldKeysSettled(T)).toBe(true);
    const before = l.planStats();
    // New ids into a new space: nothing looked up, and no view loaded (a plan reads only by id).
    const fresh = await l.write(T, {
      space: 'C',
      nodes: [node('u'), node('v')],
      edges: [{ source_id: 'u', target_id: 'v', edge_type: 'CAUSES' }],
    });
    expect(fresh.accepted).toBe(3);
    const after = l.planStats();
    expect(after.lookedUp).toBe(before.lookedUp);
    expect(after.absent - before.absent).toBe(2);
    expect(after.newSpaces - before.newSpaces).toBe(0);
    expect(spacesLoaded(l)).toEqual([]);
    // An id written before (x, in B) is still found: a conflict in D, and B's view joins the plan.
    const crossing = await l.write(T, { space: 'D', nodes: [node('x')], edges: [] });
    expect(crossing.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    expect(spacesLoaded(l)).toEqual(['B']);
    expect(l.tenants()).toEqual([]);
    // D received nothing (its one row was refused): a read of it loads it empty, without reading the store.
    const read = await l.at(T, { asOf: 'now', space: 'D' });
    expect(read.view.space).toBe('D');
    expect(after.newSpaces).toBeLessThan(l.planStats().newSpaces);
  });

  it('is read again after a restart, with the rows still in the write journal, and finds ids of other spaces', async () => {
    const l = await ledgerIn();
    await l.write(T, { space: 'B', nodes: [node('x')], edges: [] });
    await l.write(T, { space: 'C', nodes: [node('z')], edges: [{ source_id: 'z', target_id: 'w', edge_type: 'CAUSES' }] });
    const r = await reopen(l);
    // The first write starts the build (it looks up meanwhile); once built, only held ids are looked up.
    await r.write(T, { space: 'E', nodes: [node('first')], edges: [] });
    expect(await r.heldKeysSettled(T)).toBe(true);
    const s0 = r.planStats();
    const conflict = await r.write(T, { space: 'A', nodes: [node('x'), node('new1')], edges: [] });
    expect(conflict.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    expect(conflict.accepted).toBe(1);
    // new1 is known since the filter answered for it (and its commit then added A); z is looked up.
    const edge = await r.write(T, { space: 'A', nodes: [], edges: [{ source_id: 'new1', target_id: 'z', edge_type: 'CAUSES' }] });
    expect(edge.accepted).toBe(1);
    const s1 = r.planStats();
    expect(s1.lookedUp - s0.lookedUp).toBe(2); // x, then z
    expect(s1.absent - s0.absent).toBe(1); // new1
    // z lives in C: C's view was in the second plan.
    expect(r.residentSpaces().some(([, s]) => s === 'C')).toBe(true);
  });

  it('is taken back after a clean close, without reading the ids from the store again, and answers as before', async () => {
    const l = await ledgerIn();
    await l.write(T, { space: 'B', nodes: [node('x')], edges: [] });
    await l.write(T, { space: 'C', nodes: [node('z')], edges: [] });
    expect(await l.heldKeysSettled(T)).toBe(true);
    const r = await reopen(l);
    await r.savedTaken();
    expect(r.heldKeysCounts()).toEqual({ builds: 0, restored: 1 });
    expect(existsSync(join(r.dataDir, HELD_KEYS_FILE))).toBe(false);
    const s0 = r.planStats();
    const mixed = await r.write(T, { space: 'A', nodes: [node('x'), node('fresh')], edges: [] });
    expect(mixed.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
    const s1 = r.planStats();
    expect(s1.absent - s0.absent).toBe(1); // fresh, answered by the filter taken back
    expect(s1.lookedUp - s0.lookedUp).toBe(1); // x, held
    expect(r.heldKeysCounts().builds).toBe(0);
  });

  it('is not taken back when rows were written after it was saved: the ids are read from the store again', async () => {
    const l = await ledgerIn();
    await l.write(T, { space: 'B', nodes: [node('x')], edges: [] });
    expect(await l.heldKeysSettled(T)).toBe(true);
    const dir = l.dataDir;
    await l.close();
    open = open.filter((x) => x !== l);
    const saved = readFileSync(join(dir, HELD_KEYS_FILE));
    // Another run writes `y` (a program that keeps no filter, or one killed before its close saved one).
    const other = await ledgerIn(dir);
    await other.write(T, { space: 'D', nodes: [node('y')], edges: [] });
    await other.close();
    open = open.filter((x) => x !== other);
    writeFileSync(join(dir, HELD_KEYS_FILE), saved);
    const r = await ledgerIn(dir);
    await r.savedTaken();
    expect(r.heldKeysCounts()).toEqual({ builds: 0, restored: 0 });
    expect(existsSync(join(dir, HELD_KEYS_FILE))).toBe(false);
    // The stale filter would call y absent; read from the store, it is held.
    const again = await r.write(T, { space: 'E', nodes: [node('y')], edges: [] });
    expect(again.refused).toEqual([{ id: 'y', kind: 'node', reason: 'id_conflict' }]);
    expect(await r.heldKeysSettled(T)).toBe(true);
    expect(r.heldKeysCounts().builds).toBe(1);
  });

  it('never misses a commit that brings an id the filter called absent into another space before the plan', async () => {
    for (const resident of [false, true]) {
      const gate = lookupGate();
      const l = await ledgerIn(undefined, gate.afterLookup);
      // p's lookup starts the filter's build; q is staged directly, so this process has not looked it up.
      await l.write(T, { space: 'B', nodes: [node('p')], edges: [] });
      await commitStaged(l, stagedRow('q', 'B'));
      expect(await l.heldKeysSettled(T)).toBe(true);
      if (resident) await l.viewOf(T, 'C');
      gate.shut();
      // x is absent (no lookup); q is held, so the write's lookup runs and waits here.
      const writing = l.write(T, {
        space: 'A',
        nodes: [node('x'), node('q2')],
        edges: [{ source_id: 'q2', target_id: 'q', edge_type: 'CAUSES' }],
      });
      await gate.reached;
      await commitStaged(l, stagedRow('x', 'C'));
      gate.open();
      const outcome = await writing;
      expect(outcome.refused).toEqual([{ id: 'x', kind: 'node', reason: 'id_conflict' }]);
      expect(l.planStats()).toMatchObject(resident ? { stale: 0, widened: 1 } : { stale: 1, widened: 0 });
      expect(l.tenants()).toEqual([]);
    }
  });
});
