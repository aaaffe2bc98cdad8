// The places of ids (storage/log/id-places.ts): reads by id without a space find the spaces holding the ids
// they read in a table per tenant, built once from the store and kept exact by every commit, and answer
// what they answer when every id is looked up in the store. The table's life (tenant-builds.ts): commits
// landing while it is built are kept, a tenant dropped meanwhile keeps nothing, a failed build leaves the
// store asked, the least recently used tables go past the budget.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { IdPlaces, PlacesTable } from '../storage/log/id-places.ts';
import { ID_PLACES_FILE, saveIdPlaces, takeIdPlaces } from '../storage/log/id-places-file.ts';
import type { Ledger } from '../storage/log/ledger.ts';
import { TenantBuilds, TOO_LARGE_RETRY_MS, type TenantBuilt } from '../storage/log/tenant-builds.ts';
import type { WriteInput } from '../storage/log/write-plan.ts';
import type { Context } from '../tools/context.ts';
import { getMemory, GetMemoryInput } from '../tools/get-memory.ts';
import { why, WhyInput } from '../tools/why.ts';
import { FILLER_ROWS, restartableLedger, SMALL_BUDGET_MB, type RestartableLedger } from './helpers/temp-ledger.ts';
import { claimInput as node, DAY, edgeInput as edge, T0 } from './helpers/write-inputs.ts';

const T = 'acme';

