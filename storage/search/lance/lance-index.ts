// The only module that touches LanceDB (Arrow batches are built in arrow-rows.ts). One table per tenant, one row per node version:
// filters are SQL `where` prefilters (applied before ranking), full text is LanceDB's BM25 index with
// stemming (the full text of a space or a whole tenant of up to 20k rows is answered from its in-memory
// copy, space-copies.ts, scored over its rows known at as_of; without copies, a small table's from a copy
// scored as LanceDB scores, text-mirror.ts), vectors are searched flat
// until a table is large enough for an HNSW index to pay off, and flat still while a query's filter admits
// few enough rows for an exact answer (exactVectorRows). Every answer is in a total order, a tie at the
// cut settled among all its rows (closed-cut.ts), so it does not depend on how the table was built.
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import * as lancedb from '@lancedb/lancedb';
import type { Schema, Table as ArrowTable } from 'apache-arrow';
import { envMegabytes, envWholeNumber } from '../../env-megabytes.ts';
import { exactVectorRows } from './exact-rows.ts';
import { indexSchema, rowsToArrow } from './arrow-rows.ts';
import { appendArrow } from './lance-append.ts';
import { WorkApartRunner, type OptimizeCounts } from './work-apart.ts';
import type { Micros } from '../../time.ts';
import { TenantText, TEXT_COLUMNS, textRows, TokenCache, type TextRow } from '../copies/text-mirror.ts';
import { FILTER_COLUMNS, mirrorRows, VectorMirrors, type MirrorRow } from '../copies/vector-mirror.ts';
import { CopyFiles } from '../copies/copy-files.ts';
import type { FileSearch } from '../copies/copy-store.ts';
import { FileCopy } from '../copies/file-copy.ts';
import { NO_VECTOR, SpaceCopies, type Scope, type ScopeCopy, type SpaceCopy, type SpaceRow } from '../copies/space-copies.ts';
import { closedCut, inScoreOrder, newestAtCut } from './closed-cut.ts';
import type { Hit, IndexRow, RowFilter } from '../index-row.ts';

/** Rows from which a flat vector scan gets slower than an HNSW lookup with a filter (measured: bench). */
export const HNSW_MIN_ROWS = 20_000;

/**
 * Rows left out of the full-text index before it is brought up to date (they are still searched, by a
 * flat scan that scores every one of them, ~0.03 ms a row per query). Each `optimize` compacts, merges the
 * index deltas and cleans up old versions, and its cost grows with the table (measured: ~30 ms at 600 rows,
 * ~120 ms at 6,000, 0.2–0.8 s at 20k), so the allowance grows with it: a share of the indexed rows, at
 * least FTS_MIN_UNINDEXED, at most FTS_MAX_UNINDEXED. The share applies only to a table searched since its
 * last optimize (a bulk import nobody reads meanwhile is optimized as before: past FTS_MAX_UNINDEXED rows,
 * MAX_APPENDS_BEFORE_COMPACTION appends, or once writes pause). A fixed 10,000 left a LoCoMo conversation (~600 turns
 * written session by session, searched between sessions) flat-scanned whole: full text took 34 ms of a
 * 36 ms search (p50).
 */
const FTS_MIN_UNINDEXED = 50;
const FTS_UNINDEXED_SHARE = 1 / 16;
const FTS_MAX_UNINDEXED = 10_000;

/** Unindexed full-text rows a table of `indexed` rows may carry before an optimize. */
export function ftsAllowance(indexed: number): number {
  return Math.min(FTS_MAX_UNINDEXED, Math.max(FTS_MIN_UNINDEXED, Math.floor(indexed * FTS_UNINDEXED_SHARE)));
}
/** Small appends each make a data fragment; compacting them keeps scans fast. */
const MAX_APPENDS_BEFORE_COMPACTION = 32;
/**
 * Rows from which a table nobody searches by full text at LanceDB is optimized less often. An optimize
 * costs the table, not the rows it adds: 3,000 appended rows cost 0.3–0.5 CPU s at 50k rows and 0.8–1.5 at
 * 200k (without a vector index LanceDB's compaction rewrites every fragment under its 1M-row target, which
 * 0.37's Node API cannot change; with one, the full-text index's merge still grows). Below this size an
 * optimize is cheap (0.2–0.8 s at 20k) and runs as before.
 */
export const SPACED_OPTIMIZE_ROWS = 20_000;
/**
 * Share of its indexed rows a large table nobody searches at LanceDB may carry unindexed (at least
 * FTS_MAX_UNINDEXED), and appends it may carry uncompacted: spaced so, the optimizes of an import cost a
 * bounded multiple of the rows imported, whatever the table's size. Its reads meanwhile are served by the
 * space copies (spaces up to SPACE_COPY_MAX_ROWS rows); the first full-text search at LanceDB asks for an
 * optimize (`wantsSettle`), and searched tables keep ftsAllowance.
 */
const SPACED_UNINDEXED_SHARE = 1 / 4;
const SPACED_MAX_APPENDS = 256;
/**
 * The least time between two batches the indexer writes into tables that are all large (spacesAppends),
 * unless many rows are queued sooner. Each batch is one append and one fragment, which every load of a
 * space's copy scans until an optimize: under the 300k-row load (2,000 users × 150 rows, ~250 writes/s)
 * batches of a few rows made hundreds of fragments within a minute, and a copy's load took ~0.4 s. A search
 * confined to a space does not wait for it (its space's queued rows are added to its copy); a search without
 * a space in such a tenant may wait up to this much longer.
 */
export const APPEND_GATHER_MS = 500;

/** Unindexed full-text rows a large table nobody searches at LanceDB may carry before an optimize. */
export function spacedAllowance(indexed: number): number {
  return Math.max(FTS_MAX_UNINDEXED, Math.floor(indexed * SPACED_UNINDEXED_SHARE));
}

/** Why maintenance was asked for: a commit was indexed, writes paused (SETTLE_MS), or now, whatever it costs. */
export type Maintenance = 'commit' | 'pause' | 'force';
/**
 * HNSW graph build effort. LanceDB's default (300) took 21–26 s for 20k rows × 384 dims on this machine
 * and ~150 s at 100k, all of it CPU burnt after the writes were acknowledged; 150 builds ~6× faster with
 * the same recall@10 against a flat scan (0.88 against 0.89, measured on bench-like rows).
 */
const HNSW_EF_CONSTRUCTION = 150;
/**
 * Rows per IVF partition of a vector index; each partition is a graph of its own. One graph over a large
 * table costs more CPU a row as it grows (graph insertion searches what is built so far) and more memory
 * at its peak, which LanceDB's documentation says partitions lower. Measured on 300,000 local-embedder rows
 * (docs/search.md#vector-index-partitions): one partition (LanceDB's default) 176–178 CPU s and 1,200 MB
 * peak, 64 partitions 72 CPU s and 758 MB, recall@10 against a flat scan 0.55–0.57 and 0.72. Tables under
 * this many rows keep one graph.
 */
