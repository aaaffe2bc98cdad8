// The graph store on Kuzu: the ledger's source of truth. Every import of the engine is in this file, so a
// switch to a fork is one line once it passes the crash test.
//
// Writes: rows reach the engine only through `COPY ... FROM '<csv>'`, one transaction at a time (or one
// statement), so an error rolls the whole transaction back. Measured here (1,000-row batches):
// parameter-bound `UNWIND ... CREATE` spends ~80 ms marshalling the rows into the engine, `UNWIND ...
// MATCH ... CREATE` for relationships runs at under 600 rows/s, while COPY from a CSV file stages the
// same rows in ~20 ms; but COPY has a fixed price per statement (~50 ms) that a one-row write would pay in
// full, and a bulk import's request paid it for each of its tables. So commit groups (but a backfill's)
// are made durable in the write journal (write-journal.ts) and acknowledged from there; the journal is
// copied in later, many groups per COPY, and always before the engine is read.
// The tables' columns, their DDL and encodings are in tables.ts.
import kuzu, { type Connection, type Database, type PreparedStatement, type QueryResult } from 'kuzu';
import { closeSync, mkdirSync, openSync, readFileSync, readSync, rmSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { envMegabytes, envWholeNumber } from '../../env-megabytes.ts';
import type { Cell, TableRows } from './table-rows.ts';
import { encodeRecord, WriteJournal } from './write-journal.ts';
import { landed, renumbered, storedPrefix, type StoredProbe } from './recovery.ts';
import { recoverApart, STORE_FILE } from './store-repair.ts';
import { LAST_WRITTEN_FILE, lastWritten, readFloors, saveFloors, type Floors, type LastWritten } from './last-written.ts';
import { IDENT_LOOKUPS_PER_TURN, IdentTurns } from './ident-turns.ts';
import { SPACE_LOADS_PER_TURN, SpaceLoadTurns } from './space-load-turns.ts';
import type { TurnStats } from './shared-turns.ts';
import { rebuildIdents, rebuildSpaceIndexes, refusedLayout, upgradeLayout, writtenLayout, type MigrationStore } from './migrations.ts';
import {
  asRead,
  BATCH,
  cypherString,
  copyFrom,
  DECLARATION,
  DECODE,
  decodeInt,
  decodeText,
  EDGE,
  HOLDS,
  HOLDS_BLOCK,
  i64,
  HOLDS_EDGE,
  HOLDS_INVALIDATION,
  IDENT,
  IDENT_IN,
  inCopyOrder,
  INVALIDATION,
  isIndex,
  isRel,
  journalParts,
  journalRecord,
  journalRowsOfSpaces,
  keyColumn,
  merged,
  MISSING_KEY,
  NODE,
  parseCsvRows,
  ROW_TABLES,
  SPACE,
  str,
  TABLES,
  tablesOf,
  TENANT_SPACE,
  text,
  toCsv,
  VERDICT,
  type Column,
  type TableSpec,
  type WrittenKeys,
} from './tables.ts';
import type { ExportPageQuery, ExportRowsOf, ExportTable } from './export-page-query.ts';
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, SpaceCounts, SpaceRow } from '../../types.ts';
import { identKey, type CommitGroup, type LoadedLedger } from '../../commit-group.ts';
import {
  edgeInForceCypher,
  nodeFilterCypher,
  nodeMatches,
  type ListCounts,
  type ListCountsQuery,
  type NodePageQuery,
} from './node-page-query.ts';
import { loopTurn } from '../../loop-turns.ts';

/**
 * Groups of up to this many rows are journaled and acknowledged from the journal; larger ones are copied
 * into the engine at once (with whatever the journal holds, in one transaction). A journal append with its
 * fdatasync costs ~0.5 ms plus ~3-5 µs a row, a COPY a fixed ~50-150 ms a statement (~0.3-1 s for a group's
 * three tables and its commit on a loaded 2-core machine) plus ~0.05-0.1 ms a row. Bulk imports are
 * journaled too (issue 21): a 1,000-row request copied at once waited ~1 s for its own COPY, and a copy of
 * the journal carries many requests' rows for the same fixed price. So every group is journaled but a
 * backfill (see commit) and one whose record is larger than JOURNAL_MAX_RECORD_BYTES.
 */
export const JOURNAL_MAX_ROWS = 1_000_000;
/** A group whose journal record is larger is copied at once (a huge record would be held twice in memory). */
export const JOURNAL_MAX_RECORD_BYTES = 64 * 1024 * 1024;
/**
 * A background copy of the journal starts once it holds this many rows, once no append came for
 * FLUSH_AFTER_MS, or FLUSH_MAX_WAIT_MS after the first append since the last copy, whichever comes first.
 * A copy's price is mostly fixed (Kuzu 0.11.3 checkpoints after every COPY FROM): measured in process on a
 * loaded 2-core machine, ~0.7 s of CPU for 1,000 rows, ~1.9 s for 16,000, ~2.6 s for 32,000, about the
 * same whether the store held nothing, 30k or 300k rows (it grows past that: see JOURNAL_CAP_COPIES).
 * Copies started at 2,000 rows and one second after the first
 * row took ~400 ms of CPU per 1,000-row import request at 30k rows, more than everything else a request
 * costs; a trickle of small writes paid one every second. Nothing waits for a background copy but a read
 * of the engine that needs every row (which copies the journal first anyway) and a writer at the cap.
 * 64,000 rather than 16,000 since 2026-11-27: into a 300k-row store a sustained import ran at 8.0k rows/s
 * with 16,000-row copies and at 17.5-20.9k with 64,000 (docs/storage.md). The price is the journal's: up
 * to twice as many rows held (~100 MB of heap for 128,000 of the bench's rows; JOURNAL_BYTES_CAP bounds
 * it) and replayed after a crash.
 */
export const FLUSH_ROWS = 64_000;
/**
 * Unless SVC_JOURNAL_COPY_ROWS sets it, a copy's size grows with the store: one row for every
 * STORED_ROWS_PER_COPY_ROW rows stored, from FLUSH_ROWS up to FLUSH_ROWS_MAX, so the forced checkpoint,
 * whose price grows with the store, stays about the same share of each copy. Measured over HTTP (300,000
 * rows in 1,000-row requests into a copy of a 3M-row folder, 4 clients, alternated): 64,000-row copies
 * 20.5k and 18.7k rows/s, 128,000-row copies 23.5k and 29.9k (docs/storage.md).
 */
export const FLUSH_ROWS_MAX = 128_000;
export const STORED_ROWS_PER_COPY_ROW = 24;
export const FLUSH_AFTER_MS = 1_000;
export const FLUSH_MAX_WAIT_MS = 10_000;
/** A scan's file (tenantKeys, tenantPlacements) is parsed this many bytes at a time, a turn of the event loop each (~5 ms). */
const SCAN_CHUNK_BYTES = 256 * 1024;
/**
 * A write waits for the copy in progress when the journal holds this many copies' worth of rows
 * (copyRows() each) or JOURNAL_BYTES_CAP bytes per FLUSH_ROWS of them: writers cannot outrun
 * the copy by more, which bounds the journal's memory, a restart's replay after a crash, and how long a
 * read that needs every row in the engine (counts, whole-tenant pages) waits: for the copy in progress,
 * then for one of the rest (a space's load reads beside copies instead, see loadSpaces). Under a steady
 * import each copy takes the copyRows() rows that started it while the writers fill the other
 * half. A copy's fixed price grows with the store (Kuzu's forced checkpoint: ~0.2 s at 100k rows, ~1 s at
 * 3M, measured in docs/storage.md), so larger copies import faster into a large store.
 */
export const JOURNAL_CAP_COPIES = 2;
/** The journal's bytes at the cap for FLUSH_ROWS-row copies; larger copies hold proportionally more. */
export const JOURNAL_BYTES_CAP = 64 * 1024 * 1024;

/** Rows a copy of the journal carries when SVC_JOURNAL_COPY_ROWS is unset, in a store of `storedRows`. */
export function copyRowsFor(storedRows: number, range: CopyRowsRange = DEFAULT_COPY_ROWS): number {
  return Math.min(range.max, Math.max(range.min, Math.round(storedRows / range.storedRowsPerRow)));
}
export interface CopyRowsRange {
  min: number;
  max: number;
  storedRowsPerRow: number;
}
const DEFAULT_COPY_ROWS: CopyRowsRange = { min: FLUSH_ROWS, max: FLUSH_ROWS_MAX, storedRowsPerRow: STORED_ROWS_PER_COPY_ROW };
/**
 * Ids a lookup of the Ident index finds one primary-key lookup at a time (~1.5-3 ms each); more are found by
 * `IN` lists, which scan the table (~90-200 ms a list at 300k ids) but cost the same for 500 ids as for one.
 */
const IDENT_LOOKUPS_MAX = 40;
/**
 * From this many Ident rows every id is looked up on its own: a list's scan grows with the table (1.8 s
 * for 500 ids at 2.8M rows, against 0.7 s for 500 lookups), and the search index's catch-up after a kill
 * sent one such list after another on the reader connection, so a cold user's read waited behind them for
 * 6.7 s or timed out, for minutes. A lookup costs the same at any size, and reads pass between two.
 */
const IDENT_SCAN_ROWS_MAX = 1_000_000;
/** An id's Ident row and the TenantSpace rows of the spaces holding it (as `i` and `s`). */
const IDENT_PATH = `MATCH (i:${IDENT.table})-[:${IDENT_IN.table}]->(s:${TENANT_SPACE.table})`;
/** (id, space) pairs remembered as written before the set starts over. */
const STORED_IDENTS_MAX = 200_000;
/** TenantSpace keys remembered as written before the set starts over. */
const STORED_SPACES_MAX = 100_000;
/** Ids per literal list in a query by id (a list's parse costs ~0.5 ms an item). */
const ID_LIST = 500;
/** Ids as Cypher list literals (their stored, JSON-encoded text), ID_LIST at a time. */
function* idLists(ids: readonly string[]): Generator<string> {
  for (let i = 0; i < ids.length; i += ID_LIST)
    yield ids
      .slice(i, i + ID_LIST)
      .map((id) => cypherString(JSON.stringify(id)))
      .join(', ');
}

/**
 * SVC_JOURNAL_COPY_ROWS: the rows at which a background copy of the journal starts (see JOURNAL_CAP_COPIES),
 * or null when unset: then copyRowsFor the store's size.
 */
export function journalCopyRows(env: NodeJS.ProcessEnv = process.env): number | null {
  const rows = envWholeNumber(env, 'SVC_JOURNAL_COPY_ROWS', 0, 100, 'rows');
  return rows === 0 ? null : rows;
}

/** SVC_JOURNAL_MAX_ROWS: the largest group journaled; 0 writes every group by COPY at once. */
export function journalMaxRows(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber(env, 'SVC_JOURNAL_MAX_ROWS', JOURNAL_MAX_ROWS, 0, 'rows');
}