/** A small deterministic generator, so a failure can be replayed. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0;
    return s / 2 ** 32;
  };
}

describe('a table of ids and the space holding each', () => {
  it('answers each id its space, "ask the store" for an id in several, none for ids never added, across growth', () => {
    const rand = random(7);
    const truth = new Map<string, Set<string>>();
    const grown = new PlacesTable(); // from the fewest slots, doubling as ids come
    const sized = new PlacesTable(40_000); // sized up front, as a build from the store is
    let growth = 0;
    for (let i = 0; i < 40_000; i++) {
      const id = `u${Math.floor(rand() * 2_000)}-${i}`;
      const spaces = rand() < 0.02 ? [`user:${i % 300}`, `user:${(i + 1) % 300}`] : [`user:${i % 300}`];
      truth.set(id, new Set(spaces));
      for (const s of spaces) {
        growth += grown.put(id, s);
        sized.add([id, s]);
      }
    }
    expect(grown.count).toBe(truth.size);
    expect(growth).toBe(grown.bytes - new PlacesTable().bytes); // every byte it grew by was reported
    let several = 0;
    for (const [id, spaces] of truth) {
      for (const table of [grown, sized]) {
        const answer = table.spacesOf(id);
        if (spaces.size > 1) expect(answer).toBeUndefined();
        else expect(answer).toEqual(spaces);
      }
      if (spaces.size > 1) several++;
    }
    expect(several).toBeGreaterThan(500);
    // 64-bit hashes: ids never added find an empty slot.
    for (let i = 0; i < 40_000; i++) expect(grown.spacesOf(`never-${i}`)).toEqual(new Set());
    // Twelve bytes a slot, the slots at most 70% full: under 35 bytes an id, plus the spaces' names.
    expect(sized.bytes).toBeLessThan(truth.size * 35 + 300 * 80);
  });
});

describe('tables saved by a clean close', () => {
  const mark = { instant: 1_700_000_000_000, seq: 41, tseq: 40 };
  let dir = '';
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('are taken back whole under the same mark, once, and never under another or from a damaged file', async () => {
    dir = mkdtempSync(join(tmpdir(), 'id-places-file-'));
    const path = join(dir, ID_PLACES_FILE);
    const a = new PlacesTable();
    const b = new PlacesTable(10);
    for (let i = 0; i < 5_000; i++) a.put(`a${i}`, `user:${i % 7}`);
    a.put('a3', 'user:other'); // held by two spaces: "ask the store"
    b.put('b1', 'solo');
    saveIdPlaces(path, mark, [a.saved('t1'), b.saved('t2')]);
    const bytes = readFileSync(path);
    const taken = await takeIdPlaces(path, mark);
    expect(existsSync(path)).toBe(false);
    expect(taken?.map((t) => t.tenant)).toEqual(['t1', 't2']);
    const [ta, tb] = (taken ?? []).map((t) => PlacesTable.fromSaved(t));
    for (let i = 0; i < 5_000; i++) expect(ta?.spacesOf(`a${i}`)).toEqual(i === 3 ? undefined : new Set([`user:${i % 7}`]));
    expect(ta?.spacesOf('never')).toEqual(new Set());
    expect(tb?.spacesOf('b1')).toEqual(new Set(['solo']));
    expect(ta?.bytes).toBe(a.bytes);
    // Taken once: the file is gone.
    expect(await takeIdPlaces(path, mark)).toBeNull();
    // Another mark: something was written since.
    writeFileSync(path, bytes);
    expect(await takeIdPlaces(path, { ...mark, seq: 42 })).toBeNull();
    // Cut short, or a code naming no space.
    writeFileSync(path, bytes.subarray(0, bytes.length - 4));
    expect(await takeIdPlaces(path, mark)).toBeNull();
    const saved = a.saved('t1');
    const code = saved.code.slice();
    code[code.findIndex((c) => c >= 0)] = saved.spaces.length;
    expect(PlacesTable.fromSaved({ ...saved, code })).toBeNull();
    expect(PlacesTable.fromSaved({ ...saved, count: saved.count + 1 })).toBeNull();
    expect(PlacesTable.fromSaved(saved)).not.toBeNull();
  });
});

describe("when a tenant's table is built", () => {
  it('once its reads spent as long asking the store as the build is worth, not on its first read', async () => {
    const reads: string[] = [];
    const places = new IdPlaces(
      async (tenant, sink) => {
        reads.push(tenant);
        sink.pair('a1', 'user:1');
      },
      1024 * 1024,
      1_500,
    );
    expect(places.spacesOf('t', 'a1')).toBeUndefined();
    places.lookedUp('t', 600);
    places.lookedUp('other', 1_000);
    places.lookedUp('t', 600);
    expect(reads).toEqual([]);
    places.lookedUp('t', 600); // 1,800 ms in all
    expect(reads).toEqual(['t']);
    await places.settled('t');
    expect(places.spacesOf('t', 'a1')).toEqual(new Set(['user:1']));
    places.lookedUp('t', 5_000); // built: nothing more
    expect(reads).toEqual(['t']);
    expect(places.spacesOf('other', 'a1')).toBeUndefined();
  });
});

/** A structure for TenantBuilds' tests: the items added, its size set by hand. */
class Items implements TenantBuilt<string> {
  readonly items: string[] = [];
  constructor(
    public bytes = 100,
    readonly growth = 0,
  ) {}
  add(item: string): number {
    this.items.push(item);
    this.bytes += this.growth;
    return this.growth;
  }
}

