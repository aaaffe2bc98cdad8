// A space's copy kept on disk answers as the copy read from the table would, through appends, evictions
// and reloads; a file is complete or absent (a load's rows come before the appends that follow its read,
// a removal wins over a load in flight), and the files stay within their disk budget.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rng } from '../../../evals/lib/rng.ts';
import { copyFileThreads, LanceIndex } from '../lance/lance-index.ts';
import type { Hit, IndexRow, RowFilter } from '../index-row.ts';
import { encodeSegment, type SpaceRow } from './packed-format.ts';
import { CopyFiles } from './copy-files.ts';
import { LocalCopyIO } from './copy-io.ts';
import { OPEN_FILES, type FileSearch } from './copy-store.ts';
import { SpaceCopies, SpaceCopy, type SpaceSource } from './space-copies.ts';
import { TokenCache } from './text-mirror.ts';

let dir: string;
const rand = rng(41);
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
const WORDS = 'harbour crane storm ship berth cargo delay strike painting hiking beach camping pottery garden river bridge the a of'.split(
  ' ',
);

/** Rows of the given spaces, vectors of 16 cells of which most are zero (kept sparse) or none (dense). */
function rows(from: number, n: number, spaces: readonly string[]): IndexRow[] {
  return Array.from({ length: n }, (_, k) => {
    const seq = from + k + 1;
    const vector = new Float32Array(16);
    const dense = rand() < 0.3;
    for (let i = 0; i < 16; i++) if (dense || rand() < 0.2) vector[i] = rand() - 0.5;
    return {
      id: `n${seq % 53}`,
      seq,
      space: pick(spaces),
      kind: pick(['claim', 'turn']),
      category: rand() < 0.5 ? null : 'work',
      known_at: 1000 + Math.floor(rand() * 100),
      asserted_at: 1000,
      valid_from: 1000,
      valid_to: Number.MAX_SAFE_INTEGER,
      text: Array.from({ length: 2 + Math.floor(rand() * 12) }, () => pick(WORDS)).join(' '),
      vector,
      wvec: Float32Array.from({ length: 3 }, () => rand() - 0.5),
    };
  });
}

const key = (space: string): string => `t\u0000${space}`;
const ids = (hits: Hit[]): string[] => hits.map((h) => `${h.id}@${h.seq}:${h.score}`);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'copy-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Copy files whose bytes are written in place by an IO the test keeps, to read the files back. */
function localFiles(at: string, budget: number, maxRows: number, warn?: (m: string) => void): { files: CopyFiles; io: LocalCopyIO } {
  let io: LocalCopyIO | undefined;
  const files = new CopyFiles(at, budget, maxRows, warn, { io: (d, events) => (io = new LocalCopyIO(d, events)) });
  return { files, io: io! };
}

/** The rows of a scope's complete file, in order (its seqs) as read back from it, or null when it has none. */
const seqs = ({ files, io }: { files: CopyFiles; io: LocalCopyIO }, k: string): number[] | null =>
  files.has(k) ? (io.decoded(k)?.map((r) => r.seq) ?? null) : null;
const tokensOf = (rs: readonly IndexRow[]): string[][] => rs.map((r) => r.text.split(' '));

