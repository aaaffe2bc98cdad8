// A space's copy answers a space-confined search as LanceDB answers a table holding that space's rows
// known at the search's as_of alone (BM25 with those rows' statistics, exact cosine), stays fresh as rows
// are appended, and copies beyond the memory budget are dropped least recently searched first and read
// again when needed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as lancedb from '@lancedb/lancedb';
import { rng } from '../../../evals/lib/rng.ts';
import { LanceIndex } from '../lance/lance-index.ts';
import type { Hit, IndexRow, RowFilter } from '../index-row.ts';
import { LOADS_AT_ONCE, SpaceCopies, SpaceCopy, type SpaceRow, type SpaceSource } from './space-copies.ts';
import { TokenCache } from './text-mirror.ts';

let dir: string;
const rand = rng(23);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const WORDS = (
  'harbour crane storm ship berth cargo delay strike painting class hiking beach camping pottery adoption support ' +
  'group garden river bridge run running runs the a and of to is it was'
).split(' ');
const QUERY_WORDS = WORDS.filter((w) => w.length > 3);
const SPACES = ['a', 'b', 'c'];

function rows(from: number, n: number, spaces = SPACES): IndexRow[] {
  return Array.from({ length: n }, (_, k) => {
    const seq = from + k + 1;
    return {
      id: `n${seq % 97}`, // several versions of one node
      seq,
      space: pick(spaces),
      kind: pick(['claim', 'turn']),
      category: null,
      known_at: 1000 + Math.floor(rand() * 100),
      asserted_at: 1000,
      valid_from: 1000,
      valid_to: 1e15,
      text: Array.from({ length: 2 + Math.floor(rand() * 20) }, () => pick(WORDS)).join(' '),
      vector: Float32Array.from({ length: 4 }, () => rand() - 0.5),
    };
  });
}

const withinRounding = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(a), Math.abs(b));