export const HNSW_PARTITION_ROWS = 32_768;

/** The IVF partitions a vector index over `rows` rows is built with. */
export const hnswPartitions = (rows: number, partitionRows = HNSW_PARTITION_ROWS): number => Math.max(1, Math.ceil(rows / partitionRows));
/** The prefilter columns a large table indexes, and how. */
const SCALAR_INDEXES = [
  ['known_at', 'btree'],
  ['space', 'bitmap'],
  ['kind', 'bitmap'],
  ['category', 'bitmap'],
] as const;
/**
 * LanceDB's session caches default to 6 GB (index) and 1 GB (metadata), which a long-running server
 * fills and keeps. The index cache holds the FTS, HNSW and scalar index pages (~40 MB for 100k rows).
 */
const INDEX_CACHE_BYTES = 256n * 1024n * 1024n;
const METADATA_CACHE_BYTES = 64n * 1024n * 1024n;
/** LanceDB's session caches together, in bytes (the start-up memory line). */
export const LANCE_CACHE_BYTES = Number(INDEX_CACHE_BYTES + METADATA_CACHE_BYTES);

/** Memory for the in-memory vector columns of tables without a vector index (vector-mirror.ts); 0 turns them off. */
export const vectorMirrorBytes = (env: NodeJS.ProcessEnv = process.env): number =>
  envMegabytes(env, 'SVC_SEARCH_VECTORS_MB', 256, 0) * 1024 * 1024;

/**
 * Rows from which a tenant's full text is searched by LanceDB instead of its in-memory copy
 * (text-mirror.ts, ~0.4–0.6 KB a row), and rows held in such copies at most over all tenants (least recently
 * searched dropped first). 0 turns the copies off.
 */
export const TEXT_MIRROR_MAX_ROWS = 20_000;
const TEXT_MIRROR_ROWS = 50_000;

const MIRROR_COLUMNS = [...FILTER_COLUMNS, 'vector'];

/**
 * Memory for the copies of single spaces a space-confined search reads (space-copies.ts, ~1.4 KB a row
 * with the local embedder and word vectors; full text only past SPACE_COPY_MAX_ROWS, ~0.4–0.6 KB a row) and
 * of whole tenants' full text a search without a space reads, and the rows (SPACE_COPY_MAX_ROWS, or
 * SVC_SEARCH_EXACT_ROWS if larger) from which such a scope is searched through LanceDB instead. 0 turns the
 * copies off.
 */
export const spaceCopyBytes = (env: NodeJS.ProcessEnv = process.env): number =>
  envMegabytes(env, 'SVC_SEARCH_SPACES_MB', 64, 0) * 1024 * 1024;
export const SPACE_COPY_MAX_ROWS = 20_000;

/**
 * Disk for the space copies' files (copy-files.ts, ~0.9 KB a row with the local embedder): a space whose
 * copy is not in memory is searched in its file instead of being loaded from LanceDB. With 2,000 users
 * searched at random this took searches from p50 926 ms to 40 ms and the server from 825 to 1,138 answers
 * a second (docs/search-in-space.md). 0 turns the files off.
 */
export const copyFileBytes = (env: NodeJS.ProcessEnv = process.env): number =>
  envMegabytes(env, 'SVC_SEARCH_COPY_FILES_MB', 1024, 0) * 1024 * 1024;

/**
 * Threads that write and search the copy files (copy-thread.ts): 0, the default, does it on the event loop;
 * 1 on a thread of its own. On two cores shared with the load's client the thread gave 5–15% more answers
 * and lower medians, but p99s of lists, gets, writes and searches 1.3–2.5× longer (docs/search-in-space.md).
 */
export function copyFileThreads(env: NodeJS.ProcessEnv = process.env): number {
  const n = envWholeNumber(env, 'SVC_SEARCH_COPY_THREADS', 0, 0, 'threads');
  if (n > 1) throw new Error(`SVC_SEARCH_COPY_THREADS: expected 0 or 1 threads, got "${env.SVC_SEARCH_COPY_THREADS}"`);
  return n;
}

const quote = (s: string): string => `'${s.replace(/'/g, "''")}'`;
const num = (n: number): string => String(Math.trunc(n));

/** The SQL prefilter, or null when it admits every row (a filter-free search is the fastest). */
export function wherePredicate(f: RowFilter): string | null {
  const parts: string[] = [];
  if (f.hidden) parts.push(`known_at > ${num(f.asOf)}`);
  else if (!f.allKnown) parts.push(`known_at <= ${num(f.asOf)}`);
  if (f.validAt !== undefined) {
    const v = num(f.validAt);
    parts.push(`asserted_at <= ${v}`, `valid_from <= ${v}`, `valid_to > ${v}`);
  }
  if (f.asserted !== undefined) parts.push(`asserted_at >= ${num(f.asserted.from)}`, `asserted_at < ${num(f.asserted.to)}`);
  if (f.space !== undefined) parts.push(`space = ${quote(f.space)}`);
  if (f.kind !== undefined) parts.push(`kind = ${quote(f.kind)}`);
  if (f.category !== undefined) parts.push(`category = ${quote(f.category)}`);
  if (f.excludeIds !== undefined && f.excludeIds.length > 0) parts.push(`id NOT IN (${f.excludeIds.map(quote).join(', ')})`);
  if (f.onlyIds !== undefined) parts.push(f.onlyIds.length > 0 ? `id IN (${f.onlyIds.map(quote).join(', ')})` : 'false');
  return parts.length > 0 ? parts.join(' AND ') : null;
}

function tableName(tenant: string): string {
  const hex = Buffer.from(tenant, 'utf8').toString('hex');
  return hex.length <= 96 ? `t_${hex}` : `h_${createHash('sha256').update(tenant).digest('hex')}`;
}