describe('copy files', () => {
  it('write a load whole before the appends asked after its read began, each row once, and a removal wins over a load in flight', () => {
    const local = localFiles(join(dir, 'order'), 1 << 30, 1000);
    const { files } = local;
    const [a, b, c] = [rows(0, 5, ['a']), rows(5, 3, ['a']), rows(8, 2, ['a'])];
    const commit = files.reserve(key('a'));
    files.append(key('a'), b, false, tokensOf(b)); // the table got b while the load read a
    expect(files.has(key('a'))).toBe(false);
    commit([...a, b[0]!], tokensOf([...a, b[0]!])); // the load's read saw b's first row already
    expect(seqs(local, key('a'))).toEqual([...a, ...b].map((r) => r.seq));
    files.append(key('a'), [...b.slice(1), ...c], false, tokensOf([...b.slice(1), ...c])); // b's rows again: kept once
    expect(seqs(local, key('a'))).toEqual([...a, ...b, ...c].map((r) => r.seq));
    expect(files.rows(key('a'))).toBe(10);
    expect(files.maxSeq(key('a'))).toBe(10);

    const late = files.reserve(key('x'));
    files.remove(key('x'));
    const x = rows(0, 4, ['x']);
    late(x, tokensOf(x));
    expect(files.has(key('x'))).toBe(false);
    // Appends do not start a file of a scope whose file was removed: only a load from the table does.
    files.append(key('x'), rows(4, 1, ['x']), true, [['w']]);
    expect(files.has(key('x'))).toBe(false);
    const y = rows(0, 2, ['y']);
    files.append(key('y'), y, true, tokensOf(y));
    expect(seqs(local, key('y'))).toEqual([1, 2]);
    // Rows without tokens (a table's first, before its full-text index) leave no file: it could not score them.
    files.append(key('y'), rows(2, 1, ['y']), false);
    expect(files.has(key('y'))).toBe(false);
    const z = files.reserve(key('z'));
    files.append(key('z'), rows(3, 1, ['z']));
    const zs = rows(0, 3, ['z']);
    z(zs, tokensOf(zs));
    expect(files.has(key('z'))).toBe(false);
  });

  it('keep the files last used open and answer the same past them: appends, merges, whole writes and removals of many scopes', () => {
    const local = localFiles(join(dir, 'open'), 1 << 30, 10_000);
    const { files } = local;
    const scopes = Array.from({ length: OPEN_FILES + 72 }, (_, i) => key(`s${i}`));
    const expected = new Map<string, number[]>();
    let seq = 0;
    for (let round = 0; round < 6; round++)
      for (const [i, k] of scopes.entries()) {
        if (round === 3 && i % 5 === 0) {
          // Written whole by a load, over the file appended to so far.
          const load = rows(seq, 4, ['w']);
          seq += 4;
          files.reserve(k)(load, tokensOf(load));
          expected.set(
            k,
            load.map((r) => r.seq),
          );
          continue;
        }
        if (round === 4 && i % 7 === 0) {
          files.remove(k);
          expected.delete(k);
          continue;
        }
        const appended = rows(seq, 1 + (i % 3), ['a']);
        seq += appended.length;
        files.append(k, appended, round === 0, tokensOf(appended));
        if (expected.has(k) || round === 0) expected.set(k, [...(expected.get(k) ?? []), ...appended.map((r) => r.seq)]);
        // Read back now and then, so reads and writes interleave across the open files.
        if ((i + round) % 3 === 0) expect(seqs(local, k)).toEqual(expected.get(k) ?? null);
      }
    for (const k of scopes) expect(seqs(local, k)).toEqual(expected.get(k) ?? null);
    expect(files.counts.merges).toBeGreaterThan(0);
    expect(files.counts.failed).toBe(0);
    files.close();
    // Closed, they are opened again when read.
    expect(seqs(local, scopes[1]!)).toEqual(expected.get(scopes[1]!));
  });

  it('merge appended segments as a binary counter carries, rows and answers unchanged', async () => {
    const { files, io } = localFiles(join(dir, 'merge'), 1 << 30, 10_000);
    const written = rows(0, 10, ['m']);
    files.reserve(key('m'))(written, tokensOf(written));
    const f: RowFilter = { asOf: 1060, space: 'm' };
    const q = Float32Array.from({ length: 16 }, (_, i) => (i % 3) - 1);
    for (let n = 0; n < 300; n++) {
      const some = rows(written.length, 1 + (n % 3), ['m']);
      files.append(key('m'), some, false, tokensOf(some));
      written.push(...some);
      // About log2 of the appends: never a run of small segments a search looks words up in one by one.
      expect(io.segmentRows(key('m'))!.length).toBeLessThanOrEqual(2 + Math.log2(written.length));
      if (n % 50 !== 49) continue;
      expect(io.decoded(key('m'))!.map((r) => r.seq)).toEqual(written.map((r) => r.seq));
      const copy = new SpaceCopy();
      copy.append(written, tokensOf(written));
      const asked: FileSearch[] = [
        { list: 'text', tokens: ['harbour', 'storm'], filter: f, limit: 8 },
        { list: 'near', query: q, filter: f, limit: 8, column: 'vector' },
      ];
      expect((await files.search(key('m'), asked))!.flatMap(ids)).toEqual([
        ...ids(copy.fullText(['harbour', 'storm'], f, 8)),
        ...ids(copy.nearest(q, f, 8, 'vector')),
      ]);
    }
    // Each row written again about log2 times, not at every append.
    expect(files.counts.merges).toBeGreaterThan(100);
    expect(files.counts.merges).toBeLessThan(300);
  });

  it('remove the least recently read beyond their budget, and a scope past the row bound', async () => {
    const at = join(dir, 'budget');
    const twenty = (s: string, from = 0): [IndexRow[], string[][]] => {
      const rs = rows(from, 20, [s]);
      return [rs, tokensOf(rs)];
    };
    const one = encodeSegment(...twenty('s0')).length;
    const files = new CopyFiles(at, 3.5 * one, 25, () => undefined);
    for (const s of ['s0', 's1', 's2']) files.reserve(key(s))(...twenty(s));
    await files.search(key('s0'), []); // s1 is now the least recently read
    files.reserve(key('s3'))(...twenty('s3'));
    expect(['s0', 's1', 's2', 's3'].map((s) => files.has(key(s)))).toEqual([true, false, true, true]);
    expect(readdirSync(at).length).toBe(3);
    const more = rows(20, 6, ['s2']);
    files.append(key('s2'), more, false, tokensOf(more));
    expect(files.has(key('s2'))).toBe(false);
    expect(readdirSync(at).length).toBe(2);
    // A new run starts with none: the last run's folder is moved aside and removed.
    const next = new CopyFiles(at, 1 << 30, 25);
    const n = rows(0, 1, ['n']);
    next.reserve(key('n'))(n, tokensOf(n));
    expect(readdirSync(at).length).toBe(1);
    expect(next.has(key('s0'))).toBe(false);
  });

  it('read an unreadable file as absent, and remove it', async () => {
    const at = join(dir, 'broken');
    const files = new CopyFiles(at, 1 << 30, 100);
    const a = rows(0, 3, ['a']);
    files.reserve(key('a'))(a, tokensOf(a));
    const [name] = readdirSync(at);
    writeFileSync(join(at, name!), 'not a copy\n');
    expect(await files.search(key('a'), [{ list: 'text', tokens: ['harbour'], filter: { asOf: 2000 }, limit: 3 }])).toBeNull();
    expect(files.has(key('a'))).toBe(false);
    expect(existsSync(join(at, name!))).toBe(false);
    expect(files.counts.failed).toBe(1);
  });
});