describe('structures built per tenant from one read of the store', () => {
  it('keeps what commits bring while the read runs, and nothing for a tenant dropped meanwhile', async () => {
    const reads = new Map<string, (built: Items) => void>();
    const builds = new TenantBuilds<string, Items>('items', (tenant) => new Promise((resolve) => reads.set(tenant, resolve)), 1_000);
    expect(builds.ready('a')).toBeNull(); // starts the build
    expect(builds.ready('b')).toBeNull();
    expect(builds.builds).toBe(2);
    const to = builds.committer()!;
    to.add('a', 'committed while a was read');
    to.add('b', 'committed while b was read');
    to.done();
    builds.drop('b');
    const read = new Items();
    read.items.push('read from the store');
    reads.get('a')!(read);
    reads.get('b')!(new Items());
    await builds.settled('a');
    expect(builds.ready('a')?.items).toEqual(['read from the store', 'committed while a was read']);
    expect(builds.isReady('b')).toBe(false);
    expect(builds.bytes).toBe(100);
    expect(builds.builds).toBe(2); // asking for a again did not read again
  });

  it('forgets the least recently used past the budget, never the one just built', async () => {
    const builds = new TenantBuilds<string, Items>('items', () => Promise.resolve(new Items(400)), 1_000);
    for (const t of ['a', 'b', 'c']) {
      builds.ready(t);
      await builds.settled(t);
    }
    builds.ready('a'); // a used after b: b is now the least recently used
    builds.ready('d');
    await builds.settled('d');
    expect(['a', 'b', 'c', 'd'].filter((t) => builds.isReady(t))).toEqual(['a', 'd']);
    expect(builds.bytes).toBe(800);
  });

  it('keeps no structure larger than the whole budget, built or grown so, and builds it again only after minutes', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      const sizes = new Map([
        ['huge', 1_500],
        ['growing', 900],
      ]);
      const builds = new TenantBuilds<string, Items>('items', (t) => Promise.resolve(new Items(sizes.get(t), 200)), 1_000);
      builds.ready('huge');
      await builds.settled('huge');
      expect(builds.isReady('huge')).toBe(false);
      expect(String(error.mock.calls[0]?.[0])).toContain('past the budget');
      builds.ready('huge');
      expect(builds.builds).toBe(1); // not read again at once
      builds.ready('growing');
      await builds.settled('growing');
      expect(builds.isReady('growing')).toBe(true);
      const to = builds.committer()!;
      to.add('growing', 'one more'); // 1,100 bytes now: alone past the budget
      to.done();
      expect(builds.isReady('growing')).toBe(false);
      expect(builds.bytes).toBe(0);
      builds.ready('growing');
      expect(builds.builds).toBe(2);
      vi.setSystemTime(Date.now() + TOO_LARGE_RETRY_MS + 1);
      builds.ready('huge');
      expect(builds.builds).toBe(3);
    } finally {
      error.mockRestore();
      vi.useRealTimers();
    }
  });

  it('after a failed read asks the store meanwhile and builds again only after a while', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const error = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    try {
      let fail = true;
      const builds = new TenantBuilds<string, Items>(
        'items',
        () => (fail ? Promise.reject(new Error('store refused')) : Promise.resolve(new Items())),
        1_000,
      );
      builds.ready('a');
      await builds.settled('a');
      expect(error).toHaveBeenCalledTimes(1);
      fail = false;
      expect(builds.ready('a')).toBeNull();
      expect(builds.builds).toBe(1);
      vi.setSystemTime(Date.now() + 10_001);
      builds.ready('a');
      await builds.settled('a');
      expect(builds.builds).toBe(2);
      expect(builds.isReady('a')).toBe(true);
    } finally {
      error.mockRestore();
      vi.useRealTimers();
    }
  });
});

const ctxOf = (ledger: Ledger): Context => ({ ledger, tenant: T, services: { version: 'test' } });

/** Each id's get and why as text, its instants left out: the two ledgers compared captured their rows apart. */
async function answers(l: Ledger, ids: readonly string[]): Promise<string[]> {
  const out: string[] = [];
  const text = (answer: unknown): string => JSON.stringify(answer).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, 'instant');
  for (const id of ids) {
    const get = await getMemory.handler(GetMemoryInput.parse({ id, as_of: 'now' }), ctxOf(l));
    out.push(text(get));
    if (get.item) out.push(text(await why.handler(WhyInput.parse({ id, as_of: 'now', depth: 3 }), ctxOf(l))));
  }
  return out;
}

let stores: RestartableLedger[] = [];
afterEach(async () => {
  for (const s of stores) await s.remove();
  stores = [];
});