export interface WriteStats {
  journalGroups: number;
  journalRows: number;
  /** Time spent appending to the journal, fdatasync included. */
  journalMs: number;
  /** Copies of the journal into the engine, and the rows they carried (replays on open included). */
  flushes: number;
  flushedRows: number;
  /** Groups copied at once, their rows (journal rows copied with them excluded) and the time taken. */
  copyGroups: number;
  copyRows: number;
  copyMs: number;
  /** The part of the copy time spent encoding and writing the CSV files. */
  stageMs: number;
}

/** Where a fault can be injected around a copy's transaction (tests only). */
export type FaultPoint = 'before-commit' | 'after-commit' | 'after-delete-part';

export interface KuzuGraphOptions {
  /**
   * After an unclean stop, copy the journal in from a child process first, and rebuild the store when
   * that crashes the engine (./store-repair.ts). The ledger's default; off here (tests of the engine).
   */
  recoverApart?: boolean;
  /** The largest group journaled; journalMaxRows() unless set (tests). */
  journalMaxRows?: number;
  /**
   * How long the journal stays quiet (no append) before a background copy; FLUSH_AFTER_MS unless set. The
   * longest wait after the first append is FLUSH_MAX_WAIT_MS, or this when it is longer. Tests that count
   * the journal's rows across several calls set it long, so a slow machine's timer cannot copy between
   * two of their steps.
   */
  flushAfterMs?: number;
  /** The rows at which a background copy starts at once; FLUSH_ROWS unless set (tests of failing copies). */
  flushRows?: number;
  /** How copies grow with the store when SVC_JOURNAL_COPY_ROWS is unset; DEFAULT_COPY_ROWS unless set (tests). */
  copyRows?: CopyRowsRange;
  /** Ident rows from which ids are never looked up by an `IN` list; IDENT_SCAN_ROWS_MAX unless set (tests). */
  identScanRowsMax?: number;
  /**
   * A seam for fault-injection tests: called before a copy's transaction runs and after it committed,
   * with the tables it writes; a throw there fails the copy as the engine would. Thrown 'after-commit', it
   * stands for a COMMIT whose forced checkpoint failed after the transaction reached the WAL;
   * 'after-delete-part', a process stopped after a part of a tenant's deletion committed.
   */
  fault?: (point: FaultPoint, tables: readonly string[]) => void;
  /**
   * A seam for race tests: awaited after a lookup of the spaces holding ids has read its answer and before
   * it returns it, so a test can land a commit in between.
   */
  afterLookup?: () => Promise<void>;
  /**
   * A seam for race tests: awaited inside a copy's transaction after its statements ran and before its
   * COMMIT, so a test can hold the copy open while it looks ids up beside it.
   */
  beforeCopyCommit?: () => Promise<void>;
  /**
   * A seam for race tests: awaited by a load of spaces (loadSpaces, loadSpace) before it reads, in its turn
   * on the store, so a test can send a write while the load is under way.
   */
  beforeSpacesLoad?: (spaces: readonly string[]) => Promise<void>;
}

/** The rows of one space's view that are its own: its node and edge rows and the invalidations it holds. */
export type SpaceRows = Pick<LoadedLedger, 'nodes' | 'edges' | 'invalidations'>;

/**
 * Spaces read by one query of each table in a load of several: the keys are written into the query's
 * text (a literal list), so a batch is bounded: a load of more spaces takes one such query per 64. A turn
 * of shared loads reads as many.
 */
export const LOAD_SPACES_PER_QUERY = SPACE_LOADS_PER_TURN;

/** The leading column of a load of several spaces: which space held the row. */
const HELD_BY = '__held_by';

/** The shared turns of the store's reads: lookups by id and space loads (readTurnStats). */
export interface ReadTurnStats {
  idents: TurnStats & { keys: number };
  spaces: TurnStats & { spaces: number };
}

/** The narrow port the ledger needs from a graph engine. */
export interface GraphStore {
  commit(group: CommitGroup): Promise<void>;
  loadAll(): Promise<LoadedLedger>;
  loadTenant(tenant: string): Promise<LoadedLedger>;
  /** One space's node and edge rows and the invalidations of its nodes, from the space's Holds index. */
  loadSpace(tenant: string, space: string): Promise<SpaceRows>;
  /** loadSpace for several spaces of a tenant, read together: each space's rows as loadSpace gives them. */
  loadSpaces(tenant: string, spaces: readonly string[]): Promise<Map<string, SpaceRows>>;
  /** What the store's shared read turns did so far, for diagnosing load. */
  readTurnStats(): ReadTurnStats;
  /** Rows acknowledged and held in memory until their copy into the engine, for diagnosing memory. */
  journalRows(): number;
  /**
   * A tenant's entity node versions, SUPERSEDES edges and invalidations, each in commit order, and the
   * latest known_at of its nodes and edges: what a search across its spaces reads of the whole tenant.
   */
  tenantLists(
    tenant: string,
  ): Promise<{ entities: NodeVersion[]; supersedes: EdgeRecord[]; invalidations: Invalidation[]; latestBlockKnownAt: number }>;
  /** A tenant's batches, declarations and verdicts. */
  loadTenantWide(tenant: string): Promise<Pick<LoadedLedger, 'batches' | 'declarations' | 'verdicts'>>;
  /** Node rows with `after` < seq <= `upTo`, in seq order, at most `limit` of them. */
  nodesBetween(after: number, upTo: number, limit: number): Promise<NodeVersion[]>;
  lastWritten(): Promise<LastWritten>;
  /** One tenant's rows with `after` < tseq <= `upTo`, at most `limit` per table, each table in tseq order. */
  tenantRows(tenant: string, after: number, upTo: number, limit: number): Promise<CommitGroup>;
  tenantLastTseq(tenant: string): Promise<number>;
  /** The tenant's stored invalidations of these ids. */
  invalidationsOfIds(tenant: string, ids: readonly string[]): Promise<Invalidation[]>;
  /** The spaces holding the invalidations of each of these ids of the tenant (a version of it, or an edge touching it). */
  spacesOfIds(tenant: string, ids: readonly string[]): Promise<Map<string, Set<string>>>;
  /**
   * Every id of the tenant the Ident index holds and every space it has rows in, the journal's included:
   * how many first, then each (a scan, made once when the tenant's filter of held ids is built).
   */
  tenantKeys(tenant: string, sink: { count(keys: number): void; id(id: string): void; space(space: string): void }): Promise<void>;
  /** Every (id, space) pair of the tenant's Ident index, after the journal is copied in: how many first, then each one. */
  tenantPlacements(tenant: string, sink: { count(pairs: number): void; pair(id: string, space: string): void }): Promise<void>;
  /** The same from the Ident index by primary key (no scan), the write journal's rows included from memory. */
  spacesHolding(tenant: string, ids: readonly string[]): Promise<Map<string, Set<string>>>;
  /** The spaces holding a node version of the tenant carrying each of these fact keys, the write journal's included from memory. */
  spacesWithFacts(tenant: string, factKeys: readonly string[]): Promise<Map<string, Set<string>>>;
  /** With `engineOnly`, the journal is not copied in first: the caller knows it holds none of these spaces. */
  spaceRows(names: readonly string[], engineOnly?: boolean): Promise<SpaceRow[]>;
  /**
   * Deletes at most about `maxRows` rows of the tenant (journal included) in one transaction; rows
   * deleted per table, and whether none is left.
   */
  deleteTenantPart(tenant: string, maxRows: number): Promise<{ deleted: Record<string, number>; done: boolean }>;
  /** The first tenant to write `space`, or null; from the Space table's key index. */
  spaceWriter(space: string): Promise<string | null>;
  counts(): Promise<Record<string, number>>;
  /** Per space of the tenant holding rows known at `asOf`: its node and edge rows known then, counted in the engine. */
  spaceCounts(tenant: string, asOf: number): Promise<SpaceCounts[]>;
  /** A page of the tenant's node rows in tseq order, the write journal's included from memory. */
  tenantNodePage(tenant: string, q: NodePageQuery): Promise<NodeVersion[]>;
  /** What a whole tenant's list at a past as_of counts over all its rows, by aggregations in the engine. */
  listCounts(tenant: string, q: ListCountsQuery): Promise<ListCounts>;
  /** A page of one tenant's rows of one table for an export, in seq order, after the journal is copied in. */
  exportPage<K extends ExportTable>(tenant: string, table: K, q: ExportPageQuery): Promise<ExportRowsOf[K][]>;
  /** The tenant's batches of these ids. */
  batchesOf(tenant: string, ids: readonly string[]): Promise<BatchRow[]>;
  /** Every fact declaration of the tenant, in seq order. */
  declarationsOf(tenant: string): Promise<Declaration[]>;
  /** Rows above this sequence number were renumbered when the store opened; null when none were. */
  renumberedAbove(): number | null;
  close(): Promise<void>;
}

/** Kuzu's buffer pool when SVC_KUZU_BUFFER_MB is unset. Kuzu's own default is 80% of RAM. */
export const KUZU_BUFFER_MB_DEFAULT = 256;

/**
 * The buffer pool size in MB from SVC_KUZU_BUFFER_MB. Reads are answered from the in-memory read model
 * and Kuzu is only written to (and read once at start), so it needs little; its default (80% of RAM)
 * let the pool's pages pile up in the server's RSS.
 */
export function kuzuBufferMb(env: NodeJS.ProcessEnv = process.env): number {
  return envMegabytes(env, 'SVC_KUZU_BUFFER_MB', KUZU_BUFFER_MB_DEFAULT, 16);
}

/**
 * Closes an execution's results now: a result left for the garbage collector after the database is
 * closed crashes the process at exit (seen after a transaction: SIGSEGV on exit).
 */
function closeResults(result: unknown): void {
  for (const r of (Array.isArray(result) ? result : [result]) as QueryResult[]) r.close();
}