/** Where the vector index starts, and up to how many admitted rows a query bypasses it (tests vary them). */
export interface VectorOptions {
  indexRows?: number;
  exactRows?: number;
  /** Rows a space's copy holds with its vectors (SPACE_COPY_MAX_ROWS unless set: tests). */
  spaceCopyRows?: number;
  /** How long an optimize keeps the table's older versions (KEEP_VERSIONS_MS unless set: tests). */
  keepVersionsMs?: number;
  /** Rows from which optimizes are spaced out and appends gathered (SPACED_OPTIMIZE_ROWS unless set: tests). */
  spacedRows?: number;
  /** The least time between batches into large tables (APPEND_GATHER_MS unless set: tests). */
  appendGatherMs?: number;
  /** Rows per IVF partition of a vector index (HNSW_PARTITION_ROWS unless set: tests). */
  partitionRows?: number;
  /** Whether a large table's vector index builds and optimizes run in a child process (./work-apart.ts); true unless set (tests spying on LanceDB in process). */
  workApart?: boolean;
  /** A seam for tests: awaited as each maintenance of a tenant's table starts (a long one, held). */
  beforeMaintain?: (tenant: string) => Promise<void>;
  /** Where the space copies are also kept on disk, and the most bytes they may take (copy-files.ts); none unless set. */
  copyFiles?: { dir: string; budgetBytes: number; thread?: boolean } | undefined;
}

/**
 * Older versions of a table an optimize keeps. LanceDB keeps them 7 days by default, and every optimize
 * (a compaction rewrites the small appends' fragments) leaves the rewritten files behind, so a server
 * writing all day grew its search folder by each day's rewrites. A read holds its version only while it
 * runs (milliseconds to seconds), so ten minutes leaves every read in progress its files.
 */
export const KEEP_VERSIONS_MS = 10 * 60_000;

interface TableState {
  table: lancedb.Table;
  /** The table's name in the folder. */
  name: string;
  /** At least spacedRows rows at its open or last maintenance: optimized in a child process (./work-apart.ts). */
  large: boolean;
  appends: number;
  /** Searched by full text since its last optimize: only then is the flat scan of unindexed rows paid. */
  searched: boolean;
  hasTextIndex: boolean;
  /** Columns an index covers (as listed at open, then as each is built). */
  indexed: Set<string>;
  /** The in-memory full text: undefined until loaded, null when not kept (too large, or rows were deleted). */
  text: TenantText | null | undefined;
  /** Writes and index updates in flight: the table may differ from the copy meanwhile. */
  busy: number;
  /** Bumped by every write and index update: a copy read while it changed is thrown away. */
  epoch: number;
  /** Rows were deleted from the table: its full-text index may still count them, which no copy can know. */
  deleted: boolean;
  /** At least the highest seq in the table (read once, then raised by appends); undefined until needed. */
  maxSeq: number | undefined;
}

const hasVectorIndex = (state: TableState): boolean => state.indexed.has('vector');

export class LanceIndex {
  readonly #db: lancedb.Connection;
  readonly #schema: Schema;
  readonly #spacedRows: number;
  readonly appendGatherMs: number;
  readonly #beforeMaintain: VectorOptions['beforeMaintain'];
  readonly #tables = new Map<string, Promise<TableState>>();
  /** Tenants whose table held at least spacedRows rows at its open or last maintenance (see spacesAppends). */
  readonly #large = new Set<string>();
  readonly #mirrors: VectorMirrors;
  #session: lancedb.Session | undefined;
  readonly #tokens = new TokenCache();
  readonly #spaces: SpaceCopies;
  /** Full-text queries answered by a tenant's LanceDB-like copy, by LanceDB, by a space's copy and by a whole tenant's. */
  readonly #textAnswers = { copy: 0, lance: 0, space: 0, whole: 0 };
  /** Tenants with a full-text copy, least recently searched first. */
  readonly #textRecent = new Map<string, TableState>();
  readonly #textMirrorRows: number;
  readonly #vectorIndexRows: number;
  readonly #partitionRows: number;
  readonly #exactVectorRows: number;
  readonly #keepVersionsMs: number;
  /** Where the tables lie, and a large table's heavy maintenance in child processes (null: done here). */
  readonly #dir: string;
  readonly #apart: WorkApartRunner | null;
  /** Tables whose rows `deleteAbove` deleted. */
  readonly #deletedIn = new Set<string>();
  readonly dimension: number;
  /** Length of the word-vector column; 0 when the tables have none. */
  readonly wordDimension: number;