describe('reads by id over the places of ids', () => {
  it('answer as reads looking every id up in the store do, through commits, without asking the store', async () => {
    const opened = await Promise.all(
      [64, 0].map(async (idPlacesMb) => {
        const store = restartableLedger('id-places', {
          memoryMb: SMALL_BUDGET_MB,
          idPlacesMb,
          idPlacesAfterMs: 0,
          graph: { flushAfterMs: 3_600_000 },
        });
        stores.push(store);
        return store.open();
      }),
    );
    let [placed, looked] = opened as [Ledger, Ledger];
    const write = async (input: WriteInput): Promise<void> => {
      for (const l of [placed, looked]) expect((await l.write(T, input)).refused).toEqual([]);
    };
    await write({ space: 'filler', nodes: Array.from({ length: FILLER_ROWS }, (_, i) => node(`filler${i}`)), edges: [] });
    for (let u = 0; u < 12; u++)
      await write({
        space: `user:${u}`,
        nodes: [node(`u${u}-a`), node(`u${u}-b`), node(`u${u}-c`, { valid_to: T0 + 10 * DAY })],
        edges: [edge(`u${u}-a`, 'CAUSES', `u${u}-b`), ...(u > 0 ? [edge(`u${u}-a`, 'SUPPORTS', `u${u - 1}-a`)] : [])],
      });
    const ids = [...Array.from({ length: 12 }, (_, u) => [`u${u}-a`, `u${u}-b`, `u${u}-c`]).flat(), 'never written'];
    // Restarted, so the known ids are empty: the first read asks the store, which starts the table's build
    // (at once here); once built, it answers.
    [placed, looked] = [await stores[0]!.open(), await stores[1]!.open()];
    expect(placed.placesStats().builds).toBe(0);
    expect(await answers(placed, ids)).toEqual(await answers(looked, ids));
    expect(placed.placesStats().builds).toBe(1);
    await placed.placesSettled(T);
    await placed.viewOf(T, 'filler'); // evicts the users' views: the next reads load them again
    const lookedUp = placed.planStats().lookedUp;
    const before = placed.placesStats();
    expect(await answers(placed, ids)).toEqual(await answers(looked, ids));
    // Ids in one space each are answered by the table; u1-a..u11-a are in two (an edge from the next user's space).
    const after = placed.placesStats();
    expect(after.answered - before.answered).toBeGreaterThanOrEqual(14);
    expect(after.missed - before.missed).toBeGreaterThan(0);
    expect(placed.planStats().lookedUp - lookedUp).toBeLessThanOrEqual(after.missed - before.missed);
    // Commits after the build: a new id, an id brought into a second space, a later version elsewhere.
    await write({
      space: 'user:99',
      nodes: [node('new-one'), node('u0-c', { statement: 'u0-c again', valid_from: T0 + 20 * DAY })],
      edges: [edge('new-one', 'CAUSES', 'u5-b')],
    });
    const later = [...ids, 'new-one'];
    const answeredBefore = placed.placesStats().answered;
    await placed.viewOf(T, 'filler');
    expect(await answers(placed, later)).toEqual(await answers(looked, later));
    expect(placed.placesStats().answered).toBeGreaterThan(answeredBefore);
    const get = await getMemory.handler(GetMemoryInput.parse({ id: 'u0-c', as_of: 'now' }), ctxOf(placed));
    expect(get.versions.map((v) => v.statement)).toEqual(['about u0-c', 'u0-c again']);
    // A clean restart takes the table back, built from nothing: the reads answer as before, the store unasked
    // for ids in one space.
    placed = await stores[0]!.open();
    await placed.savedTaken();
    expect(placed.placesStats()).toMatchObject({ builds: 0, restored: 1 });
    expect(existsSync(join(stores[0]!.dir, 'data', ID_PLACES_FILE))).toBe(false);
    const lookedUpAfter = placed.planStats().lookedUp;
    expect(await answers(placed, later)).toEqual(await answers(looked, later));
    expect(placed.placesStats().answered).toBeGreaterThanOrEqual(15);
    expect(placed.planStats().lookedUp - lookedUpAfter).toBeLessThanOrEqual(placed.placesStats().missed);
    expect(placed.placesStats().builds).toBe(0);
    // A tenant dropped forgets its table.
    expect(placed.placesStats().bytes).toBeGreaterThan(0);
    await placed.dropTenant(T);
    expect(placed.placesStats().bytes).toBe(0);
  });
});