/** Same length and scores place by place; the same row wherever its score is not tied (within rounding) with another. */
function expectSame(got: Hit[], want: Hit[], what: string): void {
  expect(got.length, what).toBe(want.length);
  got.forEach((h, i) => expect(withinRounding(h.score, want[i]!.score), `${what} #${i}`).toBe(true));
  want.forEach((w, i) => {
    if (want.some((o, j) => j !== i && withinRounding(o.score, w.score))) return;
    expect(`${got[i]!.id}@${got[i]!.seq}`, what).toBe(`${w.id}@${w.seq}`);
  });
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'space-copies-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('space copies', () => {
  it('are not made before the table has its text index (its tokenizer comes with it): the table answers', async () => {
    // A table holding rows but no text index yet: the state between a fresh table's first append and the
    // index built after it. A space search there used to load a copy, whose tokenizer failed ("Column
    // 'text' does not have a full text search index", a 500 for a search right after a first write).
    const at = join(dir, 'fresh');
    const first = await LanceIndex.open(at, 4, 0, 0, 0);
    await first.add('t', rows(0, 40, ['a']));
    await first.close();
    const db = await lancedb.connect(at);
    const [name] = await db.tableNames();
    await (await db.openTable(name!)).dropIndex('text_idx');
    const fresh = await LanceIndex.open(at, 4, 0, 0, 0);
    const filter: RowFilter = { asOf: 1e15, space: 'a' };
    expect(await fresh.fullText('t', ['harbour', 'storm'], filter, 5)).toEqual([]);
    expect((await fresh.nearest('t', Float32Array.from([0.1, 0.2, 0.3, 0.4]), filter, 5)).length).toBe(5);
    expect(fresh.spaceCopies().spaces).toBe(0);
    // Once the index is built again (the next write or maintenance), the space is answered from its copy.
    await fresh.maintain('t', 'force');
    expect((await fresh.fullText('t', ['harbour', 'storm', 'ship'], filter, 5)).length).toBeGreaterThan(0);
    expect(fresh.spaceCopies().spaces).toBe(1);
    await fresh.close();
  });

  // With vectors (the default bound, past every space here), and past a bound of 60 rows: copies of full
  // text only, whose spaces cross the bound as they grow (a copy with vectors is then read again without).
  it.each([
    { copies: 'with their vectors', name: 'vectors', spaceCopyRows: undefined },
    { copies: 'of full text only past 60 rows', name: 'text', spaceCopyRows: 60 },
  ])(
    'answer a space, or the whole tenant, as LanceDB answers a table holding its rows known at as_of alone, through appends: copies $copies',
    async ({ name, spaceCopyRows }) => {
      // One tenant holding three spaces (copies on; the tenant-wide LanceDB-like copies off), and each space,
      // and the tenant, alone in tables of their own: all their rows, and only those known at each past as_of
      // asked. Rows are known in any order of seq (as backfilled rows are), so a later batch adds rows known
      // before a cut.
      const CUTS = [1030, 1070];
      const bounds = spaceCopyRows === undefined ? {} : { spaceCopyRows, exactRows: 1_000 };
      const mixed = await LanceIndex.open(join(dir, `mixed-${name}`), 4, 0, 0, 0, undefined, bounds);
      const alone = await LanceIndex.open(join(dir, `alone-${name}`), 4, 0, 0, 0, 0);
      const table = (space: string | undefined, cut?: number): string => `only-${space ?? 'all'}${cut === undefined ? '' : `-at-${cut}`}`;
      let written = 0;
      let compared = 0;
      const modes = { past: 0, present: 0, hidden: 0 };
      for (const n of [120, 40, 90]) {
        const batch = rows(written, n);
        written += n;
        await mixed.add('t', batch);
        for (const s of [...SPACES, undefined]) {
          const inSpace = batch.filter((r) => s === undefined || r.space === s);
          for (const cut of [undefined, ...CUTS]) {
            const known = inSpace.filter((r) => cut === undefined || r.known_at <= cut);
            if (known.length === 0) continue;
            await alone.add(table(s, cut), known);
            await alone.maintain(table(s, cut), 'force'); // every row in its full-text index: the copy scores all as indexed
          }
        }
        for (let q = 0; q < 30; q++) {
          const space = pick([...SPACES, undefined]);
          const terms = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(QUERY_WORDS));
          const mode = pick(['past', 'past', 'present', 'hidden'] as const);
          modes[mode]++;
          const cut = mode === 'past' ? pick(CUTS) : undefined;
          // A read at a past as_of counts the rows known then; one that sees every row, and the count of matches
          // hidden from a read, count them all.
          const f: RowFilter =
            mode === 'past'
              ? { asOf: cut!, space }
              : mode === 'hidden'
                ? { asOf: 1000 + Math.floor(rand() * 100), space, hidden: true }
                : { asOf: rand() < 0.5 ? 1200 : 1000, allKnown: true, space };
          if (rand() < 0.3) f.kind = pick(['claim', 'turn']);
          if (rand() < 0.2) f.excludeIds = ['n1', 'n2', 'n3', 'n40'];
          const limit = pick([1, 5, 10, 40]);
          const what = `${terms.join(' ')} ${JSON.stringify(f)} limit ${limit}`;
          expectSame(await mixed.fullText('t', terms, f, limit), await alone.fullText(table(space, cut), terms, f, limit), what);
          const v = Float32Array.from({ length: 4 }, () => rand() - 0.5);
          expectSame(await mixed.nearest('t', v, f, limit), await alone.nearest(table(space), v, f, limit), `nearest ${what}`);
          compared++;
        }
      }
      expect(Math.min(modes.past, modes.present, modes.hidden)).toBeGreaterThan(5);
      const answers = mixed.textAnswers();
      expect(answers).toMatchObject({ copy: 0, lance: 0 });
      expect(answers.whole).toBeGreaterThan(5);
      expect(answers.space + answers.whole).toBe(compared);
      // Three spaces and the whole tenant: every row twice.
      const held = mixed.spaceCopies();
      expect(held).toMatchObject({ spaces: 4, rows: 2 * written, evictions: 0 });
      if (spaceCopyRows === undefined) expect(held).toMatchObject({ loads: 4, textOnly: 1 });
      else {
        // Every space grew past 60 rows: all four copies hold full text only, some read again on the way.
        expect(held.textOnly).toBe(4);
        expect(held.loads).toBeGreaterThan(4);
      }
      await mixed.close();
      await alone.close();
    },
  );

  it('drops the least recently searched copies beyond the budget and reads them again when searched', async () => {
    const budget = 120_000; // about two of these spaces
    const small = await LanceIndex.open(join(dir, 'small'), 4, 0, 0, 0, budget);
    const none = await LanceIndex.open(join(dir, 'none'), 4, 0, 0, 0, 0);
    const spaces = ['s1', 's2', 's3', 's4'];
    const batch = rows(0, 400, spaces);
    await small.add('t', batch);
    await none.add('t', batch);
    await none.maintain('t', 'force');
    await small.maintain('t', 'force');
    for (let round = 0; round < 3; round++)
      for (const space of spaces) {
        const f: RowFilter = { asOf: 1200, allKnown: true, space };
        const v = Float32Array.from({ length: 4 }, () => rand() - 0.5);
        const got = await small.nearest('t', v, f, 10);
        expectSame(got, await none.nearest('t', v, f, 10), `nearest in ${space}`);
        expect(small.spaceCopies().bytes).toBeLessThanOrEqual(budget);
      }
    const c = small.spaceCopies();
    // Round-robin over more spaces than fit: every search read its space again.
    expect(c.spaces).toBeGreaterThan(0);
    expect(c.spaces).toBeLessThan(spaces.length);
    expect(c.evictions).toBeGreaterThan(0);
    expect(c.loads).toBe(12);
    await small.close();
    await none.close();
  });
});