describe('copy files on their own thread', () => {
  it('answer as those written in place, each search finding the appends asked before it', async () => {
    const local = localFiles(join(dir, 'same-local'), 1 << 30, 10_000).files;
    const threaded = new CopyFiles(join(dir, 'same-thread'), 1 << 30, 10_000, undefined, { thread: true });
    const scopes = ['p', 'q', 'r'].map(key);
    let seq = 0;
    for (let round = 0; round < 40; round++) {
      const k = pick(scopes);
      const some = rows(seq, 1 + Math.floor(rand() * 4), ['p']);
      seq += some.length;
      const whole = rows(0, seq, ['p']);
      for (const files of [local, threaded]) {
        if (round % 13 === 5) files.remove(k);
        else if (round % 9 === 4) files.reserve(k)(whole, tokensOf(whole));
        else files.append(k, some, round < 3, tokensOf(some));
      }
      expect(threaded.has(k)).toBe(local.has(k));
      const asked: FileSearch[] = [
        { list: 'text', tokens: [pick(WORDS), pick(WORDS)], filter: { asOf: 1060, space: 'p' }, limit: 6 },
        { list: 'near', query: Float32Array.from({ length: 16 }, () => rand() - 0.5), filter: { asOf: 1200 }, limit: 6, column: 'vector' },
        { list: 'near', query: Float32Array.from({ length: 3 }, () => rand() - 0.5), filter: { asOf: 1200 }, limit: 6, column: 'wvec' },
      ];
      // Not awaited before the next round's writes are asked: the thread must answer from the file as it was.
      const [a, b] = [local.search(k, asked), threaded.search(k, asked)];
      expect((await b)?.map(ids) ?? null).toEqual((await a)?.map(ids) ?? null);
    }
    expect(threaded.counts).toMatchObject({ failed: 0, merges: local.counts.merges, reads: local.counts.reads });
    expect(threaded.bytes).toBe(local.bytes);
    threaded.close();
    local.close();
  });

  it('are on the event loop unless SVC_SEARCH_COPY_THREADS says 1; another value is refused, naming the setting', () => {
    expect(
      [{}, { SVC_SEARCH_COPY_THREADS: '' }, { SVC_SEARCH_COPY_THREADS: '0' }, { SVC_SEARCH_COPY_THREADS: '1' }].map((env) =>
        copyFileThreads(env),
      ),
    ).toEqual([0, 0, 0, 1]);
    for (const bad of ['2', 'yes', '-1'])
      expect(() => copyFileThreads({ SVC_SEARCH_COPY_THREADS: bad })).toThrow(/SVC_SEARCH_COPY_THREADS: .*"/);
  });

  it('are given up, every one, when their thread cannot take a row: searches then read the table', async () => {
    const said: string[] = [];
    const files = new CopyFiles(join(dir, 'lost'), 1 << 30, 100, (m) => said.push(m), { thread: true });
    const a = rows(0, 3, ['a']);
    files.reserve(key('a'))(a, tokensOf(a));
    const asked: FileSearch[] = [{ list: 'text', tokens: ['harbour', 'storm', 'ship'], filter: { asOf: 2000 }, limit: 3 }];
    expect(await files.search(key('a'), asked)).not.toBeNull();
    const unclonable = { ...rows(3, 1, ['a'])[0]!, text: 'harbour', extra: () => undefined };
    files.append(key('a'), [unclonable], false, [['harbour']]);
    expect(files.has(key('a'))).toBe(false);
    expect(await files.search(key('a'), asked)).toBeNull();
    expect(said.join('\n')).toMatch(/no longer used/);
    const b = rows(10, 2, ['b']);
    files.reserve(key('b'))(b, tokensOf(b));
    expect(files.has(key('b'))).toBe(false);
    files.close();
  });
});

describe.each([false, true])('space copies kept on disk (on their own thread: %s)', (thread) => {
  const SPACES = ['s1', 's2', 's3', 's4'];
  const budget = 40_000; // about two of these spaces' copies

  /** Searches every space in turn, comparing with an index whose copies are read from its table alone: to the last bit. */
  async function searchAll(withFiles: LanceIndex, none: LanceIndex): Promise<void> {
    for (const space of SPACES) {
      const f: RowFilter = { asOf: pick([1050, 1200]), space };
      const v = Float32Array.from({ length: 16 }, () => rand() - 0.5);
      expect(ids(await withFiles.nearest('t', v, f, 10)), `nearest in ${space}`).toEqual(ids(await none.nearest('t', v, f, 10)));
      const terms = [pick(WORDS), pick(WORDS)];
      expect(ids(await withFiles.fullText('t', terms, f, 10)), `${terms.join(' ')} in ${space}`).toEqual(
        ids(await none.fullText('t', terms, f, 10)),
      );
      expect(withFiles.spaceCopies().bytes).toBeLessThanOrEqual(budget);
      // All of a search's lists at once, when the space's copy is its file: as each list alone.
      const w = Float32Array.from({ length: 3 }, () => rand() - 0.5);
      const dated = { from: 1000, to: 1001 };
      const together = await withFiles.fileLists('t', terms, { vector: v, wvec: w, dated }, f, 10);
      if (together) {
        fileListsAnswered++;
        expect([together.text, together.vector, together.words, together.dated].map(ids)).toEqual(
          [
            await none.fullText('t', terms, f, 10),
            await none.nearest('t', v, f, 10),
            await none.nearest('t', w, f, 10, 'wvec'),
            await none.fullText('t', terms, { ...f, asserted: dated }, 10),
          ].map(ids),
        );
      }
    }
  }
  let fileListsAnswered = 0;

  it('answer as the copies read from the table, through appends and evictions; a table made here is read once a space, for its rows written before its full-text index', async () => {
    const copies = join(dir, `made-here-copies-${thread}`);
    const withFiles = await LanceIndex.open(join(dir, `made-here-${thread}`), 16, 3, 0, 0, budget, {
      exactRows: 10_000,
      copyFiles: { dir: copies, budgetBytes: 1 << 30, thread },
    });
    const none = await LanceIndex.open(join(dir, `made-here-none-${thread}`), 16, 3, 0, 0, budget, { exactRows: 10_000 });
    let written = 0;
    for (const n of [60, 40, 50]) {
      const batch = rows(written, n, SPACES);
      written += n;
      for (const index of [withFiles, none]) {
        await index.add('t', batch);
        await index.maintain('t', 'force');
      }
      await searchAll(withFiles, none);
      await searchAll(withFiles, none);
    }
    const c = withFiles.spaceCopies();
    expect(c.evictions).toBeGreaterThan(0);
    // Each space's first rows came before the table's full-text index, so each was read from the table once
    // (its file then written whole); every later search of a dropped copy read the file.
    expect(c.loads).toBe(SPACES.length);
    expect(c.fileSearches).toBeGreaterThan(SPACES.length);
    expect(fileListsAnswered).toBeGreaterThan(0);
    expect(withFiles.copyFiles()).toMatchObject({ files: 4, failed: 0 });
    await withFiles.dropTenant('t');
    expect(withFiles.copyFiles().files).toBe(0);
    await withFiles.close();
    await none.close();
  });

  it('are written by a space’s first load from a table made before, and then kept up to date', async () => {
    const at = join(dir, `older-${thread}`);
    const first = rows(0, 80, SPACES);
    const before = await LanceIndex.open(at, 16, 3, 0, 0, 0, { exactRows: 10_000 });
    await before.add('t', first);
    await before.close();
    const withFiles = await LanceIndex.open(at, 16, 3, 0, 0, budget, {
      exactRows: 10_000,
      copyFiles: { dir: join(dir, `older-copies-${thread}`), budgetBytes: 1 << 30, thread },
    });
    const none = await LanceIndex.open(join(dir, `older-none-${thread}`), 16, 3, 0, 0, budget, { exactRows: 10_000 });
    await none.add('t', first);
    await withFiles.maintain('t', 'force');
    await none.maintain('t', 'force');
    let written = first.length;
    for (let round = 0; round < 3; round++) {
      await searchAll(withFiles, none);
      const batch = rows(written, 30, SPACES);
      written += 30;
      for (const index of [withFiles, none]) await index.add('t', batch);
      await searchAll(withFiles, none);
    }
    const c = withFiles.spaceCopies();
    // Each space read from the table once, then searched in its file (its rows appended as the table got them).
    expect(c.loads).toBe(SPACES.length);
    expect(c.fileSearches).toBeGreaterThan(SPACES.length);
    expect(withFiles.copyFiles()).toMatchObject({ files: 4, failed: 0 });
    await withFiles.close();
    await none.close();
  });

  it('answer from the table when a file turns out unreadable as it is searched (it is removed, the copy loaded)', async () => {
    const copies = join(dir, `broken-copies-${thread}`);
    const withFiles = await LanceIndex.open(join(dir, `broken-index-${thread}`), 16, 3, 0, 0, budget, {
      exactRows: 10_000,
      copyFiles: { dir: copies, budgetBytes: 1 << 30, thread },
    });
    const none = await LanceIndex.open(join(dir, `broken-none-${thread}`), 16, 3, 0, 0, budget, { exactRows: 10_000 });
    for (const batch of [rows(0, 20, SPACES), rows(20, 60, SPACES)]) for (const index of [withFiles, none]) await index.add('t', batch);
    await searchAll(withFiles, none);
    await searchAll(withFiles, none);
    expect(withFiles.copyFiles()).toMatchObject({ files: SPACES.length, failed: 0 });
    for (const name of readdirSync(copies)) writeFileSync(join(copies, name), 'not a copy');
    await searchAll(withFiles, none);
    await searchAll(withFiles, none);
    expect(withFiles.copyFiles().failed).toBeGreaterThan(0);
    await withFiles.close();
    await none.close();
  });
});

describe('a space copy loaded from the table while the table gets rows', () => {
  it('keeps those rows in its file: the copy read from the file later holds them', async () => {
    const files = new CopyFiles(join(dir, 'race'), 1 << 30, 1000);
    // Room for one copy: loading the other space drops the first.
    const copies = new SpaceCopies(50_000, 1000, new TokenCache(), () => undefined, undefined, files);
    const tokenize = async (text: string): Promise<string[]> => text.split(/\s+/).filter((t) => t !== '');
    const first = rows(0, 40, ['a']);
    const later = rows(40, 5, ['a']);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reads = 0;
    const source = (space: string, table: () => SpaceRow[]): SpaceSource => ({
      rows: async () => {
        reads++;
        await held;
        return table();
      },
      tokenize,
    });
    const loading = copies.get(
      't',
      'a',
      source('a', () => first),
    );
    await new Promise((resolve) => setImmediate(resolve)); // the load has begun its read
    const appended = copies.append('t', later, tokenize); // the table got `later` after the load's read began
    await new Promise((resolve) => setImmediate(resolve)); // its file's share is done; its copy's waits for the load
    release();
    await appended;
    expect((await loading)?.size).toBe(45);
    await copies.get(
      't',
      'b',
      source('b', () => rows(100, 40, ['b'])),
    );
    expect(copies.loaded('t', 'a')).toBeUndefined();
    const again = await copies.get(
      't',
      'a',
      source('a', () => []),
    );
    expect(reads).toBe(2); // a and b from the table; a again from its file
    expect(again?.size).toBe(45);
    expect(again?.maxSeq).toBe(45);
  });
});