export class KuzuGraph implements GraphStore {
  readonly #db: Database;
  readonly #writer: Connection;
  readonly #reader: Connection;
  readonly #dir: string;
  /** Where the last read of the latest written found each column's maximum (./last-written.ts). */
  #floors: Floors;
  readonly #stage: string;
  readonly #journal: WriteJournal;
  readonly #journalMaxRows: number;
  readonly #fault: NonNullable<KuzuGraphOptions['fault']>;
  readonly #afterLookup: KuzuGraphOptions['afterLookup'];
  readonly #beforeCopyCommit: KuzuGraphOptions['beforeCopyCommit'];
  readonly #beforeSpacesLoad: KuzuGraphOptions['beforeSpacesLoad'];
  /**
   * Lookups by id (spacesHolding) run on the reader connection beside a copy's statements, not behind
   * them: open only while a copy's transaction runs its statements (see #inTransaction), never while
   * anything else uses the writer, nor during a COMMIT (a read transaction running when a commit
   * checkpoints stalls both, see #read). `waiting` are lookups queued that start when it opens.
   */
  readonly #beside = {
    open: false,
    running: 0,
    waiting: new Set<() => void>(),
    idle: [] as (() => void)[],
    /** Reads beside run one after another on the reader connection, as they would in the writer's turn. */
    chain: Promise.resolve() as Promise<unknown>,
  };
  /** A scan of a tenant's keys (tenantKeys) runs on its own connection, so lookups beside it are not queued behind it. */
  readonly #scanner: Connection;
  /**
   * Lookups by id (ident-turns.ts) run on their own connection, at the times they ran on the reader (beside a
   * copy's statements or in the writer's turn), with one thread: a query of a few primary-key lookups spent
   * more waking Kuzu's threads than working on this loaded 2-core machine (16 keys 12.0-12.5 ms against
   * 13.2-13.4 with the default, 4 keys 3.6-4.1 against 4.2-8.2, quiet).
   */
  readonly #lookups: Connection;
  readonly #flushAfterMs: number;
  readonly #flushMaxWaitMs: number;
  /** A test's fixed threshold for starting a copy (flushRows), or null. */
  readonly #flushRowsFixed: number | null;
  /** SVC_JOURNAL_COPY_ROWS, or null: copies then grow with the store (copyRowsFor). */
  readonly #copyRowsSetting: number | null;
  readonly #copyRowsRange: CopyRowsRange;
  /**
   * Node and edge rows in the engine (not the journal), kept by the copies; null until a copy counts them:
   * the open's (which runs whether the journal holds rows or not), and the first after a tenant's deletion.
   */
  #storedRows: number | null = null;
  /** #stored, as recovery.ts asks it. */
  readonly #probe: StoredProbe = (table, key) => this.#stored(table, key);
  /** What the layout's migrations and the indexes' rebuilds run through (migrations.ts). */
  readonly #migrations: MigrationStore;
  /** A write waits for a copy when the journal holds this many rows (see JOURNAL_CAP_COPIES). */
  /** When the flush timer was armed (the first append since the last copy was queued), and the last append. */
  #flushArmedAt = 0;
  #lastAppendAt = 0;
  readonly #stats: WriteStats = {
    journalGroups: 0,
    journalRows: 0,
    journalMs: 0,
    flushes: 0,
    flushedRows: 0,
    copyGroups: 0,
    copyRows: 0,
    copyMs: 0,
    stageMs: 0,
  };
  /** Every use of the writer connection runs through this chain: Kuzu allows one write transaction. */
  #writing: Promise<unknown> = Promise.resolve();
  #flushTimer: NodeJS.Timeout | null = null;
  /** The background copy queued or running, settled (never rejected) when it is done. */
  #flush: Promise<void> | null = null;
  /** A copy of the journal failed: the next one first skips rows the engine already holds. */
  #retrying = false;
  #renumberedAbove: number | null = null;
  /** Spaces whose TenantSpace row this process wrote (see tablesOf), at most STORED_SPACES_MAX. */
  readonly #storedSpaces = new Set<string>();
  /** (id, space) pairs whose IdentIn row this process wrote, at most STORED_IDENTS_MAX. */
  readonly #storedIdents = new Set<string>();
  /** Primary-key lookups of Ident rows made (spacesHolding), for tests and benchmarks. */
  #identLookups = 0;
  readonly #identScanRowsMax: number;
  /** Lookups of single ids, in turns shared by the callers asking at once. */
  readonly #identTurns = new IdentTurns({
    turn: (fn) => this.#besideCopy(fn),
    stored: (keys) => this.#storedSpacesOf(keys),
    journaled: (keys, pair) => this.#journaledIdents(keys, pair),
  });
  /** Loads of spaces, in turns shared by the callers asking at once (each turn beside a copy's statements, as a lookup). */
  readonly #spaceTurns = new SpaceLoadTurns<SpaceRows>({
    turn: (fn) => this.#besideCopy(fn),
    read: (tenant, names) => this.#readSpaces(tenant, names),
  });
  /** The prepared lookups of 1, 2, 4, 8 or 16 Ident keys' spaces, on the lookups' connection (made on first use). */
  readonly #identStatements = new Map<number, Promise<PreparedStatement>>();
  /** The Ident table's rows, counted when first needed, then raised by the rows copied (an upper bound). */
  #identRows: number | null = null;
  #closed = false;
  #engineClosed = false;
  #copyOuts = 0;

  private constructor(dir: string, options: KuzuGraphOptions) {
    mkdirSync(dir, { recursive: true });
    this.#db = new kuzu.Database(join(dir, STORE_FILE), kuzuBufferMb() * 1024 * 1024);
    this.#writer = new kuzu.Connection(this.#db);
    this.#reader = new kuzu.Connection(this.#db);
    this.#scanner = new kuzu.Connection(this.#db);
    this.#lookups = new kuzu.Connection(this.#db, 1);
    this.#dir = dir;
    this.#floors = readFloors(dir);
    this.#migrations = {
      dir,
      run: (on, statement) => this.#run(on === 'writer' ? this.#writer : this.#reader, statement),
      select: (spec, where, decode, limit) => this.#select(spec, where, decode, limit),
      commitCopy: (parts) => this.#commitCopy(parts),
      exclusive: (fn) => this.#exclusive(fn),
      forget: (index) => {
        if (index === 'spaces') return this.#storedSpaces.clear();
        this.#storedIdents.clear();
        this.#identRows = null;
      },
    };
    this.#stage = join(dir, 'staging');
    rmSync(this.#stage, { recursive: true, force: true });
    mkdirSync(this.#stage, { recursive: true });
    this.#journalMaxRows = options.journalMaxRows ?? journalMaxRows();
    this.#fault = options.fault ?? (() => undefined);
    this.#identScanRowsMax = options.identScanRowsMax ?? IDENT_SCAN_ROWS_MAX;
    this.#afterLookup = options.afterLookup;
    this.#beforeCopyCommit = options.beforeCopyCommit;
    this.#beforeSpacesLoad = options.beforeSpacesLoad;
    this.#flushAfterMs = options.flushAfterMs ?? FLUSH_AFTER_MS;
    this.#flushMaxWaitMs = Math.max(FLUSH_MAX_WAIT_MS, this.#flushAfterMs);
    this.#copyRowsSetting = journalCopyRows();
    this.#copyRowsRange = options.copyRows ?? DEFAULT_COPY_ROWS;
    this.#flushRowsFixed = options.flushRows ?? null;
    this.#journal = WriteJournal.open(dir);
  }

  /** Opens the store; rows a crash left in the journal are copied into the engine before it returns. */
  static async open(dir: string, options: KuzuGraphOptions = {}): Promise<KuzuGraph> {
    if (options.recoverApart) await recoverApart(dir, (line) => console.error(line));
    const graph = new KuzuGraph(dir, options);
    const written = writtenLayout(dir);
    const refused = refusedLayout(dir, written);
    if (refused) {
      await graph.#closeEngine();
      throw new Error(refused);
    }
    await upgradeLayout(graph.#migrations, written, () => graph.#drain({ recovering: true }));
    return graph;
  }

  async #closeEngine(): Promise<void> {
    this.#engineClosed = true;
    await this.#journal.close();
    await this.#writer.close();
    await this.#reader.close();
    await this.#scanner.close();
    await this.#lookups.close();
    await this.#db.close();
  }

  async #run(conn: Connection, statement: string): Promise<Record<string, unknown>[]> {
    // A reader the close did not wait for (a search index's abandoned chunk) gets an error, never a query
    // on a closed connection.
    if (this.#engineClosed) throw new Error('graph store is closed');
    const result = await conn.query(statement);
    const results = Array.isArray(result) ? result : [result];
    const last = results[results.length - 1];
    try {
      return last ? ((await last.getAll()) as Record<string, unknown>[]) : [];
    } finally {
      closeResults(results);
    }
  }

  #exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#writing.then(fn);
    this.#writing = run.catch(() => undefined);
    return run;
  }

  /**
   * A read that may run beside a copy's statements (see #beside): at once while a copy has them open,
   * otherwise in the writer's turn, or as soon as a copy opens them, whichever comes first. `fn` must read
   * only what is true both before and after the copy commits (the journal's rows from memory, the engine's
   * committed rows), as spacesHolding does.
   */
  #besideCopy<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let started = false;
      const early = (): void => void start(true);
      const start = (beside: boolean): Promise<void> | undefined => {
        if (started) return undefined;
        started = true;
        this.#beside.waiting.delete(early);
        if (!beside) return fn().then(resolve, reject);
        this.#beside.running++;
        const run = this.#beside.chain.then(fn);
        this.#beside.chain = run.catch(() => undefined);
        void run.then(resolve, reject).finally(() => {
          if (--this.#beside.running === 0) for (const w of this.#beside.idle.splice(0)) w();
        });
        return undefined;
      };
      if (this.#beside.open) return void start(true);
      this.#beside.waiting.add(early);
      void this.#exclusive(async () => start(false));
    });
  }

  /** Opens the reader connection to lookups beside the writer's turn: only while nothing can commit. */
  #openBeside(): void {
    this.#beside.open = true;
    for (const w of [...this.#beside.waiting]) w();
  }

  async #closeBeside(): Promise<void> {
    this.#beside.open = false;
    while (this.#beside.running > 0) await new Promise<void>((r) => this.#beside.idle.push(r));
  }

  /**
   * A read of the engine, after the journal's rows are copied in, never beside a copy. Kuzu 0.11.3
   * checkpoints after every COPY FROM, and its commit holds the lock a read transaction needs to end
   * while it waits for every transaction to end: a read running when a copy commits stalls both for the
   * checkpoint's 5 s timeout, and the copy fails (measured: 33 of 40 copies overlapped by reads failed).
   */
  #read<T>(fn: () => Promise<T>, opts: { recovering?: boolean } = {}): Promise<T> {
    if (this.#flushTimer) {
      clearTimeout(this.#flushTimer);
      this.#flushTimer = null;
    }
    // Each call queues its own copy: one already running took the journal before this caller's rows may
    // have been appended. A copy that finds the journal empty costs nothing.
    return this.#exclusive(async () => {
      await this.#copyJournal([], opts);
      return fn();
    });
  }

  /**
   * Durable when it resolves: a small group in the journal (copied into the engine later, always before
   * the engine is read), a larger one committed in the engine with the journal's rows.
   */
  async commit(group: CommitGroup): Promise<void> {
    if (this.#closed) throw new Error('graph store is closed');
    const failure = this.#journal.failure;
    if (failure) throw new Error(`writes refused until the server restarts: the write journal's fdatasync failed (${failure.message})`);
    const written: WrittenKeys = { spaces: [], idents: [] };
    const parts = tablesOf(group, this.#storedSpaces, this.#storedIdents, written);
    // The rows the group carries and the Space row it may open; the Holds index rows are not counted.
    const rows = parts.reduce((n, p) => n + (isIndex(p.table) ? 0 : p.count), 0);
    if (rows === 0) return;
    // A group's Space rows (at most one per space it writes) do not move it off the journal.
    const journaledRows =
      group.batches.length +
      group.nodes.length +
      group.edges.length +
      group.declarations.length +
      group.verdicts.length +
      group.invalidations.length;
    const t0 = performance.now();
    // A backfill batch's key is the client's batch id, so it could not be renumbered on recovery (see
    // #renumbered): a group that opens a batch is copied at once.
    const record = journaledRows <= this.#journalMaxRows && group.batches.length === 0 ? journalRecord(parts) : null;
    const bytes = record ? encodeRecord(record) : null;
    if (record && bytes && bytes.length <= JOURNAL_MAX_RECORD_BYTES) {
      await this.#journal.append(record, bytes);
      this.#noteWritten(written);
      this.#stats.journalGroups++;
      this.#stats.journalRows += rows;
      this.#stats.journalMs += performance.now() - t0;
      this.#scheduleFlush();
      // The group is durable and acknowledged from here on: a failed copy while waiting for the journal
      // to shrink must not fail it (the ledger would refuse a write the next copy stores).
      // Past the cap it waits for the copy in progress, which takes the rows appended before it started,
      // and only then (still past it) for a copy of the rest: not for both at once.
      // From the copy size, not a test's flushRows: tests of failing copies start them early, writes going on.
      const copyRows = this.copyRows();
      const full = (): boolean =>
        this.#journal.pendingRows >= JOURNAL_CAP_COPIES * copyRows ||
        this.#journal.pendingBytes >= (JOURNAL_BYTES_CAP * copyRows) / FLUSH_ROWS;
      if (full() && this.#flush) await this.#flush;
      if (full())
        await this.#drain().catch((error: unknown) =>
          console.error('write journal: copy into the graph store failed, kept for a retry:', error),
        );
      return;
    }
    await this.#exclusive(async () => {
      const t1 = performance.now();
      await this.#copyJournal(parts);
      this.#noteWritten(written);
      this.#stats.copyGroups++;
      this.#stats.copyRows += rows;
      this.#stats.copyMs += performance.now() - t1;
    });
  }

  /**
   * The group's spaces have their TenantSpace rows stored, or journaled ahead of every later record (a
   * journal is copied oldest first, and a copy's transaction writes TenantSpace before Holds).
   */
  #noteWritten(written: WrittenKeys): void {
    // The keys tablesOf kept (those not noted already), not the group's rows worked out again: that took
    // ~6 ms of a 1,000-row import request.
    if (this.#storedSpaces.size > STORED_SPACES_MAX) this.#storedSpaces.clear();
    for (const key of written.spaces) this.#storedSpaces.add(key);
    if (this.#storedIdents.size > STORED_IDENTS_MAX) this.#storedIdents.clear();
    for (const key of written.idents) this.#storedIdents.add(key);
  }

  #scheduleFlush(): void {
    if (this.#journal.pendingRows >= (this.#flushRowsFixed ?? this.copyRows())) return this.#flushInBackground();
    const now = performance.now();
    this.#lastAppendAt = now;
    if (this.#flushTimer) return;
    this.#flushArmedAt = now;
    // One timer, moved on when it fires early rather than re-armed by every append.
    const fire = (): void => {
      const at = performance.now();
      const due = Math.min(this.#lastAppendAt + this.#flushAfterMs, this.#flushArmedAt + this.#flushMaxWaitMs);
      if (at < due) {
        this.#flushTimer = setTimeout(fire, due - at);
        this.#flushTimer.unref();
        return;
      }
      this.#flushTimer = null;
      this.#flushInBackground();
    };
    this.#flushTimer = setTimeout(fire, this.#flushAfterMs);
    this.#flushTimer.unref();
  }

  #flushInBackground(): void {
    // One background copy queued at a time: while copies fail, every write past FLUSH_ROWS would queue
    // another, and a write waiting at the journal's cap would wait behind all of them.
    if (this.#flush) return;
    this.#flush = this.#drain().then(
      () => {
        this.#flush = null;
        // Rows appended while this copy ran armed the quiet timer, which may have fired during it and
        // found this copy in progress: without a new timer they stayed in the journal until the next
        // write or read (measured: 16 MB for 13 minutes after the app bench's fill), and the stop's
        // close then had to copy them within its grace.
        if (this.#journal.pendingRows > 0 && !this.#flushTimer && !this.#closed) this.#scheduleFlush();
      },
      (error: unknown) => {
        this.#flush = null;
        console.error('write journal: copy into the graph store failed, kept for a retry:', error);
      },
    );
  }

  /** Copies whatever the journal holds into the engine; a read of the engine awaits this first. */
  #drain(opts: { recovering?: boolean } = {}): Promise<void> {
    return this.#read(() => Promise.resolve(), opts);
  }

  /**
   * One transaction: the journal's sealed rows plus `group`'s. On recovery, and after a failed attempt,
   * rows whose primary key the engine holds are skipped first: a crash between a commit and the journal's
   * release replays rows already in.
   */
  async #copyJournal(group: readonly TableRows[], opts: { recovering?: boolean } = {}): Promise<void> {
    const { records, segments } = await this.#journal.take();
    // On recovery, and after a failed copy, rows the engine already holds are skipped: they are a prefix
    // of these records (a copy takes every sealed record, oldest first, in one transaction), found by a
    // few primary-key lookups. A list of every key took ~0.5 ms a key to parse (4.5 s for 8,000).
    const pending = this.#retrying || opts.recovering ? records.slice(await storedPrefix(records, this.#probe)) : records;
    let journal = journalParts(pending);
    const journalRows = journal.reduce((n, p) => n + (isIndex(p.table) ? 0 : p.count), 0);
    if (opts.recovering && journal.some((p) => p.count > 0)) journal = await this.#renumbered(journal);
    const parts = merged(journal, group).filter((p) => p.count > 0);
    try {
      await this.#copyRepairing(parts);
      this.#retrying = false;
    } catch (error) {
      // The transaction may be in the engine although the commit failed (a forced checkpoint failing
      // after the WAL record is written): then it counts as committed, and the group is acknowledged.
      this.#retrying = true;
      if (!(await landed(parts, this.#probe))) throw error;
      console.error('graph store: a copy reported a failure but its rows are stored; counted as committed:', error);
      this.#retrying = false;
    }
    if (segments > 0) this.#journal.release(segments);
    if (this.#storedRows === null) this.#storedRows = await this.#countStoredRows();
    else this.#storedRows += parts.reduce((n, p) => n + (p.table === NODE.table || p.table === EDGE.table ? p.count : 0), 0);
    if (journalRows > 0) {
      this.#stats.flushes++;
      this.#stats.flushedRows += journal.reduce((n, p) => n + (isIndex(p.table) ? 0 : p.count), 0);
    }
  }
  /**
   * A copy, after repairing the index by id (and then the index by space) when it fails on a key missing
   * from them. Kuzu 0.11.3 can keep, after a SIGKILL during a copy, primary-key entries of the killed
   * transaction whose rows were never stored (measured: a 3M-row store killed during the copy on close
   * kept 3 such Ident keys). Sequence numbers are moved past them (#renumbered), but a natural key (an
   * Ident row's tenant and id, a TenantSpace row's tenant and space) cannot be: copying it again is refused
   * as a duplicate, which `ignore_errors` passes over, and the relationships from it then fail with "Unable
   * to find primary key value" at every open, so the data folder could not be opened again. Both indexes
   * are derived from the stored rows, so they are dropped (the orphan keys with them) and built again.
   */
  async #copyRepairing(parts: TableRows[]): Promise<void> {
    for (const repair of ['idents', 'spaces', null] as const) {
      try {
        return await this.#commitCopy(parts);
      } catch (error) {
        if (repair === null || !MISSING_KEY.test(String((error as Error).message))) throw error;
        const t0 = performance.now();
        const index = repair === 'idents' ? 'id' : 'space';
        console.error(
          `graph store: a copy failed on a key missing from the index by ${index} ` +
            `(${(error as Error).message}); building that index again from the stored rows (${this.#dir})`,
        );
        const built = repair === 'idents' ? await rebuildIdents(this.#migrations) : await rebuildSpaceIndexes(this.#migrations);
        console.error(`graph store: index by ${index} built again in ${Math.round(performance.now() - t0)} ms (${built})`);
      }
    }
  }

  /** The journal's rows renumbered above every number used before (see renumbered in recovery.ts). */
  async #renumbered(parts: readonly TableRows[]): Promise<TableRows[]> {
    const { parts: moved, lowest } = await renumbered(parts, this.#dir, (await this.#lastWritten()).seq);
    if (lowest !== null) this.#renumberedAbove = Math.min(this.#renumberedAbove ?? lowest, lowest) - 1;
    return moved;
  }

  /**
   * The highest sequence number a derived index may have seen under its old value: rows above it were
   * renumbered on open (see #renumbered), so an index that recorded them must forget and re-read them.
   * Null when this open renumbered nothing.
   */
  renumberedAbove(): number | null {
    return this.#renumberedAbove;
  }

  /** Whether the row of `table` whose primary key is `key` is stored: one lookup in the key's index. */
  async #stored(table: string, key: Cell): Promise<boolean> {
    const name = keyColumn({ table });
    // Text cells are stored JSON-encoded (see csvCell), so a text key is compared encoded.
    const literal = name === 'seq' ? String(Math.trunc(Number(key))) : cypherString(JSON.stringify(String(key)));
    return (await this.#run(this.#writer, `MATCH (x:${table}) WHERE x.${name} = ${literal} RETURN x.${name} AS k`)).length > 0;
  }

  /** What the commits so far cost, by write path: for benchmarks and tests, not for the ledger. */
  writeStats(): Readonly<WriteStats> {
    return { ...this.#stats };
  }

  /** Node and edge rows in the engine (a count of Block's 3M rows took 8 ms, measured on the kept folder). */
  async #countStoredRows(): Promise<number> {
    let n = 0;
    for (const table of [NODE.table, EDGE.table])
      n += decodeInt((await this.#run(this.#reader, `MATCH (x:${table}) RETURN count(*) AS n`))[0]?.n);
    return n;
  }

  /** The rows a background copy of the journal carries now (SVC_JOURNAL_COPY_ROWS, or copyRowsFor the store). */
  copyRows(): number {
    return this.#copyRowsSetting ?? copyRowsFor(this.#storedRows ?? 0, this.#copyRowsRange);
  }

  /** Rows in the journal not yet copied into the engine. */
  journalRows(): number {
    return this.#journal.pendingRows;
  }

  async #commitCopy(parts: TableRows[]): Promise<void> {
    if (parts.length === 0) return;
    const t0 = performance.now();
    const copies: string[] = [];
    for (const part of inCopyOrder(parts)) {
      const file = join(this.#stage, `${part.table}.csv`);
      // Written off the event loop: the copy runs after the write is acknowledged, and a synchronous
      // write held the loop ~6 ms a copy on a loaded machine, when the writer's next read often follows.
      await writeFile(file, toCsv(part));
      // A row whose key is stored already is left out, not an error (a Space row: the older is the first writer).
      copies.push(copyFrom(part, file));
    }
    this.#stats.stageMs += performance.now() - t0;
    const tables = parts.map((p) => p.table);
    this.#fault('before-commit', tables);
    if (this.#identRows !== null) this.#identRows += parts.find((p) => p.table === IDENT.table)?.count ?? 0;
    const [only] = copies;
    if (copies.length === 1 && only !== undefined) {
      // One statement is its own transaction: atomic and durable on return, without the two extra round
      // trips of BEGIN and COMMIT (BEGIN alone took 4-36 ms on a loaded machine).
      await this.#run(this.#writer, only);
    } else {
      await this.#inTransaction(async () => {
        for (const copy of copies) await this.#run(this.#writer, copy);
      }, true);
    }
    this.#fault('after-commit', tables);
  }

  /**
   * `body` in one write transaction. With `beside`, lookups by id run on the reader connection while the
   * body's statements run (a copy of a large journal takes seconds, and a write's lookup waited for all of
   * it); they are let finish, and no new one starts, before the COMMIT, whose checkpoint would otherwise
   * wait for their read transactions while holding the lock they need to end.
   */
  async #inTransaction(body: () => Promise<void>, beside = false): Promise<void> {
    await this.#run(this.#writer, 'BEGIN TRANSACTION');
    try {
      if (beside) this.#openBeside();
      try {
        await body();
        await this.#beforeCopyCommit?.();
      } finally {
        if (beside) await this.#closeBeside();
      }
      await this.#run(this.#writer, 'COMMIT');
    } catch (error) {
      // Kuzu has already rolled back a transaction whose statement failed; a ROLLBACK then reports
      // "no active transaction", which is the state we want.
      try {
        await this.#run(this.#writer, 'ROLLBACK');
      } catch {
        /* already rolled back */
      }
      throw error;
    }
  }

  /**
   * Rows of one table that `where` admits, in commit order. Read back through `COPY (…) TO` a CSV file
   * that is parsed here: the Node binding's result objects cost ~0.2 ms a row (a 30,000-row tenant took
   * 5.4-8.5 s), the engine's own CSV writer 0.3 s for the same rows. The file holds exactly the encoding
   * COPY FROM reads (text cells JSON-encoded, so one record per line).
   */
  async #select<R, T = R>(
    spec: TableSpec<R>,
    where: string,
    decode: (row: Record<string, unknown>) => T,
    limit?: number,
    orderBy: string = spec === BATCH ? 'captured_at' : 'seq',
    path = '',
    lead?: { expr: string; name: string },
  ): Promise<T[]> {
    const file = join(this.#stage, `out-${++this.#copyOuts}.csv`);
    const names = spec.columns.map((c) => `x.${c.name}`);
    const order = `ORDER BY x.${orderBy}${limit === undefined ? '' : ` LIMIT ${limit}`}`;
    // A leading text cell read beside the row's columns (which space held it, in a load of several).
    const columns: readonly Column<R>[] = lead ? [text<R>(lead.name, () => null), ...spec.columns] : spec.columns;
    if (lead) names.unshift(lead.expr);
    try {
      await this.#run(
        this.#reader,
        `COPY (MATCH ${path}(x:${spec.table}) ${where} RETURN ${names.join(', ')} ${order}) TO '${file}' (header=false)`,
      );
      return parseCsvRows(readFileSync(file, 'utf8'), columns, decode);
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** Every row whose filter `where` (on `x`) admits, table by table, in commit order. */
  #load(where: string): Promise<LoadedLedger> {
    const d = DECODE;
    return this.#read(async () => ({
      batches: await this.#select(BATCH, where, d.batch),
      nodes: await this.#select(NODE, where, d.node),
      edges: await this.#select(EDGE, where, d.edge),
      declarations: await this.#select(DECLARATION, where, d.declaration),
      verdicts: await this.#select(VERDICT, where, d.verdict),
      invalidations: await this.#select(INVALIDATION, where, d.invalidation),
      spaces: [],
      invalidationSpaces: [],
    }));
  }

  async loadAll(): Promise<LoadedLedger> {
    return this.#load('');
  }

  /** One tenant's rows: what a tenant's read model is built from when it is first used. */
  async loadTenant(tenant: string): Promise<LoadedLedger> {
    // Text columns hold JSON-encoded strings (see the top of this file), so the tenant is compared encoded.
    // A literal, not a parameter: the prepared form took 2.5-4x as long here (530-900 ms against 210 ms
    // for a 3,000-row tenant among 30,000 rows), and the tenant comes from the key map, escaped below.
    return this.#load(`WHERE x.tenant = ${cypherString(JSON.stringify(tenant))}`);
  }

  /**
   * The rows one space of a tenant holds: its node and edge rows, and the invalidations of its nodes
   * (whatever space they were written in), each table read through the space's Holds relationship (a
   * primary-key lookup of the TenantSpace row, then its adjacency list), never by a scan.
   */
  async loadSpace(tenant: string, space: string): Promise<SpaceRows> {
    return (await this.loadSpaces(tenant, [space])).get(space)!;
  }

  /**
   * loadSpace for several spaces of a tenant at once: one query per table for up to LOAD_SPACES_PER_QUERY
   * spaces, each row read with the space holding it (an invalidation once per space holding it) and split
   * into that space's rows, which come out as loadSpace gives them (each table in seq order).
   */
  loadSpaces(tenant: string, spaces: readonly string[]): Promise<Map<string, SpaceRows>> {
    return this.#spaceTurns.load(tenant, [...new Set(spaces)]);
  }

  /** The rows of a tenant's `names` (distinct), in one turn of reads: see loadSpaces. */
  async #readSpaces(tenant: string, names: readonly string[]): Promise<Map<string, SpaceRows>> {
    const via = (rel: { table: string }): string => `(s:${TENANT_SPACE.table})-[:${rel.table}]->`;
    const lit = (space: string): string => cypherString(JSON.stringify(identKey(tenant, space)));
    const d = DECODE;
    const lead = { expr: 's.space', name: HELD_BY };
    const heldBy =
      <R>(decode: (r: Record<string, unknown>) => R) =>
      (r: Record<string, unknown>): { space: string; row: R } => ({ space: str(r, HELD_BY), row: decode(r) });
    // The engine's rows, then the journal's from memory: the journal is not copied in first (a copy after a
    // write costs ~0.1-1 s, and a write into a cold space loads that space). Beside a copy's statements
    // (see #besideCopy), never across its commit: the copy has landed and released its records, or its
    // rows are all still in the journal. In the writer's turn, a load waited for the copy in progress and
    // the one queued after it: under a steady import into a 300k-row store, a cold user's first read took
    // ~1-1.4 s.
    await this.#beforeSpacesLoad?.(names);
    const out = new Map(
      names.map((s) => [s, { nodes: [] as NodeVersion[], edges: [] as EdgeRecord[], invalidations: new Map<number, Invalidation>() }]),
    );
    for (let at = 0; at < names.length; at += LOAD_SPACES_PER_QUERY) {
      const part = names.slice(at, at + LOAD_SPACES_PER_QUERY);
      const where = part.length === 1 ? `WHERE s.key = ${lit(part[0]!)}` : `WHERE s.key IN [${part.map(lit).join(', ')}]`;
      for (const n of await this.#select(NODE, where, heldBy(d.node), undefined, undefined, via(HOLDS_BLOCK), lead))
        out.get(n.space)?.nodes.push(n.row);
      for (const e of await this.#select(EDGE, where, heldBy(d.edge), undefined, undefined, via(HOLDS_EDGE), lead))
        out.get(e.space)?.edges.push(e.row);
      for (const i of await this.#select(INVALIDATION, where, heldBy(d.invalidation), undefined, undefined, via(HOLDS_INVALIDATION), lead))
        out.get(i.space)?.invalidations.set(i.row.seq, i.row);
    }
    const journaled = journalRowsOfSpaces(this.#journal.records(), tenant, names);
    for (const [space, j] of journaled) for (const i of j.invalidations) out.get(space)!.invalidations.set(i.seq, i);
    // Held through a journaled Holds row, stored earlier: read by primary key, all in one query.
    const missing = new Set<number>();
    for (const [space, j] of journaled)
      for (const seq of j.heldSeqs) if (!out.get(space)!.invalidations.has(seq)) missing.add(Math.trunc(seq));
    if (missing.size > 0) {
      const where = missing.size === 1 ? `WHERE x.seq = ${[...missing][0]}` : `WHERE x.seq IN [${[...missing].join(', ')}]`;
      const found = new Map((await this.#select(INVALIDATION, where, d.invalidation)).map((i) => [i.seq, i]));
      for (const [space, j] of journaled)
        for (const seq of j.heldSeqs) {
          const own = out.get(space)!.invalidations;
          const i = found.get(seq);
          // Shared by the spaces holding it, as a committed group's rows are (ResidentViews.apply): never mutated.
          if (i && !own.has(seq)) own.set(seq, i);
        }
    }
    const bySeq = <R extends { seq: number }>(rows: R[]): R[] => rows.sort((a, b) => a.seq - b.seq);
    return new Map(
      names.map((space) => {
        const stored = out.get(space)!;
        const j = journaled.get(space)!;
        return [
          space,
          {
            nodes: bySeq([...stored.nodes, ...j.nodes]),
            edges: bySeq([...stored.edges, ...j.edges]),
            invalidations: bySeq([...stored.invalidations.values()]),
          },
        ];
      }),
    );
  }

  /** A tenant's rows that are not any one space's: batches, declarations and verdicts (a scan of small tables). */
  loadTenantWide(tenant: string): Promise<Pick<LoadedLedger, 'batches' | 'declarations' | 'verdicts'>> {
    const where = `WHERE x.tenant = ${cypherString(JSON.stringify(tenant))}`;
    const d = DECODE;
    return this.#read(async () => ({
      batches: await this.#select(BATCH, where, d.batch),
      declarations: await this.#select(DECLARATION, where, d.declaration),
      verdicts: await this.#select(VERDICT, where, d.verdict),
    }));
  }

  /**
   * The tenant's entity versions, SUPERSEDES edges and invalidations, and the latest known_at of its
   * nodes and edges: scans of the tables' columns in the engine, only the rows kept decoded here (a search
   * across spaces reads these instead of loading the tenant).
   */
  tenantLists(
    tenant: string,
  ): Promise<{ entities: NodeVersion[]; supersedes: EdgeRecord[]; invalidations: Invalidation[]; latestBlockKnownAt: number }> {
    const lit = (text: string): string => cypherString(JSON.stringify(text));
    const of = `WHERE x.tenant = ${lit(tenant)}`;
    const d = DECODE;
    return this.#read(async () => {
      let latest = Number.NEGATIVE_INFINITY;
      for (const table of [NODE.table, EDGE.table]) {
        const [row] = await this.#run(this.#reader, `MATCH (x:${table}) ${of} RETURN max(x.known_at) AS hi`);
        if (row?.hi !== null && row?.hi !== undefined) latest = Math.max(latest, decodeInt(row.hi));
      }
      return {
        entities: await this.#select(NODE, `${of} AND x.kind = ${lit('entity')}`, d.node),
        supersedes: await this.#select(EDGE, `${of} AND x.edge_type = ${lit('SUPERSEDES')}`, d.edge),
        invalidations: await this.#select(INVALIDATION, of, d.invalidation),
        latestBlockKnownAt: latest,
      };
    });
  }

  /**
   * One tenant's rows with `after` < tseq <= `upTo`, at most `limit` of each table, each in tseq order: a
   * page of a tenant copy, read from the engine (the tenant's read model is not loaded for it).
   */
  tenantRows(tenant: string, after: number, upTo: number, limit: number): Promise<CommitGroup> {
    const where =
      `WHERE x.tenant = ${cypherString(JSON.stringify(tenant))} AND x.tseq > ${Math.trunc(after)}` +
      (Number.isFinite(upTo) ? ` AND x.tseq <= ${Math.trunc(upTo)}` : '');
    const d = DECODE;
    const n = Math.max(1, Math.trunc(limit));
    return this.#read(async () => ({
      batches: await this.#select(BATCH, where, d.batch, n, 'tseq'),
      nodes: await this.#select(NODE, where, d.node, n, 'tseq'),
      edges: await this.#select(EDGE, where, d.edge, n, 'tseq'),
      declarations: await this.#select(DECLARATION, where, d.declaration, n, 'tseq'),
      verdicts: await this.#select(VERDICT, where, d.verdict, n, 'tseq'),
      invalidations: await this.#select(INVALIDATION, where, d.invalidation, n, 'tseq'),
      spaces: await this.#select(SPACE, where, d.space, n, 'tseq'),
      invalidationSpaces: [],
    }));
  }

  /**
   * The tenant's stored invalidations of these ids. With spacesOfIds, what a tenant copy needs to place
   * imported invalidations in the index by space (see Ledger.importRows): scans of the Invalidation and
   * Block tables (the only index is the primary key's), in lists of ID_LIST ids.
   */
  invalidationsOfIds(tenant: string, ids: readonly string[]): Promise<Invalidation[]> {
    const lit = cypherString(JSON.stringify(tenant));
    return this.#read(async () => {
      const out: Invalidation[] = [];
      for (const list of idLists(ids))
        for (const r of await this.#select(INVALIDATION, `WHERE x.tenant = ${lit} AND x.target_id IN [${list}]`, DECODE.invalidation))
          out.push(r);
      return out;
    });
  }

  /** The spaces holding the invalidations of each of these ids of the tenant: a stored version of it, or an edge touching it. */
  spacesOfIds(tenant: string, ids: readonly string[]): Promise<Map<string, Set<string>>> {
    const lit = cypherString(JSON.stringify(tenant));
    const wanted = new Set(ids);
    return this.#read(async () => {
      const out = new Map<string, Set<string>>();
      const add = (id: string, space: string): void => {
        if (!wanted.has(id)) return;
        let set = out.get(id);
        if (!set) out.set(id, (set = new Set()));
        set.add(space);
      };
      for (const list of idLists(ids)) {
        for (const r of await this.#run(
          this.#reader,
          `MATCH (x:${NODE.table}) WHERE x.tenant = ${lit} AND x.id IN [${list}] RETURN DISTINCT x.id AS id, x.space AS space`,
        ))
          add(decodeText(r.id) ?? '', decodeText(r.space) ?? '');
        for (const r of await this.#run(
          this.#reader,
          `MATCH (x:${EDGE.table}) WHERE x.tenant = ${lit} AND (x.source_id IN [${list}] OR x.target_id IN [${list}]) ` +
            `RETURN DISTINCT x.source_id AS s, x.target_id AS t, x.space AS space`,
        )) {
          const space = decodeText(r.space) ?? '';
          add(decodeText(r.s) ?? '', space);
          add(decodeText(r.t) ?? '', space);
        }
      }
      return out;
    });
  }

  /**
   * The spaces holding each of these ids of the tenant (a version of it, or an edge touching it), from the
   * Ident index: one primary-key lookup per id, up to IDENT_LOOKUPS_MAX ids or from IDENT_SCAN_ROWS_MAX rows, plus the pairs of the journal's records, read from memory, so the journal is not
   * copied in first. Beside a copy's statements (see #besideCopy): the engine's committed rows and the journal's
   * records (released only after the copy commits) hold every stored pair whether or not it lands meanwhile.
   */
  spacesHolding(tenant: string, ids: readonly string[]): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    const add = (id: string, space: string): void => {
      let set = out.get(id);
      if (!set) out.set(id, (set = new Set()));
      set.add(space);
    };
    // Journal cells are the text itself; the engine stores it JSON-encoded (see csvCell).
    const wanted = new Map([...new Set(ids)].map((id) => [identKey(tenant, id), id]));
    const spacePrefix = identKey(tenant, '').length;
    const found = (async () => {
      if (wanted.size > IDENT_LOOKUPS_MAX && this.#identRows === null)
        await this.#besideCopy(async () => {
          this.#identRows ??= decodeInt((await this.#run(this.#reader, `MATCH (i:${IDENT.table}) RETURN count(*) AS n`))[0]?.n);
        });
      const keys = [...wanted.keys()];
      if (wanted.size > IDENT_LOOKUPS_MAX && (this.#identRows ?? 0) < this.#identScanRowsMax) {
        await this.#besideCopy(async () => {
          for (const list of idLists(keys)) {
            this.#identLookups++;
            for (const r of await this.#run(this.#reader, `${IDENT_PATH} WHERE i.key IN [${list}] RETURN i.key AS k, s.space AS space`)) {
              const id = wanted.get(decodeText(r.k) ?? '');
              if (id !== undefined) add(id, decodeText(r.space) ?? '');
            }
          }
          // Read in the same turn as the engine: a copy landing between two turns releases the records whose rows it stored.
          this.#journaledIdents(new Set(wanted.keys()), (key, spaceKey) => add(wanted.get(key)!, spaceKey.slice(spacePrefix)));
        });
        return out;
      }
      // One lookup per id, in turns shared with other callers (ident-turns.ts), IDENT_LOOKUPS_PER_TURN
      // ids at a time: a search index catching up looks up 8,192 ids at once (~12 s at 1.5 ms each), and a
      // cold user's load waited behind all of them in one turn.
      for (let at = 0; at < keys.length; at += IDENT_LOOKUPS_PER_TURN) {
        const slice = keys.slice(at, at + IDENT_LOOKUPS_PER_TURN);
        const spaces = await this.#identTurns.spaces(tenant, slice);
        for (const key of slice) for (const space of spaces.get(key) ?? []) add(wanted.get(key)!, space);
      }
      return out;
    })();
    const after = this.#afterLookup;
    return after ? found.then(async (answer) => (await after(), answer)) : found;
  }

  /** The journal's IdentIn pairs among `keys`: each key with its TenantSpace key (journal cells are the text itself). */
  #journaledIdents(keys: ReadonlySet<string>, pair: (key: string, spaceKey: string) => void): void {
    for (const record of this.#journal.records())
      for (const t of record.tables)
        if (t.table === IDENT_IN.table)
          for (const row of t.rows) {
            const key = String(row[0]);
            if (keys.has(key)) pair(key, String(row[1]));
          }
  }

  /**
   * The spaces the engine's committed rows place each of these Ident keys in: one primary-key lookup per
   * key, all in one prepared query (UNION ALL), so a turn waits for the event loop once. Prepared for 1, 2,
   * 4, 8 and 16 keys, the last key repeated to fill one: 16 keys cost ~14 ms in one query against ~35 ms
   * in 16 (300k ids, quiet).
   */
  async #storedSpacesOf(keys: readonly string[]): Promise<Map<string, string[]>> {
    const out = new Map<string, string[]>();
    if (keys.length === 0) return out;
    if (this.#engineClosed) throw new Error('graph store is closed');
    const size = 2 ** Math.ceil(Math.log2(keys.length));
    let prepared = this.#identStatements.get(size);
    if (!prepared) {
      const branches = Array.from({ length: size }, (_, j) => `${IDENT_PATH} WHERE i.key = $k${j} RETURN i.key AS k, s.space AS space`);
      prepared = this.#lookups.prepare(branches.join(' UNION ALL '));
      this.#identStatements.set(size, prepared);
    }
    let statement: PreparedStatement;
    try {
      statement = await prepared;
      if (!statement.isSuccess()) throw new Error(`the Ident lookup did not prepare: ${statement.getErrorMessage()}`);
    } catch (error) {
      this.#identStatements.delete(size);
      throw error;
    }
    // The engine stores text JSON-encoded (see csvCell).
    const params = Object.fromEntries(
      Array.from({ length: size }, (_, j) => [`k${j}`, JSON.stringify(keys[Math.min(j, keys.length - 1)])]),
    );
    const result = await this.#lookups.execute(statement, params);
    const results = Array.isArray(result) ? result : [result];
    try {
      // Read at once: a finished query's rows are already materialized, and an awaited read would wait
      // for the event loop a second time.
      for (const r of results[results.length - 1]?.getAllSync() ?? []) {
        const key = decodeText(r.k) ?? '';
        let spaces = out.get(key);
        if (!spaces) out.set(key, (spaces = []));
        spaces.push(decodeText(r.space) ?? '');
      }
      return out;
    } finally {
      closeResults(results);
    }
  }

  /**
   * The spaces holding a node version of the tenant carrying each of these fact keys: a scan of the Block
   * table's tenant and fact_key columns (no index orders them; ~ms per 30k rows), then the journal's node
   * rows from memory. Apart from copies, as tenantNodePage reads: a copy has landed and released its
   * records, or its rows are still held.
   */
  spacesWithFacts(tenant: string, factKeys: readonly string[]): Promise<Map<string, Set<string>>> {
    const lit = (text: string): string => cypherString(JSON.stringify(text));
    const wanted = new Set(factKeys);
    const out = new Map<string, Set<string>>();
    const add = (fact: string, space: string): void => {
      let set = out.get(fact);
      if (!set) out.set(fact, (set = new Set()));
      set.add(space);
    };
    if (wanted.size === 0) return Promise.resolve(out);
    const ti = NODE.columns.findIndex((c) => c.name === 'tenant');
    const fi = NODE.columns.findIndex((c) => c.name === 'fact_key');
    const si = NODE.columns.findIndex((c) => c.name === 'space');
    return this.#exclusive(async () => {
      const list = [...wanted].map(lit).join(', ');
      for (const r of await this.#run(
        this.#reader,
        `MATCH (x:${NODE.table}) WHERE x.tenant = ${lit(tenant)} AND x.fact_key IN [${list}] ` +
          `RETURN DISTINCT x.fact_key AS f, x.space AS space`,
      ))
        add(decodeText(r.f) ?? '', decodeText(r.space) ?? '');
      // Journal cells are the text itself; the engine stores it JSON-encoded (see csvCell).
      for (const record of this.#journal.records())
        for (const t of record.tables)
          if (t.table === NODE.table)
            for (const cells of t.rows) {
              const fact = cells[fi];
              if (cells[ti] === tenant && typeof fact === 'string' && wanted.has(fact)) add(fact, String(cells[si]));
            }
      return out;
    });
  }

  /**
   * Every id of the tenant in the Ident index and every space in its TenantSpace rows, after the journal
   * is copied in: how many first, then each one. A scan of both tables, made once per tenant when its
   * writes' filter of held ids is first built (storage/log/held-keys.ts), never at start-up.
   */
  async tenantKeys(tenant: string, sink: { count(keys: number): void; id(id: string): void; space(space: string): void }): Promise<void> {
    const lit = cypherString(JSON.stringify(tenant));
    const prefix = identKey(tenant, '').length;
    await this.#scanOut(
      [`MATCH (x:${IDENT.table}) WHERE x.tenant = ${lit}`, `MATCH (x:${TENANT_SPACE.table}) WHERE x.tenant = ${lit}`],
      ['x.key', 'x.space'],
      (counts) => sink.count(counts[0]! + counts[1]!),
      async ([ids, spaces]) => {
        await this.#parseOut(ids!, 1, (cells) => sink.id(cells[0]!.slice(prefix)));
        await this.#parseOut(spaces!, 1, (cells) => sink.space(cells[0]!));
      },
    );
  }

  /**
   * The pairs of the Ident index, the tenant's id and a space holding it each, read as tenantKeys reads
   * keys: once per tenant, when its reads by id have spent long enough asking the store where ids are
   * (storage/log/id-places.ts).
   */
  async tenantPlacements(tenant: string, sink: { count(pairs: number): void; pair(id: string, space: string): void }): Promise<void> {
    const lit = cypherString(JSON.stringify(tenant));
    const prefix = identKey(tenant, '').length;
    await this.#scanOut(
      [`${IDENT_PATH} WHERE i.tenant = ${lit}`],
      ['i.key, s.space'],
      (counts) => sink.count(counts[0]!),
      ([pairs]) => this.#parseOut(pairs!, 2, (cells) => sink.pair(cells[0]!.slice(prefix), cells[1]!)),
    );
  }

  /**
   * For each `MATCH … WHERE …` of `matches`, its count of rows (handed to `count`) and a file of the
   * `returns` columns of its rows (`COPY (…) TO`), made in one turn after the journal is copied in; the
   * files are then handed to `parse` (#parseOut) outside that turn, and removed after it whatever happens.
   * Lookups by id run beside the scan (nothing commits while it holds the writer's turn), so a write's
   * lookup does not wait for a scan of a large tenant; and the turn is held only while Kuzu writes the
   * files, not while they are parsed (commits used to wait for both).
   */
  async #scanOut(
    matches: readonly string[],
    returns: readonly string[],
    count: (counts: number[]) => void,
    parse: (files: readonly string[]) => Promise<void>,
  ): Promise<void> {
    const files: string[] = [];
    try {
      await this.#read(async () => {
        this.#openBeside();
        try {
          const counts: number[] = [];
          for (const match of matches) counts.push(decodeInt((await this.#run(this.#scanner, `${match} RETURN count(*) AS n`))[0]?.n ?? 0));
          count(counts);
          for (const [k, match] of matches.entries()) {
            const file = join(this.#stage, `out-${++this.#copyOuts}.csv`);
            files.push(file);
            await this.#run(this.#scanner, `COPY (${match} RETURN ${returns[k]}) TO '${file}' (header=false)`);
          }
        } finally {
          await this.#closeBeside();
        }
      });
      await parse(files);
    } finally {
      for (const file of files) rmSync(file, { force: true });
    }
  }

  /**
   * Each row of a file of `width` text columns (#scanOut), its cells decoded (a row with a null cell
   * skipped), read in chunks of whole lines with a turn of the event loop between chunks. `each` gets one
   * array refilled for every row.
   */
  async #parseOut(file: string, width: number, each: (cells: readonly string[]) => void): Promise<void> {
    const names = Array.from({ length: width }, (_, c) => `v${c}`);
    const column: Pick<Column<unknown>, 'name' | 'type'>[] = names.map((name) => ({ name, type: 'text' }));
    const cells: string[] = [];
    const decode = (row: Readonly<Record<string, unknown>>): void => {
      for (let c = 0; c < width; c++) {
        const text = decodeText(row[names[c]!]);
        if (text === null) return;
        cells[c] = text;
      }
      each(cells);
    };
    const fd = openSync(file, 'r');
    try {
      const chunk = Buffer.alloc(SCAN_CHUNK_BYTES);
      // A character cut by a chunk's end is held back until the next chunk completes it.
      const utf8 = new StringDecoder('utf8');
      let carry = '';
      for (;;) {
        const n = readSync(fd, chunk, 0, chunk.length, null);
        if (n === 0) break;
        // Text cells are JSON-encoded, so a record is one line: cut at the last line end, keep the rest.
        const text = carry + utf8.write(chunk.subarray(0, n));
        const end = text.lastIndexOf('\n') + 1;
        if (end > 0) parseCsvRows(text.slice(0, end), column, decode);
        carry = text.slice(end);
        await loopTurn();
      }
      if (carry !== '') parseCsvRows(`${carry}\n`, column, decode);
    } finally {
      closeSync(fd);
    }
  }

  /** Primary-key lookups of the Ident index made so far (tests count them). */
  identLookups(): number {
    return this.#identLookups + this.#identTurns.lookups;
  }

  /** Turns of single-id lookups run so far, shared by the callers asking at once (tests count them). */
  identLookupTurns(): number {
    return this.#identTurns.turns;
  }

  /** The shared turns of lookups by id and of space loads so far (the load bench prints them). */
  readTurnStats(): ReadTurnStats {
    return { idents: this.#identTurns.stats(), spaces: this.#spaceTurns.stats() };
  }

  /** Turns of space loads run so far, shared by the callers asking at once (tests count them). */
  spaceLoadTurns(): number {
    return this.#spaceTurns.turns;
  }

  /** The tenant's highest tseq (0 when it has no row). */
  tenantLastTseq(tenant: string): Promise<number> {
    return this.#read(async () => {
      let top = 0;
      for (const { table } of ROW_TABLES) {
        const [row] = await this.#run(
          this.#reader,
          `MATCH (x:${table}) WHERE x.tenant = ${cypherString(JSON.stringify(tenant))} RETURN max(x.tseq) AS ts`,
        );
        if (row?.ts !== null && row?.ts !== undefined) top = Math.max(top, decodeInt(row.ts));
      }
      return top;
    });
  }

  /** The stored Space rows of these spaces, whoever wrote them first. */
  spaceRows(names: readonly string[], engineOnly = false): Promise<SpaceRow[]> {
    if (names.length === 0) return Promise.resolve([]);
    const list = names.map((n) => cypherString(JSON.stringify(n))).join(', ');
    const select = () => this.#select(SPACE, `WHERE x.name IN [${list}]`, DECODE.space, undefined, 'name');
    // Apart from copies, as spaceWriter reads: a read beside a copy's commit stalls both (see #read).
    return engineOnly ? this.#exclusive(select) : this.#read(select);
  }

  /**
   * Deletes at most about `maxRows` rows of `tenant` in one transaction, after the journal is copied in
   * (so no journaled row of the tenant is copied in later); returns the rows deleted per table of the
   * ledger (the index by space is not counted) and whether none is left. One call at 136k rows in one
   * transaction ran for minutes inside the writer's turn (docs/cluster.md); a part stays bounded, and the
   * caller lets other commits in between parts. First each space's rows through its Holds relationships
   * (a walk from the TenantSpace key, no table scan), each space's TenantSpace row once it holds nothing;
   * then what no space holds (batches, declarations, verdicts, Space rows, and any row a space does not
   * hold), a scan of each table. Any prefix of parts leaves a store a later part can finish.
   */
  deleteTenantPart(tenant: string, maxRows: number): Promise<{ deleted: Record<string, number>; done: boolean }> {
    const lit = cypherString(JSON.stringify(tenant));
    const budget = Math.max(1, Math.trunc(maxRows));
    return this.#read(async () => {
      const deleted: Record<string, number> = Object.fromEntries(ROW_TABLES.map((t) => [t.table, 0]));
      let left = budget;
      const count = (rows: Record<string, unknown>[]): number => decodeInt(rows[0]?.n ?? 0);
      await this.#inTransaction(async () => {
        let spaces = true;
        while (spaces && left > 0) {
          const keys = (
            await this.#run(this.#writer, `MATCH (s:${TENANT_SPACE.table}) WHERE s.tenant = ${lit} RETURN s.key AS k LIMIT 64`)
          ).map((r) => cypherString(String(r.k)));
          spaces = keys.length > 0;
          for (const key of keys) {
            if (left <= 0) break;
            for (const rel of HOLDS) {
              if (left <= 0) break;
              // DETACH: the row's Holds relationships from other spaces go with it (an invalidation is held by several).
              const n = count(
                await this.#run(
                  this.#writer,
                  `MATCH (s:${TENANT_SPACE.table})-[:${rel.table}]->(x:${rel.to}) WHERE s.key = ${key} AND x.tenant = ${lit} ` +
                    `WITH DISTINCT x LIMIT ${left} DETACH DELETE x RETURN count(*) AS n`,
                ),
              );
              deleted[rel.to] = (deleted[rel.to] ?? 0) + n;
              left -= n;
            }
            if (left > 0) await this.#run(this.#writer, `MATCH (s:${TENANT_SPACE.table}) WHERE s.key = ${key} DETACH DELETE s`);
          }
        }
        // The index by id (not a ledger table, so not counted): its IdentIn relationships went with the
        // TenantSpace rows above or go with their Ident rows here.
        if (left > 0)
          left -= count(
            await this.#run(
              this.#writer,
              `MATCH (x:${IDENT.table}) WHERE x.tenant = ${lit} WITH x LIMIT ${left} DETACH DELETE x RETURN count(*) AS n`,
            ),
          );
        for (const { table } of ROW_TABLES) {
          if (left <= 0) break;
          const detach = HOLDS.some((h) => h.to === table) ? 'DETACH ' : '';
          const n = count(
            await this.#run(
              this.#writer,
              `MATCH (x:${table}) WHERE x.tenant = ${lit} WITH x LIMIT ${left} ${detach}DELETE x RETURN count(*) AS n`,
            ),
          );
          deleted[table] = (deleted[table] ?? 0) + n;
          left -= n;
        }
      });
      // Into the data file before the drop can be counted done: a WAL the engine crashes on is set aside on
      // open (./store-repair.ts), and deletions only in it would bring the tenant's rows back.
      await this.#run(this.#writer, 'CHECKPOINT');
      // Its TenantSpace rows may be gone: a later write of the tenant (a copy back) writes them again.
      const prefix = identKey(tenant, '');
      for (const key of this.#storedSpaces) if (key.startsWith(prefix)) this.#storedSpaces.delete(key);
      for (const key of this.#storedIdents) if (key.startsWith(prefix)) this.#storedIdents.delete(key);
      this.#identRows = null; // counted again when next needed
      this.#storedRows = null; // counted again by the next copy
      this.#fault(
        'after-delete-part',
        Object.keys(deleted).filter((t) => (deleted[t] ?? 0) > 0),
      );
      // Every step found fewer rows than it could take: nothing of the tenant is left.
      return { deleted, done: left > 0 };
    });
  }

  /** Node rows above `seq`, every tenant: what a search index that stopped there still has to index. */
  nodesBetween(after: number, upTo: number, limit: number): Promise<NodeVersion[]> {
    const where = `WHERE x.seq > ${Math.trunc(after)} AND x.seq <= ${Math.trunc(upTo)}`;
    return this.#read(() => this.#select(NODE, where, DECODE.node, Math.max(1, Math.trunc(limit))));
  }

  /**
   * The latest capture instant, sequence number and per-tenant sequence number written (the last two
   * differ once rows were imported from another server), for the clock and the sequence on open.
   */
  lastWritten(): Promise<LastWritten> {
    return this.#read(() => this.#lastWritten());
  }

  async #lastWritten(): Promise<LastWritten> {
    const { last, floors } = await lastWritten(async (statement) => {
      const [row] = await this.#run(this.#reader, statement);
      return row?.m === null || row?.m === undefined ? null : decodeInt(row.m);
    }, this.#floors);
    const changed = JSON.stringify(floors) !== JSON.stringify(this.#floors);
    this.#floors = floors;
    if (changed)
      try {
        saveFloors(this.#dir, floors);
      } catch (error) {
        // Only slower: the next open reads the columns whole.
        console.error(`graph store: ${LAST_WRITTEN_FILE} not saved:`, error);
      }
    return last;
  }

  /**
   * The first tenant to write `space`, or null. Read without copying the journal in: the ledger knows the
   * spaces it staged Space rows for since the store opened (they may be in the journal), and the journal
   * left by an earlier process was copied in on open.
   */
  spaceWriter(space: string): Promise<string | null> {
    return this.#exclusive(async () => {
      const [row] = await this.#run(
        this.#reader,
        `MATCH (x:Space) WHERE x.name = ${cypherString(JSON.stringify(space))} RETURN x.tenant AS tenant`,
      );
      return row ? decodeText(row.tenant) : null;
    });
  }

  counts(): Promise<Record<string, number>> {
    return this.#read(async () => {
      const out: Record<string, number> = {};
      for (const { table } of TABLES) {
        const pattern = isRel(table) ? `()-[x:${table}]->()` : `(x:${table})`;
        const [row] = await this.#run(this.#reader, `MATCH ${pattern} RETURN count(*) AS n`);
        out[table] = decodeInt(row?.n);
      }
      return out;
    });
  }

  /**
   * An aggregation over the tenant's Block and Edge rows in the engine (a scan of the two tables' columns,
   * no row decoded in JavaScript): what a whole tenant's `list_spaces` answers without loading its rows.
   */
  spaceCounts(tenant: string, asOf: number): Promise<SpaceCounts[]> {
    const where = `WHERE x.tenant = ${cypherString(JSON.stringify(tenant))} AND x.known_at <= ${Math.trunc(asOf)}`;
    return this.#read(async () => {
      const bySpace = new Map<string, SpaceCounts>();
      for (const [table, kind] of [
        [NODE.table, 'nodes'],
        [EDGE.table, 'edges'],
      ] as const) {
        const rows = await this.#run(
          this.#reader,
          `MATCH (x:${table}) ${where} RETURN x.space AS space, count(*) AS n, min(x.known_at) AS lo, max(x.known_at) AS hi`,
        );
        for (const r of rows) {
          const space = str(r, 'space');
          let c = bySpace.get(space);
          if (!c) bySpace.set(space, (c = { space, nodes: 0, edges: 0, firstKnownAt: Number.POSITIVE_INFINITY, lastKnownAt: 0 }));
          c[kind] = i64(r, 'n');
          c.firstKnownAt = Math.min(c.firstKnownAt, i64(r, 'lo'));
          c.lastKnownAt = Math.max(c.lastKnownAt, i64(r, 'hi'));
        }
      }
      return [...bySpace.values()];
    });
  }

  /**
   * A page of the tenant's node rows with tseq above `q.after`, in tseq order, that the filters admit: a
   * scan of the Block table's columns with a top-k sort in the engine (no index orders a tenant's rows),
   * then the journal's rows of the tenant from memory, merged; at most `q.limit` rows decoded. Apart from
   * copies, as loadSpace reads: a copy has landed and released its records, or its rows are still held.
   */
  tenantNodePage(tenant: string, q: NodePageQuery): Promise<NodeVersion[]> {
    const lit = (text: string): string => cypherString(JSON.stringify(text));
    const where = `WHERE x.tenant = ${lit(tenant)} AND x.tseq > ${Math.trunc(q.after)}${nodeFilterCypher(q, lit)}`;
    const n = Math.max(1, Math.trunc(q.limit));
    return this.#exclusive(async () => {
      const rows = await this.#select(NODE, where, DECODE.node, n, 'tseq');
      const seqs = new Set(rows.map((r) => r.seq));
      const ti = NODE.columns.findIndex((c) => c.name === 'tenant');
      for (const record of this.#journal.records())
        for (const t of record.tables)
          if (t.table === NODE.table)
            for (const cells of t.rows) {
              if (cells[ti] !== tenant) continue;
              const row = DECODE.node(asRead(NODE, cells));
              if (nodeMatches(row, q) && !seqs.has(row.seq)) {
                seqs.add(row.seq);
                rows.push(row);
              }
            }
      return rows.sort((a, b) => a.tseq - b.tseq).slice(0, n);
    });
  }

  /**
   * What a whole tenant's list at a past as_of reports besides its page, counted in the engine after the
   * journal is copied in (one scan of each table's columns, and a hash join of the invalidated ids with the
   * tenant's Block rows, in the engine's buffer pool): nothing is decoded in JavaScript, so memory stays
   * flat whatever the tenant holds, while the time grows with it.
   */
  listCounts(tenant: string, q: ListCountsQuery): Promise<ListCounts> {
    const lit = (text: string): string => cypherString(JSON.stringify(text));
    const of = `WHERE x.tenant = ${lit(tenant)}`;
    const a = Math.trunc(q.asOf);
    const hiddenNode = `x.known_at > ${a}${nodeFilterCypher({ kind: q.kind, category: q.category, validAt: q.validAt }, lit)}`;
    const hiddenEdge = `x.known_at > ${a}${edgeInForceCypher(q.validAt)}`;
    const num = (v: unknown): number => (v === null || v === undefined ? 0 : decodeInt(v));
    return this.#read(async () => {
      let latest = Number.NEGATIVE_INFINITY;
      const masked = { node: 0, edge: 0, verdict: 0 };
      for (const [table, hidden, kind] of [
        [NODE.table, hiddenNode, 'node'],
        [EDGE.table, hiddenEdge, 'edge'],
        [VERDICT.table, `x.known_at > ${a}`, 'verdict'],
        [INVALIDATION.table, 'false', null],
      ] as const) {
        const [row] = await this.#run(
          this.#reader,
          `MATCH (x:${table}) ${of} RETURN max(x.known_at) AS hi, sum(CASE WHEN ${hidden} THEN 1 ELSE 0 END) AS n`,
        );
        if (row?.hi !== null && row?.hi !== undefined) latest = Math.max(latest, decodeInt(row.hi));
        if (kind !== null) masked[kind] = num(row?.n);
      }
      let invalidated = 0;
      if (q.countInvalidated) {
        const shown = nodeFilterCypher({ kind: q.kind, category: q.category, validAt: q.validAt, knownBy: q.asOf }, lit);
        const [row] = await this.#run(
          this.#reader,
          `MATCH (i:${INVALIDATION.table}) WHERE i.tenant = ${lit(tenant)} AND i.known_at <= ${a} WITH DISTINCT i.target_id AS id ` +
            `MATCH (x:${NODE.table}) ${of} AND x.id = id${shown} RETURN count(*) AS n`,
        );
        invalidated = num(row?.n);
      }
      return { latestKnownAt: latest, masked, invalidated };
    });
  }

  exportPage<K extends ExportTable>(tenant: string, table: K, q: ExportPageQuery): Promise<ExportRowsOf[K][]> {
    const lit = (text: string): string => cypherString(JSON.stringify(text));
    const cut = (v: string): string =>
      `${v}.tenant = ${lit(tenant)} AND ${v}.seq <= ${Math.trunc(q.upTo)} AND ${v}.known_at <= ${Math.trunc(q.knownBy)}`;
    const where = `WHERE ${cut('x')} AND x.seq > ${Math.trunc(q.after)}`;
    const n = Math.max(1, Math.trunc(q.limit));
    const page = <R>(spec: TableSpec<R>, decode: (r: Record<string, unknown>) => R, extra = '', path = ''): Promise<R[]> =>
      this.#read(() => this.#select(spec, `${where}${extra}`, decode, n, 'seq', path));
    const category = q.category === undefined ? '' : ` AND x.category = ${lit(q.category)}`;
    const rows = ((): Promise<unknown[]> => {
      switch (table) {
        case 'nodes':
          if (q.space === undefined) return page(NODE, DECODE.node, category);
          return page(
            NODE,
            DECODE.node,
            ` AND s.key = ${lit(identKey(tenant, q.space))} AND x.space = ${lit(q.space)}${category}`,
            `(s:${TENANT_SPACE.table})-[:${HOLDS_BLOCK.table}]->`,
          );
        case 'edges': {
          if (q.space === undefined) return page(EDGE, DECODE.edge);
          // The ids of the space's versions in scope are gathered in the engine (from the space's Holds
          // rows) and the tenant's edges filtered by them there: only edges joining two of them are decoded.
          const ends =
            `(s:${TENANT_SPACE.table})-[:${HOLDS_BLOCK.table}]->(a:${NODE.table}) WHERE s.key = ${lit(identKey(tenant, q.space))} ` +
            `AND ${cut('a')} AND a.space = ${lit(q.space)}${q.category === undefined ? '' : ` AND a.category = ${lit(q.category)}`} ` +
            `WITH collect(DISTINCT a.id) AS ids MATCH `;
          return page(EDGE, DECODE.edge, ' AND list_contains(ids, x.source_id) AND list_contains(ids, x.target_id)', ends);
        }
        case 'verdicts':
          return page(VERDICT, DECODE.verdict);
        case 'invalidations':
          return page(INVALIDATION, DECODE.invalidation);
      }
      throw new TypeError(`no export table ${String(table)}`);
    })();
    return rows as Promise<ExportRowsOf[K][]>;
  }

  batchesOf(tenant: string, ids: readonly string[]): Promise<BatchRow[]> {
    const lit = cypherString(JSON.stringify(tenant));
    return this.#read(async () => {
      const out: BatchRow[] = [];
      for (const list of idLists([...new Set(ids)]))
        for (const b of await this.#select(BATCH, `WHERE x.tenant = ${lit} AND x.id IN [${list}]`, DECODE.batch)) out.push(b);
      return out;
    });
  }

  declarationsOf(tenant: string): Promise<Declaration[]> {
    return this.#read(() => this.#select(DECLARATION, `WHERE x.tenant = ${cypherString(JSON.stringify(tenant))}`, DECODE.declaration));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A failed copy leaves the rows in the journal, where the next open finds them.
    const drained = await this.#drain().then(
      () => true,
      (error: unknown) => {
        console.error('write journal: copy on close failed, kept for the next open:', error);
        return false;
      },
    );
    // The next open then reads no row of the columns it takes its clock from.
    if (drained) await this.#lastWritten().catch(() => undefined);
    await this.#closeEngine();
  }
}
