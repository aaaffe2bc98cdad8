import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockEmbeddingModelV3 } from 'ai/test';
import * as lancedb from '@lancedb/lancedb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Ledger } from '../log/ledger.ts';
import { LocalEmbedder } from './embed/local-embedder.ts';
import { OpenAIEmbedder } from './embed/openai-embedder.ts';
import { SearchIndex, type IndexSource } from './search-index.ts';
import { LanceIndex } from './lance/lance-index.ts';
import { WordVectors } from './embed/word-vectors.ts';
import { gatedIndexSource } from '../../test/helpers/gated-index-source.ts';

let dir: string;
let ledger: Ledger;
const indexDir = () => join(dir, 'search');
const meta = () => JSON.parse(readFileSync(join(indexDir(), 'meta.json'), 'utf8')) as { embedder: string; dimension: number; seq: number };
const write = (ids: string[]) =>
  ledger.write('t', {
    space: 's',
    nodes: ids.map((id) => ({ id, kind: 'claim', statement: `Harbour crane ${id} broke down` })),
    edges: [],
  });
const textHits = async (index: SearchIndex) =>
  (await index.candidates('t', ['crane'], 'crane', { asOf: ledger.now() }, 50)).text.map((h) => h.id).sort();

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'search-index-'));
  ledger = await Ledger.open(join(dir, 'data'));
});

