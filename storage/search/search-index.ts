// The search index as a derived view of the ledger. It records (in meta.json beside the tables) the
// highest seq it has indexed and the embedder it used; on start-up it drops rows written after that
// record, re-embeds everything if the embedder changed, and indexes what the ledger holds beyond it.
// Commits are queued, not awaited by the writer; a search first waits until every row committed
// before it was called is indexed, so a search right after an acknowledged write finds it.
import { TenantDropping } from '../log/tenant-drops.ts';
import { syncDir } from '../log/kuzu/write-journal.ts';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { rename, writeFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import type { CommitGroup } from '../commit-group.ts';
import type { TenantView } from '../read/tenant-view.ts';
import type { UnionView } from '../read/union-view.ts';
import type { EdgeRecord, NodeVersion } from '../types.ts';
import { contextText, messageText } from './rank/context.ts';
import type { Embedder } from './embed/embedder.ts';
import { EmbedThread } from './embed/embed-thread.ts';
import { embedBatch, rowViews } from './embed/embed-batch.ts';
import { LOCAL_DIMENSION, LocalEmbedder } from './embed/local-embedder.ts';
import { enabled } from './rank/mechanisms.ts';
import { envWholeNumber } from '../env-megabytes.ts';
import { copyFileBytes, copyFileThreads, LanceIndex, type Maintenance, type VectorOptions } from './lance/lance-index.ts';
import { OpenWrites } from './open-writes.ts';
import type { Hit, IndexRow, RowFilter } from './index-row.ts';
import { timeWindow } from './rank/time-query.ts';
import { noteWait, SearchTiming } from './timing.ts';
import { WordVectors } from './embed/word-vectors.ts';

/**
 * What the index needs from the ledger it is derived from: the rows committed beyond a sequence number,
 * each commit as it happens, and a tenant's read model. The Ledger is one; the index names only this, so
 * the ledger (whose snapshots search) and the index do not import each other.
 */
export interface IndexSource {
  /** Rows above this sequence number were renumbered when the store opened (the index reads them again); null when none were. */
  renumberedAbove(): number | null;
  /**
   * The rows the words of the blocks linked to `nodes` are read from (Ledger.linksView); `placed` gives
   * the spaces holding some ids already, which are then not looked up.
   */
  linksView(
    tenant: string,
    nodes: readonly NodeVersion[],
    placed?: ReadonlyMap<string, readonly string[]>,
  ): Promise<TenantView | UnionView>;
  /** Whether the tenant's rows are being deleted: its rows are not indexed, its table is dropped once that ends. */
  isDropping(tenant: string): boolean;
  /** Whether a committed row was copied from another server (a page of a tenant copy), not written here. */
  isImported(row: NodeVersion | EdgeRecord): boolean;
  onCommit(listener: (group: Readonly<CommitGroup>) => void | Promise<void>): void;
  /** After a tenant's rows were deleted from the store: the index forgets the tenant. */
  onTenantDropped(listener: (tenant: string) => void | Promise<void>): void;
  committedSeq(): Promise<number>;
  nodesBetween(after: number, upTo: number, limit: number): Promise<NodeVersion[]>;
}

/** An index whose tables are open, not yet reading a ledger (SearchIndex.prepare). */
export interface PreparedIndex {
  readonly dir: string;
  readonly embedder: Embedder;
  readonly words: WordVectors | null;
  readonly lance: LanceIndex;
  /** How far the index had read the store, or null when it starts over. */
  readonly indexedSeq: number | null;
  /** The last close left no row above indexedSeq (Meta.closedClean). */
  readonly closedClean: boolean;
}

interface Meta {
  embedder: string;
  dimension: number;
  seq: number;
  /** What the text column holds; a different layout is rebuilt. */
  layout?: string;
  /**
   * Written by a close that left no row above `seq` in the tables (its indexing finished and recorded, none
   * failed), and cleared by the next open before it indexes anything: a start after such a close skips
   * deleting rows above `seq`, a scan of every table's seq column (~27 MB read from disk at 3M rows, beside
   * the store's own open).
   */
  closedClean?: true;
}

/** What the tables hold: the text column (own text plus linked blocks' words, context.ts, or own text alone) and the word-vector column. */
const layout = (words: WordVectors | null): string =>
  `${enabled('context') ? `text+context-3${enabled('exchange') ? '+exchange' : ''}` : 'text'}${words ? `+wvec-${words.dimension}` : ''}`;

/**
 * The full-text document of a block with context: its own text twice, then the linked blocks' words, so
 * BM25 weighs a block's own words above its neighbours'. Chosen on LoCoMo conversations 1-5 (recall_any@10
 * / MRR): own once 0.818 / 0.516, twice 0.825 / 0.533, three times 0.828 / 0.536.
 */
export function withLinkedWords(own: string, linked: string): string {
  return linked === '' ? own : `${own} ${own} ${linked}`;
}

export interface Candidates {
  text: Hit[];
  vector: Hit[];
  /** Nearest word-vector means; empty without word vectors or when the query has no known word. */
  words: Hit[];
  /** Full-text matches asserted within the dates the query names (time-query.ts); empty when it names none. */
  dated: Hit[];
}

export interface IndexStatus {
  embedder: string;
  dimension: number;
  indexedSeq: number;
  pendingRows: number;
  failure: string | null;
}

const CHUNK = 8192;
/** Rows queued that are written at once, without waiting for APPEND_GATHER_MS (LanceIndex.appendGatherMs). */
const APPEND_GATHER_ROWS = 2_000;
/** How long a close waits for the chunk being indexed before leaving it to the next start (see close). */
const CLOSE_WAIT_MS = 1_000;
/**
 * Batches this large are embedded on the embedding thread; a small write's rows cost less than the
 * hand-off. With one core the thread only adds its start (~0.5 s of CPU) and hand-offs, so it is not used.
 */
const THREAD_MIN_ROWS = 256;
/**
 * A space's copy lacking at most this many queued rows is still searched in memory: the local embedder
 * embeds them here in well under a millisecond (a remote embedder would wait on the network). Under a
 * steady flood of small writes nearly every space lacks a row or two at any instant, and counting those
 * searches heavy queued them behind two slots.
 */
const LIGHT_MISSING_ROWS = 32;
/**
 * Rows a space not loaded may hold for its search to count as light: the first load of a 120-row space
 * took 8.4–10.9 ms at 2.8M rows in the table (its ids through the `space` bitmap, the rows by id, tokens,
 * the copy), about what a cold user's list costs, and lists are light. Loads of 1,500 rows cost ten times that.
 */
const LIGHT_LOAD_ROWS = 300;
/**
 * The thread's share of a batch while the index catches up with the store; this thread embeds the rest
 * meanwhile. Measured on 100k rows (2 cores): the thread embedding whole batches became the bottleneck
 * (15.0k against 16.0k rows/s embedding here alone); halves, with the thread started while the first page
 * is read, gave 18.7-19.0k against 17.0-17.9k. Rows of live commits go to the thread whole: this thread is
 * then the one planning, journaling and answering the writes, and its share of a bulk import's embedding
 * (~40 ms of CPU per 1,000-row request, measured under `--cpu-prof`) came before the next request's
 * acknowledgement. The index may lag the ledger; reads wait for what they need (caughtUp).
 */
const THREAD_SHARE = 0.5;
export const threadShare = (catchingUp: boolean): number => (catchingUp ? THREAD_SHARE : 1);
/**
 * Rows read from the store at a time while catching up. The next page is read while the previous one is
 * embedded and written, and no more than two wait in the queue: a rebuild of a large ledger holds a few
 * pages in memory, not every row, and the store's read overlaps the indexing instead of preceding it.
 * A batch of live commits takes at most a page's rows too.
 */
const CATCH_UP_PAGE = 32_768;

/**
 * Rows of live commits the queue holds at most (SVC_INDEX_QUEUE_ROWS); a commit finding it full holds the
 * ledger's next commit until a batch takes a page (#room). Unbounded, a 3M-row fill outran the index by up
 * to 1M rows (~1 KB of heap each). Four pages: at one, the 300k-row import of the app bench went at the
 * index's pace, 19.7k against 29.9k rows/s (docs/storage.md).
 */
export const indexQueueRows = (env: NodeJS.ProcessEnv = process.env): number =>
  envWholeNumber(env, 'SVC_INDEX_QUEUE_ROWS', 4 * CATCH_UP_PAGE, 1, 'rows');
/** Quiet time after the last indexed commit before the tenants written get a full optimize. */
const SETTLE_MS = 1000;

/** The text a block is found by: its statement (an episode's message), else its id and kind. */
export function indexText(n: NodeVersion): string {
  return messageText(n) ?? `${n.kind} ${n.id}`;
}

export class SearchIndex {
  readonly #dir: string;
  readonly #lance: LanceIndex;
  readonly embedder: Embedder;
  /** Null when the word-vector file is missing (or the mechanism is switched off). */
  readonly words: WordVectors | null;
  /** The tenant's read model, loaded if it is not resident (the linked words of a block are read from it). */
  readonly #view: IndexSource['linksView'];
  /**
   * Node rows (by seq) queued for the table whose linked words are known to be none: the first versions of
   * their ids (CommitGroup.firstVersions), no edge of their commit touching them, not episodes. Nothing
   * stored can link to them, so their words need no read of the store (a write into a space whose read
   * model was evicted no longer loads it back for the index). Forgotten once the table holds them.
   */
  readonly #unlinked = new Set<number>();
  /**
   * Node rows (by seq) that are first versions of their ids linked by edges of their commit, with the
   * spaces of those rows: as of its commit nothing else names the id, so the read of its linked words
   * need not ask the store which spaces hold it (a scan of the tenant's ids past 40 ids, ~1 s at 1.2M
   * ids). Forgotten once the table holds them.
   */
  readonly #firstSpaces = new Map<number, readonly string[]>();
  readonly #dropping: (tenant: string) => boolean;
  #seq: number;
  /** Groups of rows in commit order, with the highest seq each group carried. */
  readonly #queue: { nodes: NodeVersion[]; seq: number }[] = [];
  /** The node rows in #queue. */
  #queuedRows = 0;
  #queued = 0;
  /** Rows a batch takes at most, and a catch-up reads at a time and holds beside the commits arriving. */
  readonly #pageRows: number;
  /** Rows of live commits queued at most; past it, commits wait (#room). */
  readonly #queueRows: number;
  /** Commits waiting for the queue to hold fewer than #queueRows rows. */
  #roomWaiters: (() => void)[] = [];
  /** Per tenant, the number of the last queued commit holding its rows: a search waits for its own only. */
  readonly #lastQueued = new Map<string, number>();
  #done = 0;
  /** Index batches finished (a batch is every commit queued when the indexer took them). */
  #batches = 0;
  /**
   * Per tenant and space, the rows of commits queued and not yet indexed, with each commit's number: a
   * search confined to a space indexes these into its space's copy itself instead of waiting for the queue.
   */
  readonly #pendingBySpace = new Map<string, { at: number; nodes: NodeVersion[] }[]>();
  #waiters: { target: number; resolve: () => void }[] = [];
  #working: Promise<void> | null = null;
  /** The close stopped waiting for the chunk under way: whatever it finishes later is not recorded. */
  #leftAtClose = false;
  #maintaining: Promise<void> | null = null;
  /** Tenants written since their last full optimize, and the timer that optimizes them once writes pause. */
  readonly #unsettled = new Set<string>();
  /** Large tenants whose last appends the pause left unoptimized (spaced out): settled() optimizes them. */
  readonly #spaced = new Set<string>();
  #settle: ReturnType<typeof setTimeout> | null = null;
  /** When the last batch was written (see #gatherAppends), and batches that waited to gather (tests). */
  #lastBatchAt = Number.NEGATIVE_INFINITY;
  gatheredBatches = 0;
  #gatherWake: (() => void) | null = null;
  #failure: string | null = null;
  readonly #stale = new Set<string>();
  #closed = false;
  /** Reading the rows the index lacks from the store; commits arriving meanwhile wait in #held. */
  #catchingUp: Promise<void> | null = null;
  #held: { nodes: NodeVersion[]; edges: EdgeRecord[]; seq: number }[] = [];
  #heldRows = 0;
  /**
   * Commits held during the catch-up outgrew #queueRows and were let go: the catch-up reads them from the
   * store too, going on to the store's newest row once it reaches #catchUpTo.
   */
  #extendCatchUp = false;
  /** Rows at or below this seq are read by the catch-up (they landed before it began); commits held meanwhile keep the rest. */
  #catchUpTo = 0;
  /** Started with the first large batch; null when it could not start or has stopped. */
  #thread: EmbedThread | null | undefined = undefined;
  /** The progress record being written, and whether another write is queued behind it. */
  #metaWriting: Promise<void> = Promise.resolve();
  #metaQueued = false;
  /** Resolves #queueShort when the queue holds fewer rows than the catch-up waits for. */
  #queueShort: (() => void) | null = null;
  /** Nodes of imported writes that may go on in the next page: indexed once whole (open-writes.ts). */
  readonly #open: OpenWrites;

  private constructor(
    dir: string,
    lance: LanceIndex,
    embedder: Embedder,
    words: WordVectors | null,
    seq: number,
    view: IndexSource['linksView'],
    dropping: (tenant: string) => boolean,
    imported: (row: NodeVersion | EdgeRecord) => boolean,
    pageRows: number,
    queueRows: number,
  ) {
    this.#pageRows = pageRows;
    this.#queueRows = queueRows;
    this.#open = new OpenWrites(imported);
    this.#dir = dir;
    this.#dropping = dropping;
    this.words = words;
    this.#view = view;
    this.#lance = lance;
    this.embedder = embedder;
    this.#seq = seq;
  }

  /** Opens (or rebuilds) the index under `dir` and queues whatever the ledger holds beyond it. */
  static async open(
    dir: string,
    embedder: Embedder,
    ledger: IndexSource,
    words: WordVectors | null = enabled('wordvec') ? WordVectors.load() : null,
    pageRows = CATCH_UP_PAGE,
    tables: VectorOptions = {},
    queueRows = indexQueueRows(),
  ): Promise<SearchIndex> {
    return SearchIndex.attach(await SearchIndex.prepare(dir, embedder, words, tables), ledger, pageRows, queueRows);
  }

  /**
   * The part of opening that needs no ledger (the embedder ready, the tables open, the progress read), so a
   * server runs it while the store opens; `attach` finishes. A prepared index not attached is closed with
   * `closePrepared`.
   */
  static async prepare(
    dir: string,
    embedder: Embedder,
    words: WordVectors | null = enabled('wordvec') ? WordVectors.load() : null,
    tables: VectorOptions = {},
  ): Promise<PreparedIndex> {
    mkdirSync(dir, { recursive: true });
    await embedder.ready();
    const meta = readMeta(dir);
    const fresh =
      !meta || meta.embedder !== embedder.id || meta.dimension !== embedder.dimension() || (meta.layout ?? 'text') !== layout(words);
    if (fresh) {
      // A different model's vectors are not comparable: start the tables over.
      for (const name of ['tables']) rmSync(join(dir, name), { recursive: true, force: true });
    }
    const lance = await LanceIndex.open(join(dir, 'tables'), embedder.dimension(), words?.dimension ?? 0, undefined, undefined, undefined, {
      copyFiles: { dir: join(dir, 'copies'), budgetBytes: copyFileBytes(), thread: copyFileThreads() > 0 },
      ...tables,
    });
    const closedClean = !fresh && meta.closedClean === true;
    // Cleared before anything is indexed, and durably: a crash of this run must make the next start look.
    if (closedClean) writeMetaDurably(dir, { ...meta, closedClean: undefined });
    return { dir, embedder, words, lance, indexedSeq: fresh ? null : meta.seq, closedClean };
  }

  static async closePrepared(p: PreparedIndex): Promise<void> {
    await p.lance.close();
  }

  static async attach(p: PreparedIndex, ledger: IndexSource, pageRows = CATCH_UP_PAGE, queueRows = indexQueueRows()): Promise<SearchIndex> {
    const { dir, lance, embedder, words, indexedSeq, closedClean } = p;
    // Rows the store renumbered on open were indexed under their old numbers: forget and re-read them.
    const seq = indexedSeq === null ? 0 : Math.min(indexedSeq, ledger.renumberedAbove() ?? indexedSeq);
    const index = new SearchIndex(
      dir,
      lance,
      embedder,
      words,
      seq,
      (t, nodes, placed) => ledger.linksView(t, nodes, placed),
      (t) => ledger.isDropping(t),
      (r) => ledger.isImported(r),
      pageRows,
      queueRows,
    );
    index.#writeMeta();
    // Listening first, then reading how far the store goes: a commit that lands in between is in both,
    // and only its rows above that mark are queued from the listener, so every row is indexed once.
    index.#catchingUp = (async () => {
      // Rows indexed past the progress saved (a crash) go first. Not before the server answers: a filtered
      // scan of the seq column, ~70 ms at 3M rows; searches wait for the catch-up anyway (caughtUp). None
      // after a clean close, unless the store renumbered rows on open.
      if (indexedSeq !== null && !(closedClean && ledger.renumberedAbove() === null)) await lance.deleteAbove(seq);
      ledger.onCommit((group) => index.onCommit(group));
      ledger.onTenantDropped((tenant) => index.dropTenant(tenant));
      index.#catchUpTo = await ledger.committedSeq();
      // The thread starts (~0.4 s) while the first page is read, not after.
      index.#threadFor(index.#catchUpTo - seq);
      await index.#catchUp(ledger, seq);
      // A table whose index build a stop cut short gets the rest built now, not at its tenant's next write.
      for (const tenant of await lance.tenantsMissingIndexes()) index.#stale.add(tenant);
    })()
      .catch((error: unknown) => {
        index.#failure = (error as Error).message;
        // Closed meanwhile: its reads of the closed store fail, as expected (see close).
        if (!index.#closed) console.error('search index: catching up with the store failed; the next start retries:', error);
      })
      .finally(() => {
        index.#catchingUp = null;
        // Maintenance waited for the catch-up (an HNSW build between its pages would slow every page).
        if (!index.#working && !index.#closed) index.#maintenanceSoon();
        index.#heldRows = 0;
        for (const g of index.#held.splice(0))
          index.#admit(
            {
              nodes: g.nodes.filter((n) => n.seq > index.#catchUpTo),
              edges: g.edges.filter((e) => e.seq > index.#catchUpTo),
            },
            g.seq,
          );
      });
    return index;
  }

  /**
   * The rows the index lacks, read page by page from the store (not the read models: they hold only
   * the tenants in use), each page queued once the queue is short.
   */
  async #catchUp(ledger: IndexSource, from: number): Promise<void> {
    const pageRows = this.#pageRows;
    let after = from;
    while (!this.#closed) {
      const page = await ledger.nodesBetween(after, this.#catchUpTo, pageRows);
      for (let i = 0; i < page.length; i += CHUNK) {
        const nodes = page.slice(i, i + CHUNK);
        this.#push(nodes, nodes.at(-1)?.seq ?? after);
      }
      if (page.length < pageRows) {
        if (!this.#extendCatchUp) return;
        // Commits let go meanwhile landed after #catchUpTo: read on to the newest row. One landing while the
        // store is asked is above the new mark, and held (or let go again, and this repeats).
        this.#extendCatchUp = false;
        after = this.#catchUpTo;
        this.#catchUpTo = await ledger.committedSeq();
      } else after = page.at(-1)?.seq ?? after;
      await this.#untilQueueBelow(pageRows);
    }
  }

  #untilQueueBelow(rows: number): Promise<void> {
    if (this.#queuedRows < rows || this.#closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.#queueShort = resolve;
    });
  }

  /**
   * Queues a commit's nodes. Returns at once, so the writer is not held up by embedding, unless the queue
   * is full (#queueRows): then the promise returned resolves once a batch has taken a page, and the ledger
   * commits nothing more meanwhile (its writes acknowledged already stay so). A bulk fill outran the
   * index and held up to 1M rows here (~1 GB of heap at 3M rows); now the rows waiting are bounded and
   * writes go at the index's pace when it is the slower.
   */
  onCommit(group: Readonly<CommitGroup>): void | Promise<void> {
    if (group.firstVersions && group.firstVersions.size > 0) {
      const touched = new Map<string, Set<string>>();
      const touch = (id: string, space: string): void => {
        const spaces = touched.get(id);
        if (spaces) spaces.add(space);
        else touched.set(id, new Set([space]));
      };
      for (const e of group.edges) {
        touch(e.source_id, e.space);
        touch(e.target_id, e.space);
      }
      for (const n of group.nodes) {
        if (!group.firstVersions.has(n.seq)) continue;
        const edges = touched.get(n.id);
        if (edges) this.#firstSpaces.set(n.seq, [...new Set([n.space, ...edges])]);
        else if (n.kind !== 'episode') this.#unlinked.add(n.seq);
      }
    }
    let seq = 0;
    for (const rows of [group.nodes, group.edges, group.declarations, group.verdicts]) for (const r of rows) seq = Math.max(seq, r.seq);
    if (this.#catchingUp === null) {
      this.#admit(group, seq);
      // Closed, nothing is queued any more: the writes go on (a stop's last commits must not wait forever).
      return this.#queuedRows >= this.#queueRows && !this.#closed ? this.#room() : undefined;
    }
    // Still catching up: rows the store held when it began are read by it; the rest follow it in order,
    // held here up to #queueRows and past that let go, for the catch-up to read from the store as well
    // (writes are not held up for a catch-up, which takes minutes at millions of rows).
    this.#held.push({ nodes: group.nodes, edges: group.edges, seq });
    this.#heldRows += group.nodes.length;
    if (this.#heldRows > this.#queueRows) {
      this.#held = [];
      this.#heldRows = 0;
      this.#extendCatchUp = true;
    }
  }

  /** Resolves once the queue holds fewer than #queueRows rows, or the index is closed. */
  #room(): Promise<void> {
    return new Promise((resolve) => this.#roomWaiters.push(resolve));
  }

  #roomMade(): void {
    if (this.#queuedRows >= this.#queueRows && !this.#closed) return;
    for (const resolve of this.#roomWaiters.splice(0)) resolve();
  }

  /**
   * Queues a commit's nodes whose writes are whole; the nodes of an imported write that may go on in the
   * next page are held (open-writes.ts), and the progress recorded stays below them until they are indexed.
   */
  #admit(rows: Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>, seq: number): void {
    const nodes = this.#open.admit(rows);
    this.#push(nodes, Math.min(seq, this.#open.lowestSeq() - 1));
  }

  /** Queues the held nodes of `tenant` (of every tenant when undefined): a read needs them now. */
  #release(tenant?: string): void {
    const nodes = this.#open.release(tenant);
    if (nodes.length === 0) return;
    const top = nodes.reduce((m, n) => Math.max(m, n.seq), 0);
    this.#push(nodes, Math.min(top, this.#open.lowestSeq() - 1));
  }

  #push(nodes: NodeVersion[], seq: number): void {
    if (this.#closed) return;
    this.#queue.push({ nodes, seq });
    this.#queuedRows += nodes.length;
    this.#queued++;
    const bySpace = new Map<string, NodeVersion[]>();
    for (const n of nodes) {
      this.#lastQueued.set(n.tenant, this.#queued);
      const k = spaceKey(n.tenant, n.space);
      const list = bySpace.get(k);
      if (list) list.push(n);
      else bySpace.set(k, [n]);
    }
    for (const [k, list] of bySpace) {
      this.#lastQueued.set(k, this.#queued);
      const pending = this.#pendingBySpace.get(k);
      if (pending) pending.push({ at: this.#queued, nodes: list });
      else this.#pendingBySpace.set(k, [{ at: this.#queued, nodes: list }]);
    }
    // Started after this turn, so groups queued together (a catch-up page's chunks) form one batch
    // whose chunks are embedded and written in a pipeline, not the first alone.
    this.#working ??= Promise.resolve()
      .then(() => this.#work())
      .finally(() => {
        this.#working = null;
      });
  }

  async #work(): Promise<void> {
    while (this.#queue.length > 0 && !this.#closed) {
      await this.#gatherAppends();
      if (this.#closed) break;
      const groups = this.#take();
      this.#queueShort?.();
      this.#queueShort = null;
      this.#roomMade();
      const touched = new Set<string>();
      // A close stops a batch between chunks (a catch-up page of 32,768 rows took minutes at 3M rows, past
      // a stop's grace); its progress is then not recorded, and the next start redoes it (see attach).
      let abandoned = false;
      try {
        const byTenant = new Map<string, NodeVersion[]>();
        for (const g of groups)
          for (const n of g.nodes) {
            const list = byTenant.get(n.tenant);
            if (list) list.push(n);
            else byTenant.set(n.tenant, [n]);
          }
        for (const [tenant, nodes] of byTenant) {
          if (abandoned) break;
          // Rows committed just before their tenant's deletion began: its table is dropped once the
          // deletion ends (dropTenant, after this batch), and its read model can no longer be loaded.
          if (this.#dropping(tenant)) continue;
          // Embeds the next chunk while LanceDB writes the previous one (its writes run off the JS thread).
          let writing: Promise<void> | null = null;
          for (let i = 0; i < nodes.length; i += CHUNK) {
            if (this.#closed) {
              abandoned = true;
              break;
            }
            const rows = await this.#rows(nodes.slice(i, i + CHUNK)).catch((error: unknown) => {
              // Its deletion began meanwhile (the view is refused): as above.
              if (error instanceof TenantDropping) return null;
              throw error;
            });
            if (rows === null) break;
            if (writing) await writing;
            // Left behind by a close: nothing more reaches the tables, which the next holder of the folder
            // may already be opening (the lock is released once the stores are closed).
            if (this.#leftAtClose) {
              abandoned = true;
              break;
            }
            writing = this.#lance.add(tenant, rows);
            writing.catch(() => undefined); // awaited below; this only keeps a failure from going unhandled meanwhile
          }
          if (writing) await writing;
          touched.add(tenant);
        }
        // After a failure the recorded seq stays put, so the next start redoes everything after it.
        if (this.#failure === null && !abandoned && !this.#leftAtClose) {
          this.#seq = Math.max(this.#seq, ...groups.map((g) => g.seq));
          this.#writeMeta();
        }
      } catch (error) {
        this.#failure = (error as Error).message;
        if (!this.#closed) console.error('search index: indexing failed; the next start catches up:', error);
      }
      this.#done += groups.length;
      this.#batches++;
      this.#lastBatchAt = performance.now();
      for (const g of groups)
        for (const n of g.nodes) {
          this.#unlinked.delete(n.seq);
          this.#firstSpaces.delete(n.seq);
          const k = spaceKey(n.tenant, n.space);
          const pending = this.#pendingBySpace.get(k);
          if (!pending) continue;
          while (pending.length > 0 && pending[0]!.at <= this.#done) pending.shift();
          if (pending.length === 0) this.#pendingBySpace.delete(k);
        }
      this.#wake();
      for (const t of touched) {
        this.#stale.add(t);
        this.#unsettled.add(t);
      }
      // Maintenance waits for a quiet queue: during a catch-up it runs once, not after every chunk.
      if (this.#queue.length === 0 && this.#catchingUp === null) this.#maintenanceSoon();
      this.#settleLater();
    }
  }

  /** The next batch: whole commits from the head of the queue, up to a page's rows (one commit at least). */
  #take(): { nodes: NodeVersion[]; seq: number }[] {
    let n = 0;
    let rows = 0;
    for (const g of this.#queue) {
      if (n > 0 && rows + g.nodes.length > this.#pageRows) break;
      rows += g.nodes.length;
      n++;
    }
    this.#queuedRows -= rows;
    return this.#queue.splice(0, n);
  }

  /** Waits, before a batch into large tables only, until LanceIndex.appendGatherMs has passed since the last batch. */
  async #gatherAppends(): Promise<void> {
    const left = this.#lance.appendGatherMs - (performance.now() - this.#lastBatchAt);
    if (left <= 0 || this.#catchingUp !== null) return;
    let rows = 0;
    const tenants = new Set<string>();
    for (const g of this.#queue)
      for (const n of g.nodes) {
        rows++;
        tenants.add(n.tenant);
      }
    if (rows >= APPEND_GATHER_ROWS || ![...tenants].every((t) => this.#lance.spacesAppends(t))) return;
    this.gatheredBatches++;
    await new Promise<void>((resolve) => {
      // A close ends the wait: what is queued is then left to the next start, as any batch a close stops.
      const timer = setTimeout(() => {
        this.#gatherWake = null;
        resolve();
      }, left);
      this.#gatherWake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  /**
   * Maintenance (full-text index merge, compaction, HNSW build) runs beside indexing, not in its queue: a
   * commit arriving while it runs is indexed at once, so a search right after a write does not wait for
   * an optimize (LanceDB commits appends and rewrites concurrently).
   */
  /**
   * Once writes pause for SETTLE_MS, the tenants written meanwhile get a full optimize: every row in the
   * full-text index instead of a flat scan of the last appends (with linked words indexed, a document is
   * about four turns long, and the flat scan of a few hundred rows cost more than the indexed search).
   */
  #settleLater(): void {
    if (this.#settle) clearTimeout(this.#settle);
    this.#settle = setTimeout(() => {
      this.#settle = null;
      if (this.#closed) return;
      if (this.#working || this.#maintaining) return this.#settleLater(); // still busy: look again later
      void this.#settleNow();
    }, SETTLE_MS);
    this.#settle.unref();
  }

  /** The full optimize of the tenants written since the last one, as maintenance (call when none runs). */
  #settleNow(why: Maintenance = 'pause'): Promise<void> {
    const tenants = [...this.#unsettled];
    this.#unsettled.clear();
    this.#maintaining = (async () => {
      for (const t of tenants) {
        if (this.#closed) break;
        const done = await this.#lance.maintain(t, why).catch((error: unknown) => {
          if (!this.#closed) console.error('search index: maintenance failed:', error);
          return 'settled' as const;
        });
        if (done === 'spaced') this.#spaced.add(t);
        else this.#spaced.delete(t);
      }
    })().finally(() => {
      this.#maintaining = null;
    });
    return this.#maintaining;
  }

  #maintenanceSoon(): void {
    this.#maintaining ??= (async () => {
      while (this.#stale.size > 0 && !this.#closed) {
        for (const tenant of [...this.#stale]) {
          this.#stale.delete(tenant);
          try {
            await this.#lance.maintain(tenant);
          } catch (error) {
            if (!this.#closed) console.error('search index: maintenance failed:', error); // closed under it: see close
          }
        }
      }
    })().finally(() => {
      this.#maintaining = null;
    });
  }

  async #rows(nodes: NodeVersion[]): Promise<IndexRow[]> {
    const texts = nodes.map(indexText);
    const { vectors, wvecs } = await this.#vectors(texts);
    // Called with one tenant's rows at a time.
    // Nodes known to have no linked words need no view; a batch of only those reads nothing.
    const linked = enabled('context') ? nodes.filter((n) => !this.#unlinked.has(n.seq)) : [];
    const view = linked[0] ? await this.#view(linked[0].tenant, linked, this.#placed(linked)) : null;
    return nodes.map((n, i) => ({
      id: n.id,
      seq: n.seq,
      space: n.space,
      kind: n.kind,
      category: n.category,
      known_at: n.known_at,
      asserted_at: n.asserted_at,
      valid_from: n.valid_from,
      valid_to: n.valid_to,
      text: view && !this.#unlinked.has(n.seq) ? withLinkedWords(texts[i] ?? '', contextText(view, n)) : (texts[i] ?? ''),
      vector: vectors[i] ?? new Float32Array(this.#lance.dimension),
      wvec: wvecs?.[i],
    }));
  }

  /**
   * The spaces of the ids among `nodes` that are first versions linked within their commit (#firstSpaces);
   * an id with another version among them is left to the store's lookup (a later version may be elsewhere).
   */
  #placed(nodes: readonly NodeVersion[]): Map<string, readonly string[]> {
    const placed = new Map<string, readonly string[]>();
    const other = new Set<string>();
    for (const n of nodes) {
      const spaces = this.#firstSpaces.get(n.seq);
      if (spaces && !placed.has(n.id)) placed.set(n.id, spaces);
      else other.add(n.id);
    }
    for (const id of other) placed.delete(id);
    return placed;
  }

  /** Both vector columns of `texts`: a large batch's on the embedding thread, a small one's here. */
  async #vectors(texts: string[]): Promise<{ vectors: Float32Array[]; wvecs: Float32Array[] | undefined }> {
    const local = this.embedder instanceof LocalEmbedder;
    const thread = this.#threadFor(texts.length);
    if (thread) {
      try {
        if (local) {
          // Both threads embed while catching up: the thread its share, this one the rest meanwhile.
          const cut = Math.round(texts.length * threadShare(this.#catchingUp !== null));
          const away = thread.embed(texts.slice(0, cut));
          const here = cut < texts.length ? await this.#embedHere(texts.slice(cut)) : { vectors: [], wvecs: this.words ? [] : undefined };
          const done = await away;
          if (done.local)
            return {
              vectors: [...done.local, ...here.vectors],
              wvecs: done.wvecs && here.wvecs ? [...done.wvecs, ...here.wvecs] : undefined,
            };
        } else {
          const [vectors, done] = await Promise.all([this.embedder.embed(texts), thread.embed(texts)]);
          return { vectors, wvecs: done.wvecs ?? undefined };
        }
      } catch (error) {
        if (!thread.failure) throw error;
        console.error('search index: the embedding thread stopped; embedding on the main thread from now on:', thread.failure);
        this.#thread = null;
      }
    }
    return this.#embedHere(texts);
  }

  /** Both vector columns computed on this thread; the local embedder's in one pass with the word vectors. */
  async #embedHere(texts: string[]): Promise<{ vectors: Float32Array[]; wvecs: Float32Array[] | undefined }> {
    const { local, wvecs } = embedBatch(texts, this.embedder instanceof LocalEmbedder, this.words);
    return {
      vectors: local ? rowViews(local, LOCAL_DIMENSION) : await this.embedder.embed(texts),
      wvecs: wvecs && this.words ? rowViews(wvecs, this.words.dimension) : undefined,
    };
  }

  /** The embedding thread, for a batch of `rows` worth handing to it. */
  #threadFor(rows: number): EmbedThread | null {
    const local = this.embedder instanceof LocalEmbedder;
    if (rows < THREAD_MIN_ROWS || !(local || this.words) || availableParallelism() < 2) return null;
    if (this.#thread === undefined) {
      try {
        this.#thread = EmbedThread.start(local, this.words);
      } catch (error) {
        console.error('search index: no embedding thread; embedding on the main thread:', error);
        this.#thread = null;
      }
    }
    return this.#thread;
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => w.target <= this.#done);
    this.#waiters = this.#waiters.filter((w) => w.target > this.#done);
    for (const w of ready) w.resolve();
  }

  /**
   * Resolves once a search of `tenant` (of its `space`) sees every row committed before this call; returns
   * how many index batches it waited for. Without a tenant it waits for every commit; with one, for the
   * commits holding that tenant's rows (commits are indexed in order, so waiting for its last one suffices;
   * another tenant's bulk import does not hold its searches up). With a space whose copy can be held
   * (space-copies.ts) it waits for no batch: the space's own queued rows are embedded and added to the copy
   * here, so a flood of writes into other spaces is never waited for. A space too large for a copy with
   * its vectors (whose vectors the table answers) waits for the last commit holding its rows.
   */
  async caughtUp(tenant?: string, space?: string): Promise<number> {
    // Until the catch-up has read the store, nobody knows which tenants' rows it will queue.
    while (this.#catchingUp) await this.#catchingUp;
    // An imported write held back as possibly unfinished: a read is answered from what is stored now.
    this.#release(tenant);
    if (tenant !== undefined && space !== undefined && (await this.#freshCopy(tenant, space))) {
      noteWait(0);
      return 0;
    }
    return this.#caughtUpQueued(tenant === undefined ? undefined : space === undefined ? tenant : spaceKey(tenant, space));
  }

  /**
   * Brings the space's copy up to every committed row: the rows still queued for the table (or being
   * written to it) are embedded and added now; the table's own append later skips them by seq. False when
   * the space has no copy with its vectors (the tenant has no table yet, the space is too large, or copies
   * are off): then the table answers its vector queries, and its rows must be in the table.
   */
  async #freshCopy(tenant: string, space: string): Promise<boolean> {
    const copy = await this.#lance.spaceCopy(tenant, space);
    if (!copy?.hasVectors) return false;
    const nodes = this.#queuedAbove(tenant, space, copy.maxSeq);
    // False when the rows took the copy past the rows it holds with vectors (it is read again without).
    return nodes.length === 0 || this.#lance.appendToCopy(tenant, space, copy, await this.#rows(nodes));
  }

  /** The space's rows still queued for the table above `seq` (a copy's highest: those it does not hold yet). */
  #queuedAbove(tenant: string, space: string, seq: number): NodeVersion[] {
    const pending = this.#pendingBySpace.get(spaceKey(tenant, space)) ?? [];
    return pending.flatMap((p) => p.nodes).filter((n) => n.seq > seq);
  }

  #caughtUpQueued(key?: string): Promise<number> {
    const target = key === undefined ? this.#queued : (this.#lastQueued.get(key) ?? 0);
    if (this.#done >= target) {
      noteWait(0);
      return Promise.resolve(0);
    }
    const t0 = performance.now();
    const b0 = this.#batches;
    return new Promise((resolve) =>
      this.#waiters.push({
        target,
        resolve: () => {
          noteWait(performance.now() - t0);
          resolve(this.#batches - b0);
        },
      }),
    );
  }

  /** Full-text and vector candidates for one tenant (rows, not ids: a node may match by several versions). */
  async candidates(
    tenant: string,
    terms: readonly string[],
    query: string,
    filter: RowFilter,
    limit: number,
    timing = new SearchTiming(),
  ): Promise<Candidates> {
    timing.add('maintaining', this.#maintaining ? 1 : 0);
    // A copy dropped and read again since caughtUp lacks the space's queued rows: added again (cheap when none).
    if (filter.space !== undefined) await this.#freshCopy(tenant, filter.space);
    const [vector] = await timing.time('embed', () => this.embedder.embed([query]));
    const t = performance.now();
    const wvec = this.words?.embed(query);
    timing.add('wembed', performance.now() - t);
    const known = wvec !== undefined && wvec.some((x) => x !== 0);
    const window = enabled('time') ? timeWindow(query) : null;
    const vectorAsked = vector && enabled('vectors') ? vector : undefined;
    const fromFile = await timing.time(
      'file',
      this.#lance.fileLists(
        tenant,
        terms,
        { vector: vectorAsked, wvec: known ? wvec : undefined, dated: window ?? undefined },
        filter,
        limit,
      ),
    );
    if (fromFile) {
      void this.#settleIfSearched(tenant);
      return fromFile;
    }
    const [text, near, words, dated] = await Promise.all([
      timing.time('text', this.#lance.fullText(tenant, terms, filter, limit)),
      vectorAsked ? timing.time('vector', this.#lance.nearest(tenant, vectorAsked, filter, limit)) : Promise.resolve([]),
      known ? timing.time('wvec', this.#lance.nearest(tenant, wvec, filter, limit, 'wvec')) : Promise.resolve([]),
      window ? timing.time('dated', this.#lance.fullText(tenant, terms, { ...filter, asserted: window }, limit)) : Promise.resolve([]),
    ]);
    void this.#settleIfSearched(tenant);
    return { text, vector: near, words, dated };
  }

  /**
   * A large table nobody searched at LanceDB is optimized only now and then (SPACED_OPTIMIZE_ROWS); once
   * a search reads its unindexed rows by a flat scan, the pause after writes settles it, and when no write
   * comes, a pause from now does.
   */
  async #settleIfSearched(tenant: string): Promise<void> {
    if (this.#closed || this.#unsettled.has(tenant) || !(await this.#lance.wantsSettle(tenant))) return;
    this.#unsettled.add(tenant);
    if (!this.#settle) this.#settleLater();
  }

  /**
   * Whether a search of the space is as cheap as a list (admission: it takes no heavy slot). Either its
   * copy is loaded and lacks at most LIGHT_MISSING_ROWS of the rows committed to the space (embedded by the
   * search itself), or it is not loaded and the space is small (`spaceRows`, its node rows, known from its
   * read model in memory, or from its copy file): its first load reads at most LIGHT_LOAD_ROWS rows through
   * the `space` bitmap, or from the file.
   * Under a flood of writes into the space, or for a larger or unknown space, the wait is seconds, and
   * stays behind the heavy slots.
   */
  searchIsLight(tenant: string, space: string, spaceRows?: number): boolean {
    if (this.#catchingUp || this.#open.holds(tenant)) return false;
    const local = this.embedder instanceof LocalEmbedder;
    const copy = this.#lance.loadedSpaceCopy(tenant, space);
    if (!copy) {
      // A space kept in a copy file is as cheap to load as its rows are few, whether its read model is in memory or not.
      const rows = spaceRows ?? this.#lance.copyFileRows(tenant, space);
      if (rows === undefined || rows > LIGHT_LOAD_ROWS || !local || !this.#lance.mayCopy(tenant, space)) return false;
    } else if (!copy.hasVectors) return false;
    const missing = this.#queuedAbove(tenant, space, copy?.maxSeq ?? Number.NEGATIVE_INFINITY).length;
    return missing === 0 || (missing <= LIGHT_MISSING_ROWS && local);
  }

  /** Full-text matches among the rows `filter` admits (capped at `cap`): counts, not ranking. */
  async textMatches(tenant: string, terms: readonly string[], filter: RowFilter, cap: number): Promise<Hit[]> {
    return this.#lance.fullText(tenant, terms, filter, cap);
  }

  /** Full-text matches hidden from this read because they were learned after as_of (capped at `cap`). */
  async hiddenMatches(tenant: string, terms: readonly string[], filter: RowFilter, cap: number): Promise<Hit[]> {
    return this.#lance.fullText(tenant, terms, { ...filter, hidden: true }, cap);
  }

  /**
   * Resolves when nothing is queued, no indexing or maintenance is running and the progress is recorded
   * (an imported write held back as possibly unfinished stays held: a read or an optimize indexes it).
   */
  async idle(): Promise<void> {
    while (this.#catchingUp || this.#working || this.#maintaining) await (this.#catchingUp ?? this.#working ?? this.#maintaining);
    await this.#metaWriting;
  }

  /**
   * Resolves once everything written is indexed and settled: the full optimize that runs once writes pause
   * for SETTLE_MS is run now for the tenants written since, instead of when its timer fires. Scores of the
   * full-text side change with that optimize (the appended rows' statistics join the index's), so what
   * compares two answers' scores waits for this first, not for a time.
   */
  async settled(): Promise<void> {
    await this.idle();
    if (this.#settle) {
      clearTimeout(this.#settle);
      this.#settle = null;
    }
    for (const t of this.#spaced) this.#unsettled.add(t);
    if (this.#unsettled.size > 0) await this.#settleNow('force');
    await this.idle();
  }

  /**
   * Forgets every row of `tenant` (its rows were deleted from the store), once what is queued is indexed:
   * a queued commit of the tenant would otherwise bring its table back.
   */
  async dropTenant(tenant: string): Promise<void> {
    this.#open.release(tenant);
    await this.idle();
    this.#unsettled.delete(tenant);
    this.#spaced.delete(tenant);
    this.#stale.delete(tenant);
    await this.#lance.dropTenant(tenant);
  }

  /** Brings every tenant's full-text and vector index up to date now (benchmarks, tests). */
  async optimize(tenants: readonly string[]): Promise<void> {
    for (const t of tenants) this.#release(t);
    await this.idle();
    for (const t of tenants) {
      // Settled now: the optimize due once writes pause would only repeat this one.
      this.#unsettled.delete(t);
      this.#spaced.delete(t);
      await this.#lance.maintain(t, 'force');
    }
    if (this.#unsettled.size === 0 && this.#settle) {
      clearTimeout(this.#settle);
      this.#settle = null;
    }
  }

  status(): IndexStatus {
    return {
      embedder: this.embedder.id,
      dimension: this.#lance.dimension,
      indexedSeq: this.#seq,
      pendingRows: this.#queuedRows + this.#heldRows + this.#open.size,
      failure: this.#failure,
    };
  }

  async countRows(): Promise<number> {
    return this.#lance.countRows();
  }

  /** What the index holds in memory (diagnosis). */
  memory(): ReturnType<LanceIndex['memory']> {
    return this.#lance.memory();
  }

  /** The space copies held, loaded and dropped (benchmarks, diagnosis). */
  spaceCopies(): ReturnType<LanceIndex['spaceCopies']> {
    return this.#lance.spaceCopies();
  }

  /** The progress as meta.json records it. */
  #meta(): Meta {
    return { embedder: this.embedder.id, dimension: this.#lance.dimension, seq: this.#seq, layout: layout(this.words) };
  }

  /**
   * Records the progress off the event loop (a synchronous write and rename took ~3 ms a commit on a
   * loaded machine, right when a search follows the write): one write at a time, each of the state when
   * it starts, so a commit arriving meanwhile is recorded by the next. A record that lags only makes the
   * next start index a few rows again.
   */
  #writeMeta(): void {
    if (this.#metaQueued) return;
    this.#metaQueued = true;
    this.#metaWriting = this.#metaWriting.then(async () => {
      this.#metaQueued = false;
      const meta = this.#meta();
      const tmp = join(this.#dir, 'meta.json.tmp');
      try {
        await writeFile(tmp, JSON.stringify(meta));
        await rename(tmp, join(this.#dir, 'meta.json'));
      } catch (error) {
        console.error('search index: recording progress failed; the next start redoes more:', error);
      }
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#gatherWake?.();
    this.#queueShort?.();
    this.#roomMade();
    if (this.#settle) clearTimeout(this.#settle);
    // Indexing and its recorded progress are waited for, maintenance in flight is not: an HNSW build over
    // millions of rows runs for minutes, and waiting for it kept the ledger from closing (its journal
    // copied, its id filters saved) before a stop's grace ran out. What an unfinished optimize or build
    // wrote is not in the table's committed versions; the next start builds it again. Its tables stay
    // open under it (closing one under a running build crashed the process with SIGSEGV): the process
    // exit ends both.
    //
    // A chunk under way is waited for CLOSE_WAIT_MS at most: one whose rows' linked words are read from a
    // store of 3M rows (an id's spaces looked up one id at a time, behind the journal's copies) took 25 s,
    // and the stop's grace ran out before the ledger could close. Abandoned, it records no progress (its
    // reads fail once the ledger is closed) and leaves the thread and the tables to the process's exit.
    const idle = (async (): Promise<boolean> => {
      while (this.#catchingUp || this.#working) await (this.#catchingUp ?? this.#working);
      return true;
    })();
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([idle, new Promise<false>((r) => (timer = setTimeout(() => r(false), CLOSE_WAIT_MS)))]);
    clearTimeout(timer);
    if (!stopped) this.#leftAtClose = true;
    await this.#metaWriting;
    if (!stopped) {
      console.error(`search index: closed with rows still being indexed (${this.#queuedRows} queued); the next start indexes them`);
      return;
    }
    // Every batch appended was recorded (a failed one leaves rows above the record): the next start need not look.
    if (this.#failure === null) writeMetaDurably(this.#dir, { ...this.#meta(), closedClean: true });
    await this.#thread?.close();
    if (!this.#maintaining) await this.#lance.close();
  }
}

const spaceKey = (tenant: string, space: string): string => `${tenant}\u0000${space}`;

/** meta.json replaced whole and synced, with its folder: a start's or a close's one write, not a commit's. */
function writeMetaDurably(dir: string, meta: Meta): void {
  const tmp = join(dir, 'meta.json.tmp');
  writeFileSync(tmp, JSON.stringify(meta), { flush: true });
  renameSync(tmp, join(dir, 'meta.json'));
  syncDir(dir);
}

function readMeta(dir: string): Meta | null {
  const path = join(dir, 'meta.json');
  if (!existsSync(path)) return null;
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as Partial<Meta>;
    if (typeof m.embedder === 'string' && typeof m.dimension === 'number' && typeof m.seq === 'number') return m as Meta;
  } catch {
    /* unreadable: rebuild */
  }
  return null;
}