  private constructor(
    db: lancedb.Connection,
    dir: string,
    dimension: number,
    wordDimension: number,
    mirrorBytes: number,
    textMirrorRows: number,
    spaceBytes: number,
    vectors: VectorOptions,
  ) {
    this.#db = db;
    this.#dir = dir;
    this.#apart = vectors.workApart === false ? null : new WorkApartRunner(join(dirname(dir), 'work-apart'));
    this.#textMirrorRows = textMirrorRows;
    this.#vectorIndexRows = vectors.indexRows ?? HNSW_MIN_ROWS;
    this.#partitionRows = vectors.partitionRows ?? HNSW_PARTITION_ROWS;
    this.#exactVectorRows = vectors.exactRows ?? exactVectorRows();
    // A scope whose vector queries are exact gets its full text scored exactly too (over its rows known at
    // as_of): both halves of its searches then replay.
    const copyRows = vectors.spaceCopyRows ?? SPACE_COPY_MAX_ROWS;
    const files =
      vectors.copyFiles && vectors.copyFiles.budgetBytes > 0 && spaceBytes > 0
        ? new CopyFiles(vectors.copyFiles.dir, vectors.copyFiles.budgetBytes, copyRows, undefined, { thread: vectors.copyFiles.thread })
        : null;
    this.#spaces = new SpaceCopies(
      spaceBytes,
      { vectors: copyRows, text: Math.max(copyRows, this.#exactVectorRows) },
      this.#tokens,
      undefined,
      undefined,
      files,
    );
    this.#keepVersionsMs = vectors.keepVersionsMs ?? KEEP_VERSIONS_MS;
    this.#spacedRows = vectors.spacedRows ?? SPACED_OPTIMIZE_ROWS;
    this.appendGatherMs = vectors.appendGatherMs ?? APPEND_GATHER_MS;
    this.#beforeMaintain = vectors.beforeMaintain;
    this.#mirrors = new VectorMirrors(mirrorBytes, this.#vectorIndexRows);
    this.dimension = dimension;
    this.wordDimension = wordDimension;
    this.#schema = indexSchema(dimension, wordDimension);
  }

  static async open(
    dir: string,
    dimension: number,
    wordDimension = 0,
    mirrorBytes = vectorMirrorBytes(),
    textMirrorRows = TEXT_MIRROR_ROWS,
    spaceBytes = spaceCopyBytes(),
    vectors: VectorOptions = {},
  ): Promise<LanceIndex> {
    process.env.LANCEDB_LOG ??= 'error';
    const session = new lancedb.Session(INDEX_CACHE_BYTES, METADATA_CACHE_BYTES);
    // In the options: this LanceDB (0.37.1) declares connect(uri, options, session) but drops that third
    // argument, so the caches fell back to 6 GB and 1 GB and a long-running server's RSS grew with them.
    const index = new LanceIndex(
      await lancedb.connect(dir, { session }),
      dir,
      dimension,
      wordDimension,
      mirrorBytes,
      textMirrorRows,
      spaceBytes,
      vectors,
    );
    index.#session = session;
    return index;
  }

  async #state(tenant: string, create: boolean): Promise<TableState | null> {
    const cached = this.#tables.get(tenant);
    if (cached) return cached;
    const name = tableName(tenant);
    const exists = (await this.#db.tableNames()).includes(name);
    if (!exists && !create) return null;
    const again = this.#tables.get(tenant);
    if (again) return again;
    const opening = this.#openTable(tenant, name, exists);
    this.#tables.set(tenant, opening);
    opening.catch(() => this.#tables.delete(tenant));
    return opening;
  }

  async #openTable(tenant: string, name: string, exists: boolean): Promise<TableState> {
    const table = exists
      ? await this.#db.openTable(name)
      : await this.#db.createEmptyTable(name, this.#schema, { mode: 'create', existOk: true });
    // Every row of a table created empty here passes through `add`: its spaces' copy files start with their first.
    if (!exists && (await table.countRows()) === 0) this.#spaces.fresh(tenant);
    // Known large from the open, not only from this process's first maintenance: until then a restarted
    // server wrote each batch into a 3M-row table as a version of its own (28 in the app bench's 200 small
    // writes, 1.2–2.3 ms of LanceDB's CPU a write against 0.2–0.35 at 30k). countRows reads the manifest.
    const large = exists && (await table.countRows()) >= this.#spacedRows;
    if (large) this.#large.add(tenant);
    const indices = await table.listIndices();
    return {
      table,
      name,
      large,
      appends: 0,
      searched: false,
      hasTextIndex: indices.some((i) => i.indexType === 'FTS'),
      indexed: new Set(indices.flatMap((i) => i.columns)),
      text: undefined,
      busy: 0,
      epoch: 0,
      deleted: this.#deletedIn.has(name),
      maxSeq: undefined,
    };
  }

  // Built after the first rows, never on an empty table: an FTS index created empty ranks the rows added
  // after it badly (measured on LoCoMo: recall@10 0.10 against 0.68 for the same rows indexed).
  async #ensureTextIndex(state: TableState): Promise<void> {
    if (state.hasTextIndex) return;
    await this.#changing(state, async () => {
      await state.table.createIndex('text', {
        config: lancedb.Index.fts({ stem: true, removeStopWords: true, language: 'English', withPosition: false }),
      });
      state.hasTextIndex = true;
      await this.#noteIndexed(state);
    });
  }

  /** Runs a write or an index update of the table; the full-text copy is not used meanwhile, and dropped if it fails. */
  async #changing<T>(state: TableState, work: () => Promise<T>): Promise<T> {
    state.busy++;
    try {
      return await work();
    } catch (error) {
      state.text = undefined;
      throw error;
    } finally {
      state.busy--;
      state.epoch++;
    }
  }

  /** Tells the full-text copy how many rows the index now covers (a prefix: rows are appended in seq order). */
  async #noteIndexed(state: TableState): Promise<void> {
    if (!state.text) return;
    const stats = await state.table.indexStats('text_idx');
    if (stats) state.text.setIndexed(stats.numIndexedRows);
    else state.text = undefined;
  }

  #tokenize(table: lancedb.Table): (text: string) => Promise<string[]> {
    return async (text) => (await table.tokenize(text, { column: 'text' })).map((t) => t.text);
  }

  async add(tenant: string, rows: readonly IndexRow[]): Promise<void> {
    if (rows.length === 0) return;
    const state = await this.#state(tenant, true);
    if (!state) return;
    await this.#changing(state, async () => {
      await appendArrow(state.table, rowsToArrow(this.#schema, rows));
      state.appends++;
      if (state.maxSeq !== undefined) for (const r of rows) state.maxSeq = Math.max(state.maxSeq, r.seq);
      if (!hasVectorIndex(state)) await this.#mirrors.append(tenant, rows);
      await this.#spaces.append(tenant, rows, this.#tokenize(state.table));
      const text = state.text;
      if (text) {
        const tokens = await this.#tokens.tokens(
          rows.map((r) => r.text),
          this.#tokenize(state.table),
        );
        if (state.text === text) text.append(rows, tokens);
        if (text.size > TEXT_MIRROR_MAX_ROWS) state.text = null;
      }
    });
    await this.#ensureTextIndex(state);
  }

  /**
   * Brings the full-text index up to date, compacts small appends and builds the vector index once the
   * table is large; 'spaced' when a large table's appends were left for a later optimize.
   */
  async maintain(tenant: string, why: Maintenance = 'commit'): Promise<'settled' | 'spaced'> {
    await this.#beforeMaintain?.(tenant);
    const state = await this.#state(tenant, false);
    if (!state) return 'settled';
    await this.#ensureTextIndex(state);
    const stats = await state.table.indexStats('text_idx');
    const unindexed = stats?.numUnindexedRows ?? 0;
    const indexed = stats?.numIndexedRows ?? 0;
    state.large = indexed + unindexed >= this.#spacedRows;
    if (state.large) this.#large.add(tenant);
    else this.#large.delete(tenant);
    // A table whose full text its copy answers scores its unindexed rows in memory: the flat scan the
    // allowance bounds is paid only by the few queries left to LanceDB, while each optimize makes the
    // searches meanwhile wait for LanceDB (the copy is not used while the index changes).
    const readers = state.searched && !state.text && unindexed > ftsAllowance(indexed);
    const reason = ((): string | null => {
      if (why === 'force') return 'force';
      if (readers) return 'readers';
      if (indexed + unindexed < this.#spacedRows) {
        if (why === 'pause') return 'pause';
        if (unindexed > FTS_MAX_UNINDEXED) return 'unindexed';
        return state.appends > MAX_APPENDS_BEFORE_COMPACTION ? 'appends' : null;
      }
      // A large table: searched at LanceDB since its last optimize, settled once writes pause; otherwise
      // spaced out in proportion to its size.
      if (why === 'pause' && state.searched && state.appends > 0) return 'pause, searched';
      if (unindexed > spacedAllowance(indexed)) return 'unindexed, spaced';
      return state.appends > (state.searched ? MAX_APPENDS_BEFORE_COMPACTION : SPACED_MAX_APPENDS) ? 'appends, spaced' : null;
    })();
    if (reason !== null) {
      state.searched = false;
      await this.#optimize(state, reason);
    }
    const left = reason === null && (unindexed > 0 || state.appends > 0);
    if (await this.#lacksIndexes(state.table, state.indexed)) await this.#buildIndexes(tenant, state);
    return left ? 'spaced' : 'settled';
  }

  /** Whether the table is past the vector index's threshold and lacks one of the indexes it should then have. */
  async #lacksIndexes(table: lancedb.Table, indexed: ReadonlySet<string>): Promise<boolean> {
    const wanted = [...SCALAR_INDEXES.map(([column]) => column), 'vector', ...(this.wordDimension > 0 ? ['wvec'] : [])];
    return wanted.some((column) => !indexed.has(column)) && (await table.countRows()) >= this.#vectorIndexRows;
  }

  /**
   * Builds the indexes a large table lacks, each on its own, cheapest first: the scalar indexes (~1.4 s at
   * 2.8M rows), then each HNSW index (minutes at that size). A stop during a build loses only the index
   * being built: the table records each one as it lands, so the next open finds the others and this builds
   * the rest (it once counted the table indexed when `vector` was, and a stop during the `wvec` build left
   * it without `wvec` and without the scalar indexes for good: a space's first search then read the
   * `space` column whole, ~100 ms at 2.8M rows against ~2 ms through its bitmap).
   */
  async #buildIndexes(tenant: string, state: TableState): Promise<void> {
    const step = traceStart();
    if (!state.indexed.has('vector')) {
      // The table in as few fragments as compaction makes before the vector indexes cover it. Compaction
      // merges only neighbouring fragments covered by the same indexes, so the table's first rows (the
      // fragment the full-text index was built on) stay apart from the rest until an optimize has indexed
      // those; left so, the next optimize merged the two under the new HNSW indexes and remapped them, which
      // cost as much as building them (13.3 against 13.6 CPU s at 24,000 rows, whatever it added).
      for (let i = 0; i < 2 && (await state.table.stats()).fragmentStats.numFragments > 1; i++)
        if ((await this.#optimize(state, 'before the vector index')) === 0) break;
    }
    // Scalar indexes let the prefilters of a large table skip rows instead of scanning columns.
    for (const [column, kind] of SCALAR_INDEXES) {
      if (state.indexed.has(column)) continue;
      await state.table.createIndex(column, { config: kind === 'btree' ? lancedb.Index.btree() : lancedb.Index.bitmap() });
      state.indexed.add(column);
    }
    if (step) trace(step, 'scalar indexes build');
    const numPartitions = hnswPartitions(await state.table.countRows(), this.#partitionRows);
    for (const column of this.wordDimension > 0 ? ['vector', 'wvec'] : ['vector']) {
      if (state.indexed.has(column)) continue;
      if (this.#apart) {
        await this.#apart.vectorIndex({
          kind: 'vector index',
          dir: this.#dir,
          table: state.name,
          column,
          numPartitions,
          efConstruction: HNSW_EF_CONSTRUCTION,
        });
        await state.table.checkoutLatest();
      } else
        await state.table.createIndex(column, {
          config: lancedb.Index.hnswSq({ distanceType: 'cosine', efConstruction: HNSW_EF_CONSTRUCTION, numPartitions }),
        });
      state.indexed.add(column);
      if (step) trace(step, `vector index build (${column})`);
      if (column === 'vector') this.#mirrors.drop(tenant);
    }
    if (step) trace(step, `indexes built rows=${await state.table.countRows()} partitions=${numPartitions}`);
  }

  /**
   * Tenants whose tables are past the vector index's threshold and lack an index (a stop during a build):
   * maintained once the store is caught up, not only after their next write. Tables named by a hash of a
   * long tenant name cannot be named back, and wait for that write.
   */
  async tenantsMissingIndexes(): Promise<string[]> {
    const out: string[] = [];
    for (const name of await this.#allTenantTables()) {
      if (!name.startsWith('t_')) continue;
      const tenant = Buffer.from(name.slice(2), 'hex').toString('utf8');
      const open = await this.#tables.get(tenant)?.catch(() => null);
      // A table nobody has used since the start is looked at and closed again: a server of many small
      // tenants does not keep them all open for this.
      const table = open?.table ?? (await this.#db.openTable(name));
      try {
        const indexed = open?.indexed ?? new Set((await table.listIndices()).flatMap((i) => i.columns));
        if (await this.#lacksIndexes(table, indexed)) out.push(tenant);
      } finally {
        if (!open) table.close();
      }
    }
    return out;
  }

  /**
   * Whether the tenant's table was searched by full text at LanceDB since appends it has not optimized:
   * the pause after writes optimizes such a table whatever its size (a large one nobody searches waits).
   */
  async wantsSettle(tenant: string): Promise<boolean> {
    const state = await this.#tables.get(tenant)?.catch(() => null);
    return state !== undefined && state !== null && state.searched && state.appends > 0;
  }

  /** Compacts, brings every index up to date and drops old versions; returns the fragments compaction rewrote. */
  async #optimize(state: TableState, why: string): Promise<number> {
    const appends = state.appends;
    const removed = await this.#changing(state, async () => {
      const step = traceStart();
      const cleanupOlderThan = Date.now() - this.#keepVersionsMs;
      const apart = state.large ? this.#apart : null;
      let counts: OptimizeCounts;
      if (apart) {
        counts = await apart.optimize({ kind: 'optimize', dir: this.#dir, table: state.name, cleanupOlderThan });
        await state.table.checkoutLatest();
      } else counts = (await state.table.optimize({ cleanupOlderThan: new Date(cleanupOlderThan) })).compaction;
      if (step)
        trace(step, `optimize (${why}${apart ? ', apart' : ''}) rows=${await state.table.countRows()} appends=${appends}`, {
          fragmentsRemoved: counts.fragmentsRemoved,
          fragmentsAdded: counts.fragmentsAdded,
        });
      await this.#noteIndexed(state);
      return counts.fragmentsRemoved;
    });
    state.appends = 0;
    return removed;
  }

  /**
   * BM25 over the stemmed text of the rows the filter admits, best first, equal scores newest first
   * (byScore: LanceDB's own order of equal scores changes from one call to the next, and which rows of a
   * tie at the cut it returns depends on the index's layout; newestAtCut settles it). Answered from the
   * tenant's in-memory copy when it has one. `terms` are plain words (no query syntax).
   */
  async fullText(tenant: string, terms: readonly string[], filter: RowFilter, limit: number): Promise<Hit[]> {
    const state = await this.#state(tenant, false);
    if (!state || terms.length === 0) return [];
    // Twice at most: a copy searched in its file may find the file removed since (then the copy is loaded).
    for (let tries = 0; tries < 2; tries++) {
      const scoped = await this.#scopeCopy(tenant, filter.space ?? null, state);
      if (!scoped) break;
      const [tokens] = await this.#tokens.tokens([terms.join(' ')], this.#tokenize(state.table));
      const hits = await scoped.fullText(tokens ?? [], filter, limit);
      if (!hits) continue;
      this.#textAnswers[filter.space === undefined ? 'whole' : 'space']++;
      return hits;
    }
    if (!state.hasTextIndex) return [];
    state.searched = true;
    const copy = await this.#textCopy(tenant, state);
    if (copy) {
      const [tokens] = await this.#tokens.tokens([terms.join(' ')], this.#tokenize(state.table));
      // Read again: a write may have begun while the query was tokenized.
      if (state.busy === 0 && state.text === copy) {
        this.#textAnswers.copy++;
        return copy.search(tokens ?? [], filter, limit);
      }
    }
    this.#textAnswers.lance++;
    const where = wherePredicate(filter);
    const match = new lancedb.MatchQuery(terms.join(' '), 'text');
    const fetch = async (n: number, fromSeq?: number): Promise<Hit[]> => {
      const clauses = [where, fromSeq === undefined ? null : `seq >= ${num(fromSeq)}`].filter((c) => c !== null);
      let query = state.table.query().nearestToText(match);
      if (clauses.length > 0) query = query.where(clauses.join(' AND '));
      const rows = await query.select(['id', 'seq', '_score']).limit(n).toArray();
      return rows.map((r: { id: string; seq: number; _score: number }) => ({ id: r.id, seq: r.seq, score: r._score }));
    };
    return newestAtCut(fetch, limit, () => this.#maxSeq(state));
  }

  /** At least the table's highest seq: read once, then kept up by appends. */
  async #maxSeq(state: TableState): Promise<number> {
    if (state.maxSeq === undefined) {
      const data = await state.table.query().select(['seq']).toArrow();
      let top = 0;
      const seq = data.getChild('seq');
      for (let i = 0; i < data.numRows; i++) top = Math.max(top, Number(seq?.get(i) ?? 0));
      state.maxSeq = Math.max(state.maxSeq ?? 0, top);
    }
    return state.maxSeq;
  }

  /** The tenant's full-text copy when it matches the table now, loaded on first use; null otherwise. */
  async #textCopy(tenant: string, state: TableState): Promise<TenantText | null> {
    if (state.busy > 0 || state.deleted || this.#textMirrorRows <= 0 || state.text === null) return null;
    if (state.text) {
      this.#textUsed(tenant, state);
      return state.text;
    }
    const epoch = state.epoch;
    const rows = await state.table.countRows();
    if (rows > Math.min(TEXT_MIRROR_MAX_ROWS, this.#textMirrorRows)) {
      state.text = null;
      return null;
    }
    const data = await state.table.query().select(TEXT_COLUMNS).toArrow();
    const read = textRows(data);
    read.sort((a, b) => a.seq - b.seq);
    const tokens = await this.#tokens.tokens(
      read.map((r) => r.text),
      this.#tokenize(state.table),
    );
    const stats = await state.table.indexStats('text_idx');
    // Written or re-indexed while it was read: the next search reads it again.
    if (state.epoch !== epoch || state.busy > 0 || !stats || state.text !== undefined) return null;
    const copy = new TenantText();
    copy.append(read, tokens);
    copy.setIndexed(stats.numIndexedRows);
    state.text = copy;
    this.#textUsed(tenant, state);
    return copy;
  }

  /** Marks the tenant's copy most recently used and drops the least recently used beyond the row budget. */
  #textUsed(tenant: string, state: TableState): void {
    this.#textRecent.delete(tenant);
    this.#textRecent.set(tenant, state);
    let total = 0;
    for (const s of this.#textRecent.values()) total += s.text?.size ?? 0;
    for (const [t, s] of this.#textRecent) {
      if (total <= this.#textMirrorRows) break;
      total -= s.text?.size ?? 0;
      // Undefined, not null: it is loaded again when next searched.
      s.text = undefined;
      this.#textRecent.delete(t);
    }
  }

  /** Rows not yet in the tenant's full-text index (tests, diagnosis). */
  async unindexedTextRows(tenant: string): Promise<number> {
    const state = await this.#state(tenant, false);
    const stats = state?.hasTextIndex ? await state.table.indexStats('text_idx') : undefined;
    return stats?.numUnindexedRows ?? 0;
  }

  /** How many full-text queries the in-memory copies answered, and how many LanceDB did (tests, diagnosis). */
  textAnswers(): { copy: number; lance: number; space: number; whole: number } {
    return { ...this.#textAnswers };
  }

  /**
   * Nearest vectors (cosine) in `column` among the rows the filter admits, equal distances oldest first
   * (byNearness, as the in-memory scans); exact unless the filter admits more than exactVectorRows rows of a
   * table with an HNSW index.
   */
  async nearest(
    tenant: string,
    vector: Float32Array,
    filter: RowFilter,
    limit: number,
    column: 'vector' | 'wvec' = 'vector',
  ): Promise<Hit[]> {
    const state = await this.#state(tenant, false);
    if (!state) return [];
    // A space's copy holds its vectors; a whole tenant's, or a large space's, only its full text (the mirror
    // or the table below scans vectors).
    for (let tries = 0; tries < 2 && filter.space !== undefined; tries++) {
      const space = await this.#scopeCopy(tenant, filter.space, state);
      if (!space?.hasVectors) break;
      const hits = await space.nearest(vector, filter, limit, column);
      if (hits) return hits;
    }
    if (!hasVectorIndex(state)) {
      const mirror = await this.#mirrors.get(tenant, async () =>
        // A table about to get its vector index, or too large for the budget, is searched by LanceDB.
        this.#mirrors.fits(await state.table.countRows(), 4 * (this.dimension + this.wordDimension) + 216)
          ? this.#mirrorRows(state.table)
          : null,
      );
      if (mirror) return mirror.nearestInTurns(vector, filter, limit, column);
    }
    const where = wherePredicate(filter);
    // Exact (flat) unless the filter admits more rows than an exact scan is allowed: its answer is then the
    // HNSW index's, which depends on how the index was built.
    const exact = !hasVectorIndex(state) || (await this.#admitted(state, where)) <= this.#exactVectorRows;
    const fetch = async (n: number): Promise<Hit[]> => {
      let query = state.table.vectorSearch(vector).column(column).distanceType('cosine');
      if (exact && hasVectorIndex(state)) query = query.bypassVectorIndex();
      if (where !== null) query = query.where(where);
      const rows = await query.select(['id', 'seq', '_distance']).limit(n).toArray();
      return rows.map((r: { id: string; seq: number; _distance: number }) => ({ id: r.id, seq: r.seq, score: 1 - r._distance }));
    };
    if (!exact) return inScoreOrder(await fetch(limit), false);
    return closedCut(fetch, limit, false);
  }

  /** Rows the prefilter admits, counted only when the table alone is larger than an exact scan may read. */
  async #admitted(state: TableState, where: string | null): Promise<number> {
    const rows = await state.table.countRows();
    return rows <= this.#exactVectorRows || where === null ? rows : state.table.countRows(where);
  }

  /**
   * A search's lists in one space answered together from the space's copy file: BM25 over `terms`, the
   * nearest rows to `vector` and to `wvec` when given, BM25 within the `dated` window when given; each as
   * fullText and nearest give it. One question instead of one per list: with the copy files' thread each
   * answer waits its turn on a busy event loop. Null when the space's copy is not a file now (it is held in
   * memory, loads, or is too large): ask list by list.
   */
  async fileLists(
    tenant: string,
    terms: readonly string[],
    asks: { vector?: Float32Array | undefined; wvec?: Float32Array | undefined; dated?: RowFilter['asserted'] },
    filter: RowFilter,
    limit: number,
  ): Promise<{ text: Hit[]; vector: Hit[]; words: Hit[]; dated: Hit[] } | null> {
    const state = await this.#state(tenant, false);
    if (!state || filter.space === undefined || terms.length === 0) return null;
    const copy = await this.#scopeCopy(tenant, filter.space, state);
    if (!(copy instanceof FileCopy)) return null;
    const [tokens] = await this.#tokens.tokens([terms.join(' ')], this.#tokenize(state.table));
    const asked: FileSearch[] = [{ list: 'text', tokens: tokens ?? [], filter, limit }];
    if (asks.vector) asked.push({ list: 'near', query: asks.vector, filter, limit, column: 'vector' });
    if (asks.wvec) asked.push({ list: 'near', query: asks.wvec, filter, limit, column: 'wvec' });
    if (asks.dated) asked.push({ list: 'text', tokens: tokens ?? [], filter: { ...filter, asserted: asks.dated }, limit });
    const found = await copy.lists(asked);
    if (!found) return null;
    this.#textAnswers.space += asks.dated ? 2 : 1;
    let at = 1;
    return {
      text: found[0]!,
      vector: asks.vector ? found[at++]! : [],
      words: asks.wvec ? found[at++]! : [],
      dated: asks.dated ? found[at++]! : [],
    };
  }

  /**
   * The copy of one space of the tenant, loaded on first use through the `space` prefilter (a bitmap index
   * once the table is large); null when the space is too large for one (then LanceDB answers) or the copies
   * are off. Rows deleted from the table (deleteAbove) are never in a copy: copies are read after it.
   */
  async spaceCopy(tenant: string, space: string): Promise<ScopeCopy | null> {
    const state = await this.#state(tenant, false);
    return state ? this.#scopeCopy(tenant, space, state) : null;
  }

  /**
   * Whether the tenant's table is large (spacedRows or more at its last maintenance): its optimizes are
   * spaced out, so every append stays a fragment of its own for a while, and each fragment not covered
   * by the `space` bitmap is scanned by every copy's load (at 300k rows, quiet: 19 ms with none, 58 ms
   * with 200 small fragments, 103 ms with 500). The indexer gathers such a table's appends (APPEND_GATHER_MS).
   */
  spacesAppends(tenant: string): boolean {
    return this.#large.has(tenant);
  }

  /** Rows of the space's copy file, when it has a complete one (admission: loading it is cheap). */
  copyFileRows(tenant: string, space: string): number | undefined {
    return this.#spaces.fileRows(tenant, space);
  }

  /** Whether a search of the space would read a copy: copies are on, and the space is not known too large for one. */
  mayCopy(tenant: string, space: string): boolean {
    return this.#spaces.mayHold(tenant, space);
  }

  /** The space's copy if it is in memory now (admission: a search of it may be cheap). */
  loadedSpaceCopy(tenant: string, space: string): SpaceCopy | undefined {
    return this.#spaces.loaded(tenant, space);
  }

  /** Adds rows of one space not yet in the table to its copy (rows it holds are skipped by seq); false when the copy is not held or they took it past its bound. */
  async appendToCopy(tenant: string, space: string, copy: ScopeCopy, rows: readonly IndexRow[]): Promise<boolean> {
    const state = await this.#state(tenant, false);
    if (!state) return false;
    return this.#spaces.appendTo(tenant, space, copy, rows, this.#tokenize(state.table));
  }

  /**
   * The copy a search of `space` reads, or of the whole tenant (null) when the tenant's table is no larger
   * than a copy may be: so a search over few rows, confined to a space or not, is scored over the rows of
   * its scope known at its as_of (space-copies.ts) and replays exactly.
   */
  #scopeCopy(tenant: string, space: Scope, state: TableState): Promise<ScopeCopy | null> {
    // A copy tokenizes with the table's full-text tokenizer, which LanceDB has only once the text index is
    // built (after the first rows): until then the table answers, as it always did ("Column 'text' does not
    // have a full text search index" was a 500 for a search right after a fresh table's first write).
    if (!state.hasTextIndex) return Promise.resolve(null);
    const tokenize = this.#tokenize(state.table);
    if (space === null) {
      return this.#spaces.get(tenant, null, {
        size: () => state.table.countRows(),
        rows: async (limit) => withoutVectors(textRows(await state.table.query().select(TEXT_COLUMNS).limit(limit).toArrow())),
        tokenize,
      });
    }
    const where = `space = ${quote(space)}`;
    const columns = [...TEXT_COLUMNS, 'vector', ...(this.wordDimension > 0 ? ['wvec'] : [])];
    return this.#spaces.get(tenant, space, {
      rows: async (limit, vectorRows) => {
        const { data, vectors } = await spaceRowsOf(state.table, space, where, { vectors: columns, text: TEXT_COLUMNS }, limit, vectorRows);
        if (!vectors) return withoutVectors(textRows(data));
        const text = data.getChild('text');
        return mirrorRows(data, this.dimension).map((r, i) => ({ ...r, text: String(text?.get(i) ?? '') }));
      },
      tokenize,
    });
  }

  /** What the index holds in memory, in bytes (diagnosis: SVC_LOAD_STATS): LanceDB's session caches and our copies. */
  memory(): { lanceCache: number; lanceCacheItems: number; vectorMirrors: number; spaceCopies: number } {
    return {
      lanceCache: Number(this.#session?.sizeBytes() ?? 0n),
      lanceCacheItems: this.#session?.approxNumItems() ?? 0,
      vectorMirrors: this.#mirrors.heldBytes(),
      spaceCopies: this.#spaces.held().bytes,
    };
  }

  /** Space copies held, loaded and evicted (tests, diagnosis). */
  spaceCopies(): {
    spaces: number;
    rows: number;
    bytes: number;
    textOnly: number;
    loads: number;
    fileSearches: number;
    evictions: number;
    loadMs: number;
    loadWaitMs: number;
    readMs: number;
    tokenMs: number;
    files: ReturnType<SpaceCopies['files']>;
  } {
    return { ...this.#spaces.held(), ...this.#spaces.counts, files: this.#spaces.files() };
  }

  /** The space copies' files: how many, their bytes, and what was done with them (tests, diagnosis). */
  copyFiles(): ReturnType<SpaceCopies['files']> {
    return this.#spaces.files();
  }

  /** Every row's filter and vector columns, to fill a tenant's mirror. */
  async #mirrorRows(table: lancedb.Table): Promise<MirrorRow[]> {
    const columns = this.wordDimension > 0 ? [...MIRROR_COLUMNS, 'wvec'] : MIRROR_COLUMNS;
    return mirrorRows(await table.query().select(columns).toArrow(), this.dimension);
  }

  async countRows(tenant?: string): Promise<number> {
    let total = 0;
    for (const t of tenant === undefined ? await this.#allTenantTables() : [tableName(tenant)]) {
      if (!(await this.#db.tableNames()).includes(t)) continue;
      total += await (await this.#db.openTable(t)).countRows();
    }
    return total;
  }

  /** The columns the tenant's table has indexes on, as the handle searches use it sees them; none without a table. */
  async indexedColumns(tenant: string): Promise<string[]> {
    const state = await this.#tables.get(tenant)?.catch(() => null);
    return state ? (await state.table.listIndices()).flatMap((i) => i.columns) : [];
  }

  async #allTenantTables(): Promise<string[]> {
    return (await this.#db.tableNames()).filter((n) => n.startsWith('t_') || n.startsWith('h_'));
  }

  /** Removes rows above `seq` (written after the last recorded progress, e.g. before a crash). */
  async deleteAbove(seq: number): Promise<void> {
    for (const name of await this.#allTenantTables()) {
      const table = await this.#db.openTable(name);
      const before = await table.countRows();
      await table.delete(`seq > ${num(seq)}`);
      if ((await table.countRows()) < before) this.#deletedIn.add(name);
    }
  }

  /** Drops the tenant's table and every copy of it held in memory. */
  async dropTenant(tenant: string): Promise<void> {
    const name = tableName(tenant);
    const state = await this.#tables.get(tenant)?.catch(() => null);
    this.#tables.delete(tenant);
    this.#large.delete(tenant);
    this.#textRecent.delete(tenant);
    this.#deletedIn.delete(name);
    this.#mirrors.drop(tenant);
    this.#spaces.dropTenant(tenant);
    state?.table.close();
    // A build still running would commit its index into the dropped table's folder.
    await this.#apart?.end(name);
    if ((await this.#db.tableNames()).includes(name)) await this.#db.dropTable(name);
  }

  async dropAll(): Promise<void> {
    this.#tables.clear();
    this.#large.clear();
    this.#textRecent.clear();
    this.#deletedIn.clear();
    this.#mirrors.drop();
    this.#spaces.dropTenant();
    await this.#apart?.end();
    for (const name of await this.#db.tableNames()) await this.#db.dropTable(name);
  }

  async close(): Promise<void> {
    await this.#apart?.end();
    for (const s of this.#tables.values()) (await s.catch(() => null))?.table.close();
    this.#tables.clear();
    this.#textRecent.clear();
    this.#mirrors.drop();
    this.#spaces.close();
    this.#db.close();
  }
}

/** SVC_INDEX_TRACE=1 logs each optimize and index build of the tables with its wall and process CPU time (diagnosis). */
const TRACE = process.env.SVC_INDEX_TRACE === '1';
type TraceStep = { t: number; cpu: NodeJS.CpuUsage };
const traceStart = (): TraceStep | null => (TRACE ? { t: performance.now(), cpu: process.cpuUsage() } : null);
function trace(step: TraceStep, what: string, extra: Record<string, number> = {}): void {
  const cpu = process.cpuUsage(step.cpu);
  const fields = Object.entries(extra).map(([k, v]) => ` ${k}=${v}`);
  const rss = Math.round(process.memoryUsage.rss() / 2 ** 20);
  console.error(
    `index trace: ${what} wall=${Math.round(performance.now() - step.t)}ms cpu=${Math.round((cpu.user + cpu.system) / 1000)}ms rss=${rss}MB${fields.join('')}`,
  );
}

/** The full-text copy's rows with no vector cells. */
const withoutVectors = (rows: TextRow[]): SpaceRow[] => rows.map((r) => ({ ...r, vector: NO_VECTOR }));

/**
 * One space's rows, at most `limit`, in two steps: the row ids through the `space` prefilter, then those
 * rows by id, with `selections.vectors` when there are at most `vectorRows` of them, else `selections.text`. A
 * filtered query selecting the vector columns read them for every row it scanned: measured on a
 * 240,000-row table (300k-row application, fragments partly unindexed, load average ~16), one space's 120
 * rows took 4.1–4.8 s in one query and 25–120 ms in two. A compaction between the steps moves rows to
 * other ids: then the take does not return exactly the space's rows, and the one query is run instead.
 */
export async function spaceRowsOf(
  table: lancedb.Table,
  space: string,
  where: string,
  selections: { vectors: string[]; text: string[] },
  limit: number,
  vectorRows = Number.POSITIVE_INFINITY,
): Promise<{ data: ArrowTable; vectors: boolean }> {
  const ids = await table.query().where(where).withRowId().select(['seq']).limit(limit).toArrow();
  const idColumn = ids.getChild('_rowid');
  const rowIds: bigint[] = [];
  for (let i = 0; i < ids.numRows; i++) rowIds.push(BigInt(idColumn?.get(i) as bigint | number));
  const vectors = rowIds.length <= vectorRows;
  const columns = vectors ? selections.vectors : selections.text;
  if (rowIds.length === 0) return { data: ids, vectors };
  const oneQuery = async (): Promise<{ data: ArrowTable; vectors: boolean }> => ({
    data: await table.query().where(where).select(columns).limit(limit).toArrow(),
    vectors,
  });
  let taken: ArrowTable;
  try {
    taken = await table
      .takeRowIds(rowIds)
      .select([...new Set([...columns, 'space'])])
      .toArrow();
  } catch {
    return oneQuery();
  }
  const spaces = taken.getChild('space');
  let exact = taken.numRows === rowIds.length;
  for (let i = 0; exact && i < taken.numRows; i++) exact = spaces?.get(i) === space;
  return exact ? { data: taken, vectors } : oneQuery();
}