afterAll(async () => {
  await ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * The ledger as the index's source; without hints, commits come without their first versions (every node
 * worded from the store, as before those hints existed). `onLinksView` sees each read of linked words.
 */
function sourceWithHints(own: Ledger, hints: boolean, onLinksView: () => void = () => {}): IndexSource {
  return {
    renumberedAbove: () => own.renumberedAbove(),
    linksView: (tenant, nodes, placed) => {
      onLinksView();
      return own.linksView(tenant, nodes, hints ? placed : undefined);
    },
    isDropping: (tenant) => own.isDropping(tenant),
    isImported: (row) => own.isImported(row),
    onCommit: (listener) => own.onCommit((group) => listener(hints ? group : { ...group, firstVersions: undefined })),
    onTenantDropped: (listener) => own.onTenantDropped(listener),
    committedSeq: () => own.committedSeq(),
    nodesBetween: (after, upTo, limit) => own.nodesBetween(after, upTo, limit),
  };
}

/** Tenant `t`'s documents in the index at `dir`, by seq: [id, the text indexed]. */
async function documentsIn(dir: string): Promise<[string, string][]> {
  const db = await lancedb.connect(join(dir, 'tables'));
  try {
    const table = await db.openTable(`t_${Buffer.from('t').toString('hex')}`);
    const rows = (await table.query().select(['id', 'seq', 'text']).toArray()) as { id: string; seq: number; text: string }[];
    table.close();
    return rows.sort((x, y) => Number(x.seq) - Number(y.seq)).map((r) => [r.id, r.text]);
  } finally {
    db.close();
  }
}

describe('search index derived from the ledger', () => {
  it('indexes commits, records its progress, and catches up on reopening without duplicates', async () => {
    let index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger);
    await write(['a', 'b', 'c']);
    await index.caughtUp();
    expect(await textHits(index)).toEqual(['a', 'b', 'c']);
    // The progress is recorded off the event loop: by the time the index is idle.
    await index.idle();
    expect(meta()).toMatchObject({ embedder: 'local', dimension: 384 });
    const seq = meta().seq;
    expect(seq).toBeGreaterThanOrEqual(3);
    expect(seq).toBe(index.status().indexedSeq);
    await index.close();

    await write(['d', 'e']); // committed while no index listens
    index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger);
    await index.caughtUp();
    expect(await textHits(index)).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(await index.countRows()).toBe(5);
    await index.idle();
    expect(meta().seq).toBeGreaterThan(seq);
    await index.close();
  });

  it('a start after a clean close skips looking for rows indexed past the progress; after a crash it looks', async () => {
    const own = await Ledger.open(join(dir, 'clean-close-data'));
    const at = join(dir, 'clean-close-search');
    const metaAt = () => JSON.parse(readFileSync(join(at, 'meta.json'), 'utf8')) as { seq: number; closedClean?: boolean };
    const looked = vi.spyOn(LanceIndex.prototype, 'deleteAbove');
    try {
      const writeIds = (ids: string[]) =>
        own.write('t', { space: 's', nodes: ids.map((id) => ({ id, kind: 'claim', statement: `Harbour crane ${id}` })), edges: [] });
      let index = await SearchIndex.open(at, new LocalEmbedder(), own, null);
      await writeIds(['c1', 'c2']);
      await index.caughtUp();
      await index.idle();
      expect(looked).toHaveBeenCalledTimes(0); // a fresh index has nothing to look for
      await index.close();
      expect(metaAt().closedClean).toBe(true);

      index = await SearchIndex.open(at, new LocalEmbedder(), own, null);
      await index.caughtUp();
      expect(looked).toHaveBeenCalledTimes(0);
      await writeIds(['c3']);
      await index.caughtUp();
      await index.idle();
      await index.close();
      expect(metaAt().closedClean).toBe(true);

      // Cleared, durably, as the tables open and before anything is indexed: a run that crashes from here on
      // (this one is never attached) leaves the next start to look.
      const prepared = await SearchIndex.prepare(at, new LocalEmbedder(), null);
      expect(prepared.closedClean).toBe(true);
      expect(metaAt().closedClean).toBeUndefined();
      await SearchIndex.closePrepared(prepared);

      index = await SearchIndex.open(at, new LocalEmbedder(), own, null);
      await index.caughtUp();
      expect(looked).toHaveBeenCalledTimes(1);
      expect(await index.countRows()).toBe(3);
      await index.close();
    } finally {
      looked.mockRestore();
      await own.close();
    }
  });

  it('closes without waiting for maintenance in flight, its indexing done and recorded', async () => {
    // A stop's grace is seconds; an HNSW build over millions of rows is minutes.
    const own = await Ledger.open(join(dir, 'close-data'));
    const at = join(dir, 'close-search');
    let entered!: () => void;
    const inMaintenance = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const index = await SearchIndex.open(at, new LocalEmbedder(), sourceWithHints(own, true), null, undefined, {
      beforeMaintain: async () => {
        entered();
        await held;
      },
    });
    let timer: NodeJS.Timeout | undefined;
    try {
      await own.write('t', {
        space: 's',
        nodes: ['m1', 'm2'].map((id) => ({ id, kind: 'claim', statement: `Harbour crane ${id}` })),
        edges: [],
      });
      await inMaintenance; // the commit is indexed and its table's maintenance started
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('close waited for the maintenance in flight')), 10_000);
      });
      await Promise.race([index.close(), stuck]);
      const { seq } = JSON.parse(readFileSync(join(at, 'meta.json'), 'utf8')) as { seq: number };
      expect(seq).toBe(await own.committedSeq());
    } finally {
      clearTimeout(timer);
      release();
    }
    const reopened = await SearchIndex.open(at, new LocalEmbedder(), sourceWithHints(own, true), null);
    try {
      const hits = await reopened.candidates('t', ['crane'], 'crane', { asOf: own.now() }, 10);
      expect(hits.text.map((h) => h.id).sort()).toEqual(['m1', 'm2']);
    } finally {
      await reopened.close();
      await own.close();
    }
  });

  it('closes within its wait while a chunk waits on the store, recording nothing of it; the next start indexes it', async () => {
    // At 3M rows one chunk's read of linked words took 25 s, past a stop's grace.
    const own = await Ledger.open(join(dir, 'close-stuck-data'));
    const at = join(dir, 'close-stuck-search');
    let hold = false;
    let entered!: () => void;
    const inRead = new Promise<void>((r) => {
      entered = r;
    });
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    const plain = sourceWithHints(own, false);
    const source: IndexSource = {
      ...plain,
      linksView: async (tenant, nodes, placed) => {
        if (hold) {
          entered();
          await held;
        }
        return plain.linksView(tenant, nodes, placed);
      },
    };
    const index = await SearchIndex.open(at, new LocalEmbedder(), source, null);
    const writeIds = (ids: string[]) =>
      own.write('t', { space: 's', nodes: ids.map((id) => ({ id, kind: 'claim', statement: `Harbour crane ${id}` })), edges: [] });
    let timer: NodeJS.Timeout | undefined;
    try {
      await writeIds(['k1']);
      await index.idle();
      const recorded = (JSON.parse(readFileSync(join(at, 'meta.json'), 'utf8')) as { seq: number }).seq;
      hold = true;
      await writeIds(['k2', 'k3']);
      await inRead; // the chunk of k2 and k3 waits on the store
      const stuck = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error('close waited for the chunk on the store')), 10_000);
      });
      await Promise.race([index.close(), stuck]);
      release();
      await index.idle(); // the chunk left behind ends (in a server, the process's exit ends it)
      expect((JSON.parse(readFileSync(join(at, 'meta.json'), 'utf8')) as { seq: number }).seq).toBe(recorded);
      expect((await documentsIn(at)).map(([id]) => id)).toEqual(['k1']); // nothing of it reached the table
    } finally {
      clearTimeout(timer);
      release();
      await index.close(); // now idle: its thread and tables close
    }
    const reopened = await SearchIndex.open(at, new LocalEmbedder(), sourceWithHints(own, true), null);
    try {
      await reopened.caughtUp();
      const hits = await reopened.candidates('t', ['crane'], 'crane', { asOf: own.now() }, 10);
      expect(hits.text.map((h) => h.id).sort()).toEqual(['k1', 'k2', 'k3']);
    } finally {
      await reopened.close();
      await own.close();
    }
  });

  it('drops rows written after the recorded progress (a crash between add and record) and redoes them', async () => {
    const m = meta();
    // A crash leaves the progress recorded before its last appends, and no clean close's mark.
    writeFileSync(join(indexDir(), 'meta.json'), JSON.stringify({ ...m, seq: 2, closedClean: undefined }));
    const index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger);
    await index.caughtUp();
    expect(await index.countRows()).toBe(5);
    expect(await textHits(index)).toEqual(['a', 'b', 'c', 'd', 'e']);
    await index.close();
  });

  it('drops those rows after the open returns, while writes already come in, and indexes each row once', async () => {
    const own = await Ledger.open(join(dir, 'own-after-crash'));
    const at = join(dir, 'own-after-crash-index');
    const crane = (ids: string[]) =>
      own.write('t', {
        space: 's',
        nodes: ids.map((id) => ({ id, kind: 'claim', statement: `Harbour crane ${id} broke down` })),
        edges: [],
      });
    try {
      let index = await SearchIndex.open(at, new LocalEmbedder(), own);
      await crane(['a', 'b', 'c']);
      await index.caughtUp();
      await index.idle();
      await index.close();
      const saved = JSON.parse(readFileSync(join(at, 'meta.json'), 'utf8')) as Record<string, unknown>;
      writeFileSync(join(at, 'meta.json'), JSON.stringify({ ...saved, seq: 0, closedClean: undefined }));
      index = await SearchIndex.open(at, new LocalEmbedder(), own);
      await crane(['d']); // lands while the rows above the progress are being dropped
      await index.caughtUp();
      expect(await index.countRows()).toBe(4);
      const hits = await index.candidates('t', ['crane'], 'crane', { asOf: own.now() }, 50);
      expect(hits.text.map((h) => h.id).sort()).toEqual(['a', 'b', 'c', 'd']);
      await index.close();
    } finally {
      await own.close();
    }
  });

  it('re-embeds everything when the embedder changes', async () => {
    const model = new MockEmbeddingModelV3({
      doEmbed: async ({ values }) => ({ embeddings: values.map((v) => [v.length, 1, 0, 2]), warnings: [] }),
    });
    const index = await SearchIndex.open(indexDir(), new OpenAIEmbedder(model, 'mock'), ledger);
    await index.caughtUp();
    expect(meta()).toMatchObject({ embedder: 'openai:mock', dimension: 4 });
    expect(index.status()).toMatchObject({ embedder: 'openai:mock', dimension: 4, failure: null });
    expect(await index.countRows()).toBe(5);
    const near = await index.candidates('t', ['crane'], 'crane', { asOf: ledger.now() }, 10);
    expect(near.vector).toHaveLength(5);
    await index.close();
  });

  it('rebuilds page by page while commits keep arriving, indexing every row once and in order', async () => {
    rmSync(indexDir(), { recursive: true, force: true });
    // Pages of 2 rows: the catch-up is still reading the store when the writes below land.
    const index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger, null, 2);
    const during = ['p1', 'p2', 'p3'];
    for (const id of during) await write([id]);
    await index.caughtUp('t');
    expect(await textHits(index)).toEqual(['a', 'b', 'c', 'd', 'e', 'p1', 'p2', 'p3']);
    await index.idle();
    expect(await index.countRows()).toBe((await ledger.storeCounts()).Block);
    expect(meta().seq).toBe(await ledger.committedSeq());
    await index.close();
  });

  it("waits for its own tenant's commits only: another tenant's queued rows do not hold a search up", async () => {
    const index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger);
    await index.caughtUp();
    await ledger.write('other', {
      space: 's',
      nodes: Array.from({ length: 2000 }, (_, i) => ({ id: `o${i}`, kind: 'claim', statement: `Other tenant row ${i}` })),
      edges: [],
    });
    // The ledger awaits each commit listener in turn (earlier tests left closed indexes listening).
    await new Promise((r) => setImmediate(r));
    let everything = false;
    const all = index.caughtUp().then(() => {
      everything = true;
    });
    await index.caughtUp('t'); // 't' has nothing queued: resolves while 'other' is still being indexed
    expect(everything).toBe(false);
    await all;
    await write(['f']);
    await new Promise((r) => setImmediate(r));
    await index.caughtUp('t');
    expect(await textHits(index)).toContain('f');
    await index.close();
  });

  it('waits for no index batch in its own space: a flood into another space is not waited for, its own write is found', async () => {
    const index = await SearchIndex.open(indexDir(), new LocalEmbedder(), ledger);
    await index.caughtUp();
    const inA = async (words: string) =>
      (await index.candidates('t', words.split(' '), words, { asOf: ledger.now(), space: 'A' }, 50)).text.map((h) => h.id);
    await ledger.write('t', { space: 'A', nodes: [{ id: 'a0', kind: 'claim', statement: 'Quay gantry inspected' }], edges: [] });
    expect(await index.caughtUp('t', 'A')).toBeGreaterThanOrEqual(0);
    expect(await inA('gantry')).toEqual(['a0']); // the space's copy is loaded now
    // A flood into space B, then one write into A, all acknowledged before the search asks.
    for (let w = 0; w < 4; w++)
      await ledger.write('t', {
        space: 'B',
        nodes: Array.from({ length: 1500 }, (_, i) => ({ id: `b${w}-${i}`, kind: 'claim', statement: `Gantry flood row ${w} ${i}` })),
        edges: [],
      });
    await ledger.write('t', { space: 'A', nodes: [{ id: 'a1', kind: 'claim', statement: 'Second gantry inspected today' }], edges: [] });
    await new Promise((r) => setImmediate(r));
    const waited = await index.caughtUp('t', 'A');
    const found = await inA('gantry inspected');
    const indexed = index.status().indexedSeq;
    expect(waited).toBe(0);
    expect(found.sort()).toEqual(['a0', 'a1']);
    // Found before the table held it: the flood ahead of it in the queue was still being indexed.
    const committed = await ledger.committedSeq();
    expect(indexed).toBeLessThan(committed);
    // The tenant-wide search waits for the flood's batches still queued when it asks (the indexer may have
    // finished them while the line above awaited), and then sees the same.
    const pending = index.status().indexedSeq < committed;
    const tenantWaited = await index.caughtUp('t');
    if (pending) expect(tenantWaited).toBeGreaterThan(0);
    expect(index.status().indexedSeq).toBeGreaterThanOrEqual(committed);
    expect((await inA('gantry inspected')).sort()).toEqual(['a0', 'a1']);
    await index.close();
  });

  it("gathers a large table's batches, while a search in a space still finds the write queued behind the wait", async () => {
    // A ledger of its own, whose table counts as large from 20 rows; batches at least a minute apart.
    const base = mkdtempSync(join(tmpdir(), 'search-gather-'));
    const own = await Ledger.open(join(base, 'data'));
    const index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), own, null, undefined, {
      spacedRows: 20,
      appendGatherMs: 60_000,
    });
    try {
      const inA = async (words: string) =>
        (await index.candidates('t', words.split(' '), words, { asOf: own.now(), space: 'A' }, 50)).text.map((h) => h.id).sort();
      await own.write('t', {
        space: 'A',
        nodes: Array.from({ length: 30 }, (_, i) => ({ id: `a${i}`, kind: 'claim', statement: `Crane ${i} serviced` })),
        edges: [],
      });
      await index.settled(); // indexed and maintained: the table is large now
      expect(index.gatheredBatches).toBe(0);
      const committed = await own.committedSeq();
      expect(index.status().indexedSeq).toBe(committed);
      for (const id of ['late1', 'late2', 'late3']) {
        await own.write('t', { space: 'A', nodes: [{ id, kind: 'claim', statement: `Crane ${id} gantry serviced` }], edges: [] });
        await new Promise((r) => setImmediate(r));
      }
      // The first of them may have gone at once; the rest wait for the gather, not yet in the table.
      expect(index.gatheredBatches).toBe(1);
      expect(index.status().indexedSeq).toBeLessThan(await own.committedSeq());
      // A search confined to the space waits for no batch and finds all three.
      expect(await index.caughtUp('t', 'A')).toBe(0);
      expect(await inA('gantry')).toEqual(['late1', 'late2', 'late3']);
    } finally {
      await index.close();
      await own.close();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it("gathers a large table's batches from the first writes after a restart, before any maintenance there", async () => {
    // Before, a table counted as large only once this process had maintained it: a restarted server wrote
    // one LanceDB version a batch into a 3M-row table (28 in the app bench's 200 writes) until then.
    const base = mkdtempSync(join(tmpdir(), 'search-gather-restart-'));
    const options = { spacedRows: 20, appendGatherMs: 60_000 };
    let own = await Ledger.open(join(base, 'data'));
    let index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), own, null, undefined, options);
    let release = (): void => {};
    try {
      await own.write('t', {
        space: 'A',
        nodes: Array.from({ length: 30 }, (_, i) => ({ id: `a${i}`, kind: 'claim', statement: `Crane ${i} serviced` })),
        edges: [],
      });
      await index.settled();
      await index.close();
      await own.close();
      own = await Ledger.open(join(base, 'data'));
      // Maintenance held from its start: the table's size must not wait for this process's first one.
      const held = new Promise<void>((r) => (release = r));
      index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), own, null, undefined, {
        ...options,
        beforeMaintain: () => held,
      });
      await index.caughtUp('t'); // the start's catch-up done (nothing to index)
      const write = (id: string) =>
        own.write('t', { space: 'A', nodes: [{ id, kind: 'claim', statement: `Crane ${id} gantry serviced` }], edges: [] });
      // Until `done` holds, at most 10 s.
      const until = async (done: () => boolean): Promise<void> => {
        for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      // The first batch goes at once (none before it in this process) and opens the table.
      await write('late1');
      const first = await own.committedSeq();
      await until(() => index.status().indexedSeq >= first);
      expect(index.gatheredBatches).toBe(0);
      await write('late2');
      await write('late3');
      const last = await own.committedSeq();
      // The next batch waits to gather, or (before) was written at once.
      await until(() => index.gatheredBatches > 0 || index.status().indexedSeq >= last);
      expect(index.gatheredBatches).toBe(1);
      expect(index.status().indexedSeq).toBeLessThan(last);
    } finally {
      release();
      await index.close();
      await own.close();
      rmSync(base, { recursive: true, force: true });
    }
  });

  it('a space copied as full text only waits for its own queued rows, whose vectors the table answers', async () => {
    // A ledger of its own (as below), whose indexer is held on the rows of space B.
    const base = mkdtempSync(join(tmpdir(), 'search-text-only-'));
    const ledger = await Ledger.open(join(base, 'data'));
    const { source, open, hold } = gatedIndexSource(ledger, 'B');
    // Copies hold their space's vectors up to 2 rows here: space C's copy holds its full text only.
    const index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), source, null, undefined, { spaceCopyRows: 2 });
    const told = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    const inC = (words: string) => index.candidates('t', words.split(' '), words, { asOf: ledger.now(), space: 'C' }, 50);
    const ids = (hits: { id: string }[]): string[] => hits.map((h) => h.id).sort();
    await index.caughtUp();
    await ledger.write('t', {
      space: 'C',
      nodes: ['c0', 'c1', 'c2'].map((id) => ({ id, kind: 'claim', statement: `Dry dock ${id} pumped out` })),
      edges: [],
    });
    await index.caughtUp('t');
    await index.caughtUp('t', 'C');
    expect(ids((await inC('dock pumped')).text)).toEqual(['c0', 'c1', 'c2']);
    expect(index.spaceCopies()).toMatchObject({ spaces: 1, textOnly: 1 });
    expect(index.searchIsLight('t', 'C')).toBe(false); // its vectors are the table's
    // Space D's one row, with its vector, is in its copy's file (begun with its first row): searched there.
    await ledger.write('t', { space: 'D', nodes: [{ id: 'd0', kind: 'claim', statement: 'Dry dock d0 flooded' }], edges: [] });
    await index.caughtUp('t');
    await index.caughtUp('t', 'D');
    expect(index.searchIsLight('t', 'D')).toBe(true);
    expect(index.spaceCopies()).toMatchObject({ spaces: 1, textOnly: 1 });
    expect(index.spaceCopies().fileSearches).toBeGreaterThan(0);
    // Rows in B hold the indexer, then a write into C queues behind them: C's search waits for it to reach
    // the table, and then finds it in both lists.
    await hold();
    await ledger.write('t', { space: 'C', nodes: [{ id: 'c3', kind: 'claim', statement: 'Dry dock c3 pumped out at dawn' }], edges: [] });
    // Two rows into D: added to its file by the search, they take it past 2 rows, so it is removed and
    // the search waits as C's does (the copy is read from the table as full text only).
    await ledger.write('t', {
      space: 'D',
      nodes: ['d1', 'd2'].map((id) => ({ id, kind: 'claim', statement: `Dry dock ${id} flooded at dawn` })),
      edges: [],
    });
    await told();
    const caughtUp: string[] = [];
    const waiting = ['C', 'D'].map((space) =>
      index.caughtUp('t', space).then((batches) => {
        caughtUp.push(space);
        return batches;
      }),
    );
    for (let i = 0; i < 5; i++) await told();
    expect(caughtUp).toEqual([]);
    open();
    for (const batches of await Promise.all(waiting)) expect(batches).toBeGreaterThan(0);
    const found = await inC('dock pumped dawn');
    expect(ids(found.text)).toEqual(['c0', 'c1', 'c2', 'c3']);
    expect(ids(found.vector)).toContain('c3');
    const inD = await index.candidates('t', ['flooded', 'dawn'], 'flooded dawn', { asOf: ledger.now(), space: 'D' }, 50);
    expect(ids(inD.text)).toEqual(['d0', 'd1', 'd2']);
    expect(ids(inD.vector)).toEqual(['d0', 'd1', 'd2']);
    expect(index.spaceCopies()).toMatchObject({ spaces: 2, textOnly: 2 });
    await index.close();
    await ledger.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('with copy files on, a space whose file is small is searched as light, in its file', async () => {
    const base = mkdtempSync(join(tmpdir(), 'search-files-'));
    const ledger = await Ledger.open(join(base, 'data'));
    const copies = join(base, 'copies');
    const index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), ledger, null, undefined, {
      copyFiles: { dir: copies, budgetBytes: 1 << 30 },
    });
    await ledger.write('t', { space: 'A', nodes: [{ id: 'a0', kind: 'claim', statement: 'Quay gantry inspected' }], edges: [] });
    await index.caughtUp('t');
    // The table's first rows came before its full-text index, so they have no tokens and A has no file.
    expect(index.searchIsLight('t', 'A')).toBe(false);
    await ledger.write('t', { space: 'B', nodes: [{ id: 'b0', kind: 'claim', statement: 'Crane gantry inspected' }], edges: [] });
    await index.caughtUp('t');
    // The table was made by this index: B's file began with its first row.
    expect(index.searchIsLight('t', 'B')).toBe(true);
    expect(index.searchIsLight('t', 'Z')).toBe(false); // no copy, no file, its size unknown
    const found = (await index.candidates('t', ['inspected'], 'inspected', { asOf: ledger.now(), space: 'B' }, 5)).text.map((h) => h.id);
    expect(found).toEqual(['b0']);
    // Searched in its file: no copy was loaded.
    const c = index.spaceCopies();
    expect(c.loads).toBe(0);
    expect(c.fileSearches).toBeGreaterThan(0);
    await index.close();
    await ledger.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('a space whose copy lacks a few queued rows is still searched in memory; one lacking many is not', async () => {
    // A ledger of its own: this file's earlier indexes stay listeners of the shared one, and a write's
    // listeners are told one after another after it resolves.
    const base = mkdtempSync(join(tmpdir(), 'search-light-'));
    const own = await Ledger.open(join(base, 'data'));
    const ledger = own;
    // The indexer is held on the rows of space B, so the rows written to A after it stay queued until the
    // search itself embeds them.
    const { source, open, hold } = gatedIndexSource(ledger, 'B');
    const index = await SearchIndex.open(join(base, 'search'), new LocalEmbedder(), source);
    // A write resolves just before the ledger tells its commit listener: a turn of the event loop lets it.
    const told = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
    await index.caughtUp();
    await ledger.write('t', { space: 'A', nodes: [{ id: 'a0', kind: 'claim', statement: 'Quay gantry inspected' }], edges: [] });
    await index.caughtUp('t'); // the tenant's table holds a0
    expect(index.searchIsLight('t', 'A')).toBe(false); // no copy yet, and its size unknown
    expect(index.searchIsLight('t', 'A', 1)).toBe(true); // small: its first load is light
    expect(index.searchIsLight('t', 'A', 301)).toBe(false);
    await index.caughtUp('t', 'A'); // loads the space's copy
    expect(index.searchIsLight('t', 'A')).toBe(true);
    await hold();
    await ledger.write('t', { space: 'A', nodes: [{ id: 'a1', kind: 'claim', statement: 'Second gantry inspected' }], edges: [] });
    await told();
    expect(index.searchIsLight('t', 'A')).toBe(true);
    await ledger.write('t', {
      space: 'A',
      nodes: Array.from({ length: 40 }, (_, i) => ({ id: `a-many-${i}`, kind: 'claim', statement: `Gantry bolt ${i} checked` })),
      edges: [],
    });
    await told();
    expect(index.searchIsLight('t', 'A')).toBe(false);
    // Not loaded and small, but with more rows waiting to be embedded than a light search embeds itself.
    await ledger.write('t', {
      space: 'E',
      nodes: Array.from({ length: 33 }, (_, i) => ({ id: `e-${i}`, kind: 'claim', statement: `Crane cable ${i} greased` })),
      edges: [],
    });
    await ledger.write('t', { space: 'F', nodes: [{ id: 'f0', kind: 'claim', statement: 'Crane cable f0 greased' }], edges: [] });
    await told();
    expect(index.searchIsLight('t', 'E', 33)).toBe(false);
    expect(index.searchIsLight('t', 'F', 1)).toBe(true);
    // The search embeds what its copy lacks, and then the space is in memory again.
    expect(await index.caughtUp('t', 'A')).toBe(0);
    expect(index.searchIsLight('t', 'A')).toBe(true);
    const found = (await index.candidates('t', ['inspected'], 'inspected', { asOf: ledger.now(), space: 'A' }, 50)).text.map((h) => h.id);
    expect(found.sort()).toEqual(['a0', 'a1']);
    expect(index.status().indexedSeq).toBeLessThan(await ledger.committedSeq()); // still held on B
    open();
    await index.caughtUp('t');
    await index.close();
    await own.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('words the first versions of unlinked ids without reading the store, into the same documents', async () => {
    const base = mkdtempSync(join(tmpdir(), 'search-unlinked-'));
    const own = await Ledger.open(join(base, 'data'));
    let reads = 0;
    const sourceOf = (hints: boolean): IndexSource => sourceWithHints(own, hints, () => (hints ? reads++ : 0));
    const hinted = await SearchIndex.open(join(base, 'hinted'), new LocalEmbedder(), sourceOf(true));
    const plain = await SearchIndex.open(join(base, 'plain'), new LocalEmbedder(), sourceOf(false));
    const claim = (id: string, statement: string) => ({ id, kind: 'claim', statement });
    // New ids, no edge: worded without a read.
    await own.write('t', { space: 'farm', nodes: [claim('h1', 'tea harvest came early'), claim('h2', 'rain in the valley')], edges: [] });
    await hinted.caughtUp('t');
    expect(reads).toBe(0);
    // New ids linked in their own write (one of them to an older id), and an episode.
    await own.write('t', {
      space: 'market',
      nodes: [claim('p1', 'buyers paid forty dollars'), claim('p2', 'a second buyer came')],
      edges: [
        { source_id: 'h1', target_id: 'p1', edge_type: 'CAUSES' },
        { source_id: 'p2', target_id: 'h2', edge_type: 'CAUSES' },
      ],
    });
    await own.write('t', {
      space: 'chat',
      nodes: [{ id: 'e1', kind: 'episode', statement: 'we talked about the tea harvest' }],
      edges: [],
    });
    await hinted.caughtUp('t');
    await plain.caughtUp('t');
    expect(reads).toBeGreaterThan(0);
    await hinted.settled();
    await plain.settled();
    const want = await documentsIn(join(base, 'plain'));
    expect(want.map(([id]) => id)).toEqual(['h1', 'h2', 'p1', 'p2', 'e1']);
    // Linked words made it into some documents (the comparison would prove nothing otherwise).
    expect(want.some(([, text]) => text.includes('buyers paid forty dollars') && text.includes('tea harvest'))).toBe(true);
    expect(await documentsIn(join(base, 'hinted'))).toEqual(want);
    await hinted.close();
    await plain.close();
    await own.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('reads the linked words of first versions linked in their own write without asking the store where their ids are', async () => {
    // A bulk write (more ids than the ledger remembers from a write) of new ids, half of them linked: the
    // store's lookup of which spaces hold an id scans the tenant's ids past 40 ids.
    const base = mkdtempSync(join(tmpdir(), 'search-first-linked-'));
    // Ids found in the store, counted: not in the tables of ids' places, which answer reads once built.
    const own = await Ledger.open(join(base, 'data'), { idPlacesMb: 0 });
    const sourceOf = (hints: boolean): IndexSource => sourceWithHints(own, hints);
    const claim = (id: string, statement: string) => ({ id, kind: 'claim', statement });
    await own.write('t', { space: 'old', nodes: [claim('o1', 'the old orchard flooded')], edges: [] });
    const bulk = {
      space: 'bulk',
      nodes: Array.from({ length: 100 }, (_, i) => claim(`b${i}`, `bulk note ${i} about pears`)),
      edges: [
        ...Array.from({ length: 49 }, (_, i) => ({ source_id: `b${i}`, target_id: `b${i + 1}`, edge_type: 'CAUSES' })),
        { source_id: 'o1', target_id: 'b0', edge_type: 'CAUSES' },
      ],
    };
    const lookedUp = (): number => own.planStats().lookedUp;
    // With the first versions' spaces from their commit: only o1, linked from b0 and not new, is looked up.
    const hinted = await SearchIndex.open(join(base, 'hinted'), new LocalEmbedder(), sourceOf(true));
    await hinted.caughtUp();
    await own.write('t', bulk);
    const before = lookedUp();
    await hinted.caughtUp('t');
    expect(lookedUp() - before).toBeLessThanOrEqual(1);
    // Without them (the index reading the same rows again from the store), every linked id is looked up.
    const beforePlain = lookedUp();
    const plain = await SearchIndex.open(join(base, 'plain'), new LocalEmbedder(), sourceOf(false));
    await plain.caughtUp('t');
    expect(lookedUp() - beforePlain).toBeGreaterThanOrEqual(50);
    await hinted.settled();
    await plain.settled();
    const want = await documentsIn(join(base, 'plain'));
    expect(want).toHaveLength(101);
    // Linked words, from this write and from the older space, made it into the documents.
    expect(want.find(([id]) => id === 'b0')?.[1]).toContain('old orchard flooded');
    expect(want.find(([id]) => id === 'b7')?.[1]).toContain('bulk note 8');
    expect(await documentsIn(join(base, 'hinted'))).toEqual(want);
    await hinted.close();
    await plain.close();
    await own.close();
    rmSync(base, { recursive: true, force: true });
  });

  it('embeds a large batch (on the embedding thread, whole or in part) exactly as it embeds rows written a few at a time', async () => {
    const words = WordVectors.fromParts({
      words: ['harbour', 'crane', 'storm', 'ship', 'broke'],
      dimension: 4,
      vectors: Int8Array.from({ length: 20 }, (_, i) => ((i * 53) % 255) - 127),
    });
    const statements = Array.from(
      { length: 400 },
      (_, i) => `${['Harbour', 'Storm', 'Ship'][i % 3]} crane ${i} broke near berth ${i % 17}`,
    );
    const built: SearchIndex[] = [];
    const ledgers: Ledger[] = [];
    // One index catches up on all 400 rows at once (split between the thread and this one), one indexes a
    // live commit of 400 (the thread's alone), the last each commit of 10 as it lands (this thread's).
    for (const [name, groupSize] of [
      ['whole', 400],
      ['live', 400],
      ['small', 10],
    ] as const) {
      const l = await Ledger.open(join(dir, `ledger-${name}`));
      const open = () => SearchIndex.open(join(dir, `search-${name}`), new LocalEmbedder(), l, words);
      const early = name !== 'whole' ? await open() : null;
      for (let i = 0; i < statements.length; i += groupSize) {
        const nodes = statements.slice(i, i + groupSize).map((statement, j) => ({ id: `n${i + j}`, kind: 'claim', statement }));
        await l.write('t', { space: 's', nodes, edges: [] });
        if (early) await early.caughtUp();
      }
      const index = early ?? (await open());
      await index.caughtUp();
      ledgers.push(l);
      built.push(index);
    }
    for (const query of ['storm crane', 'ship broke near berth 3', 'harbour']) {
      const [whole, live, small] = await Promise.all(
        built.map((index, i) => index.candidates('t', query.split(' '), query, { asOf: ledgers[i]!.now() }, 20)),
      );
      expect(whole!.vector.length).toBe(20);
      expect(whole!.vector).toEqual(small!.vector);
      expect(live!.vector).toEqual(small!.vector);
      expect(whole!.words.length).toBe(20);
      expect(whole!.words).toEqual(small!.words);
      expect(live!.words).toEqual(small!.words);
    }
    for (const index of built) await index.close();
    for (const l of ledgers) await l.close();
  });
});