describe('a copy of a whole tenant', () => {
  it('is not made for a tenant larger than a copy may hold, asked by its size alone, not its rows', async () => {
    let reads = 0;
    let size = 101;
    const source: SpaceSource = {
      size: async () => size,
      rows: async () => {
        reads++;
        return [];
      },
      tokenize: async (text) => text.split(/\s+/),
    };
    const copies = new SpaceCopies(2 ** 30, 100, new TokenCache());
    expect(await copies.get('t', null, source)).toBeNull();
    // A tenant found too large is not asked again (its table only grows), and its spaces are other copies.
    size = 5;
    expect(await copies.get('t', null, source)).toBeNull();
    expect(reads).toBe(0);
    expect(await copies.get('t', 'a', source)).not.toBeNull();
    expect(reads).toBe(1);
    // Dropping the tenant (its table was deleted or replaced) forgets that it was too large.
    copies.dropTenant('t');
    expect(await copies.get('t', null, source)).not.toBeNull();
    expect(copies.held().spaces).toBe(1);
  });
});

/** A row of `space` as a source reads it. */
const spaceRow = (space: string, seq: number): SpaceRow => ({
  id: `${space}-${seq}`,
  seq,
  space,
  kind: 'claim',
  category: null,
  known_at: 1,
  asserted_at: 1,
  valid_from: 1,
  valid_to: 1e15,
  text: `harbour crane ${seq}`,
  vector: Float32Array.from([1, 0, 0, 0]),
});

describe('space copies under a budget too small for the spaces searched', () => {
  it('counts a copy loaded again soon after it was dropped, and says so once a minute, naming the setting', async () => {
    const source = (space: string): SpaceSource => ({
      rows: async () => Array.from({ length: 50 }, (_, i) => spaceRow(space, i + 1)),
      tokenize: async (text) => text.toLowerCase().split(/\s+/).filter(Boolean),
    });
    const probe = new SpaceCopies(2 ** 30, 1_000, new TokenCache());
    await probe.get('t', 'a', source('a'));
    const one = probe.held().bytes;
    const warnings: string[] = [];
    let now = 0;
    // Room for one copy, not two.
    const copies = new SpaceCopies(
      Math.floor(one * 1.5),
      1_000,
      new TokenCache(),
      (m) => warnings.push(m),
      () => now,
    );
    await copies.get('t', 'a', source('a'));
    await copies.get('t', 'b', source('b')); // drops a
    expect(copies.counts).toMatchObject({ loads: 2, evictions: 1, reloads: 0 });
    now = 5_000;
    await copies.get('t', 'a', source('a')); // drops b; a again within the window
    expect(copies.counts).toMatchObject({ loads: 3, evictions: 2, reloads: 1 });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /space "a" of tenant "t" is loaded again 5\.0 s after.*SVC_SEARCH_SPACES_MB=\d+ .*Raise SVC_SEARCH_SPACES_MB/,
    );
    now = 10_000;
    await copies.get('t', 'b', source('b')); // counted, not said again within the minute
    expect(copies.counts.reloads).toBe(2);
    expect(warnings).toHaveLength(1);
    now = 200_000;
    await copies.get('t', 'a', source('a')); // dropped longer ago than the window: a load, not a reload
    expect(copies.counts.reloads).toBe(2);
  });
});

describe('loads of copies', () => {
  it(`run at most ${LOADS_AT_ONCE} at once; the others wait their turn, and every one is answered`, async () => {
    let reading = 0;
    let mostReading = 0;
    const releases: (() => void)[] = [];
    const source = (space: string): SpaceSource => ({
      rows: async () => {
        mostReading = Math.max(mostReading, ++reading);
        await new Promise<void>((resolve) => releases.push(resolve));
        reading--;
        return Array.from({ length: 5 }, (_, i) => spaceRow(space, i + 1));
      },
      tokenize: async (text) => text.toLowerCase().split(/\s+/).filter(Boolean),
    });
    const copies = new SpaceCopies(2 ** 30, 1_000, new TokenCache());
    const spaces = Array.from({ length: 10 }, (_, i) => `s${i}`);
    const loads = spaces.map((s) => copies.get('t', s, source(s)));
    for (let turn = 0; turn < 200 && releases.length < LOADS_AT_ONCE; turn++) await new Promise((r) => setImmediate(r));
    expect(reading).toBe(LOADS_AT_ONCE);
    // Released one at a time: each ending load lets one more begin.
    while (loads.length > 0 && (releases.length > 0 || reading > 0)) {
      releases.shift()?.();
      for (let turn = 0; turn < 50; turn++) await new Promise((r) => setImmediate(r));
      if (releases.length === 0 && reading === 0) break;
    }
    const copied = await Promise.all(loads);
    expect(copied.map((c) => c?.size)).toEqual(spaces.map(() => 5));
    expect(mostReading).toBe(LOADS_AT_ONCE);
    expect(copies.mostLoadsAtOnce).toBe(LOADS_AT_ONCE);
    expect(copies.counts.loads).toBe(10);
  });
});

describe('a copy larger than the whole budget', () => {
  it('is read once, not again for every search (the scope only grows: LanceDB answers it)', async () => {
    let reads = 0;
    const source: SpaceSource = {
      rows: async () => {
        reads++;
        return Array.from({ length: 50 }, (_, i) => spaceRow('a', i + 1));
      },
      tokenize: async (text) => text.split(/\s+/),
    };
    const warnings: string[] = [];
    const copies = new SpaceCopies(1_000, 100, new TokenCache(), (m) => warnings.push(m));
    expect(await copies.get('t', 'a', source)).toBeNull();
    expect(await copies.get('t', 'a', source)).toBeNull();
    expect(reads).toBe(1);
    expect(copies.held()).toMatchObject({ spaces: 0, bytes: 0 });
    // Said once, naming the setting: the operator who raised SVC_SEARCH_EXACT_ROWS learns why it does not hold.
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/space "a" of tenant "t" holds 50 rows .*SVC_SEARCH_SPACES_MB=1 .*Raise SVC_SEARCH_SPACES_MB/);
  });
});

describe('a copy of rows whose vectors are views of one embedding batch', () => {
  it('keeps none of the batch: only its own packed vectors and each row prefilter cells', async () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    // An indexed row's vector is a view of its whole batch's buffer (the embedding thread's answer).
    const dimension = 384;
    let batch: Float32Array | null = new Float32Array(4_000 * dimension).fill(0.5);
    const gone = new WeakRef(batch.buffer);
    const copies = [new SpaceCopy(true), new SpaceCopy(false)];
    for (const copy of copies)
      copy.append(
        Array.from({ length: 3 }, (_, i) => ({ ...spaceRow('a', i + 1), vector: batch!.subarray(i * dimension, (i + 1) * dimension) })),
        [['harbour'], ['crane'], ['harbour', 'crane']],
      );
    batch = null;
    // A WeakRef's target is kept until the current job ends.
    await new Promise((r) => setTimeout(r, 0));
    gc();
    expect(gone.deref()).toBeUndefined();
    // And the copies still answer.
    expect(
      copies[0]!.nearest(
        Float32Array.from({ length: dimension }, () => 1),
        { asOf: 2, allKnown: true },
        3,
        'vector',
      ),
    ).toHaveLength(3);
    expect(copies[1]!.fullText(['crane'], { asOf: 2, allKnown: true }, 3).map((h) => h.id)).toEqual(['a-2', 'a-3']);
  });
});
