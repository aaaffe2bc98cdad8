// In-memory copies of single spaces, so a search confined to one space costs what that space holds, not
// what its tenant holds. A tenant's table serves every space of an application; searched through LanceDB,
// a space's 150 rows were found by BM25 over the tenant's postings and an HNSW walk that skips the other
// spaces' rows (11 ms at 30k rows in the tenant, 177 ms at 300k). A copy holds one space's rows (read
// once through the `space` prefilter), its full text (text-mirror.ts, BM25 with the statistics of the
// space's rows known at the search's as_of, so an answer at a past as_of never changes) and its vectors
// (vector-mirror.ts, a flat scan, exact), loaded on first search, kept fresh by the index's appends, and
// dropped least recently searched first beyond a memory budget. A scope too large for its vectors to be
// held (a whole tenant, or a space past the copies' row bound) may still have its full text copied, up to
// a larger bound, so that its searches' full text replays exactly too; its vectors are then scanned where
// they are stored.
import type { Hit, RowFilter } from '../index-row.ts';
import { TenantText, type Tokenize, type TokenCache } from './text-mirror.ts';
import { TenantVectors } from './vector-mirror.ts';
import type { SpaceRow } from './packed-format.ts';
import { ReloadWatch } from '../../reload-watch.ts';
import { loopTurns } from '../../loop-turns.ts';
import type { CopyFiles } from './copy-files.ts';
import { FileCopy } from './file-copy.ts';
import type { ScopeCopy } from './scope-copy.ts';

export type { SpaceRow } from './packed-format.ts';
export type { ScopeCopy } from './scope-copy.ts';

/** The vector cells of a row read for a copy that holds none. */
export const NO_VECTOR = new Float32Array(0);

/**
 * One scope's rows: full text, and for a space of at most the copies' row bound its vectors too. A whole
 * tenant's copy, and a larger space's, holds its full text only: their vectors are scanned exactly by the
 * vector mirrors (vector-mirror.ts) or LanceDB's flat search, within their own budget, and a copy of them
 * here would double the largest part of the memory.
 */
export class SpaceCopy implements ScopeCopy {
  // Statistics of the scope's rows known at the read's as_of: an answer at a past as_of replays exactly.
  readonly #text = new TenantText('known');
  readonly #vectors: TenantVectors | null;
  #tokens = 0;
  #maxSeq = Number.NEGATIVE_INFINITY;

  constructor(vectors = true) {
    this.#vectors = vectors ? new TenantVectors() : null;
  }

  append(rows: readonly SpaceRow[], tokens: readonly (readonly string[])[]): void {
    this.#text.append(rows, tokens);
    // Every row held is scored as indexed: BM25 over the scope's own rows, nothing left to a flat scan.
    this.#text.setIndexed(this.#text.size);
    this.#vectors?.append(rows);
    for (const t of tokens) this.#tokens += t.length;
    for (const r of rows) this.#maxSeq = Math.max(this.#maxSeq, r.seq);
  }

  /** Whether the copy holds the scope's vectors (otherwise its full text only). */
  get hasVectors(): boolean {
    return this.#vectors !== null;
  }

  /** The highest seq held: rows at or below it are here already. */
  get maxSeq(): number {
    return this.#maxSeq;
  }

  get size(): number {
    return this.#text.size;
  }

  /**
   * Approximate memory held: vectors, per-row cells, postings entries and distinct words (measured in V8's
   * heap: 100k rows of 10 words, one of them each row's own, held ~560 bytes a row, ~370 without it).
   */
  get bytes(): number {
    return (this.#vectors?.bytes ?? 0) + 150 * this.#text.size + 24 * this.#tokens + 200 * this.#text.words;
  }

  fullText(tokens: readonly string[], f: RowFilter, limit: number): Hit[] {
    return this.#text.search(tokens, f, limit);
  }

  nearest(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): Hit[] {
    if (!this.#vectors) throw new Error('a search copy of full text only holds no vectors: the vector mirror or the table answers');
    return this.#vectors.nearest(query, f, limit, column);
  }
}

/** What loading a space reads. */
export interface SpaceSource {
  /**
   * The scope's rows, at most `limit` (one more than a copy may hold: then it is too large), with their
   * vectors when there are no more than `vectorRows` of them (NO_VECTOR otherwise: a copy of full text only).
   */
  rows(limit: number, vectorRows: number): Promise<SpaceRow[]>;
  /** How many rows the scope holds, when that is cheaper to ask than reading one more than a copy may hold. */
  size?: () => Promise<number>;
  tokenize: Tokenize;
}

/**
 * A copy's scope: one space, or (null) every space of the tenant, for a search without `space` over a
 * tenant small enough to copy whole (its full text only).
 */
export type Scope = string | null;

// Any string is a space name, so the whole tenant's key differs in its separator, not its name.
const key = (tenant: string, space: Scope): string => (space === null ? `${tenant}\u0001` : `${tenant}\u0000${space}`);
const ofTenant = (tenant: string | undefined, k: string): boolean =>
  tenant === undefined || k === key(tenant, null) || k.startsWith(key(tenant, ''));

/**
 * Rows a copy may hold: `vectors` with the scope's vectors, `text` with its full text only (at least as
 * many). A scope beyond `text` rows is searched through LanceDB.
 */
export interface CopyRows {
  vectors: number;
  text: number;
}

/**
 * Copies loaded at once. A small space's first search is light (admission lets it run beside lists), so
 * without a bound a fresh server's first searches loaded one copy per connection at once: 64 connections
 * of the load bench's mix loaded ~16 together, and lists waited behind their tokens and builds (list p99
 * 199–406 ms against 102–193 before). Others wait their turn in arrival order.
 */
export const LOADS_AT_ONCE = 4;

/** Copies of many spaces within a byte budget, least recently searched dropped first. */
export class SpaceCopies {
  readonly #budget: number;
  readonly #maxRows: CopyRows;
  readonly #tokens: TokenCache;
  /** Loaded or loading, least recently used first. */
  readonly #copies = new Map<string, Promise<SpaceCopy | null>>();
  readonly #held = new Map<string, SpaceCopy>();
  /** Scopes found too large for a copy, or for the whole budget: they only grow, so they are not counted again. */
  readonly #large = new Set<string>();
  /**
   * Copies loaded, the time spent loading them (of it reading their rows and tokenizing them) and waiting
   * for a turn to (summed over loads), copies dropped and loaded again soon after, copies searched in their
   * files instead (tests, diagnosis).
   */
  readonly counts = { loads: 0, fileSearches: 0, evictions: 0, loadMs: 0, loadWaitMs: 0, readMs: 0, tokenMs: 0, reloads: 0 };
  readonly #reloadWatch: ReloadWatch;
  readonly #warn: (message: string) => void;
  /** Copies kept on disk too (copy-files.ts): a space whose copy is not held is searched in its file. */
  readonly #files: CopyFiles | null;
  /** Tenants whose table this process created: each space's file starts with its first row. */
  readonly #fresh = new Set<string>();
  #loading = 0;
  /** Loads waiting for a turn, each resumed with the turn of a load that ended. */
  readonly #waiting: (() => void)[] = [];
  /** Most loads seen in progress at once (tests). */
  mostLoadsAtOnce = 0;

  constructor(
    budgetBytes: number,
    maxRows: number | CopyRows,
    tokens: TokenCache,
    warn: (message: string) => void = (m) => console.error(m),
    clock: () => number = Date.now,
    files: CopyFiles | null = null,
  ) {
    this.#files = files;
    this.#budget = budgetBytes;
    this.#maxRows =
      typeof maxRows === 'number' ? { vectors: maxRows, text: maxRows } : { ...maxRows, text: Math.max(maxRows.vectors, maxRows.text) };
    this.#tokens = tokens;
    this.#warn = warn;
    this.#reloadWatch = new ReloadWatch(clock);
  }

  get enabled(): boolean {
    return this.#budget > 0 && this.#maxRows.text > 0;
  }

  /** Whether the scope may get a copy: copies are on and it is not known to be too large for one. */
  mayHold(tenant: string, space: Scope): boolean {
    return this.enabled && !this.#large.has(key(tenant, space));
  }

  /** The space's copy if it is loaded (not merely loading), without counting a use. */
  loaded(tenant: string, space: Scope): SpaceCopy | undefined {
    return this.#held.get(key(tenant, space));
  }

  /**
   * The space's copy: held in memory, else searched in its file when it has a complete one, else loaded from
   * `source`; null when it is too large or does not fit.
   */
  get(tenant: string, space: Scope, source: SpaceSource): Promise<ScopeCopy | null> {
    const k = key(tenant, space);
    const cached = this.#copies.get(k);
    if (cached) {
      this.#copies.delete(k);
      this.#copies.set(k, cached);
      return cached;
    }
    if (!this.mayHold(tenant, space)) return Promise.resolve(null);
    if (space !== null && this.#files?.has(k)) {
      this.counts.fileSearches++;
      return Promise.resolve(new FileCopy(this.#files, k));
    }
    const loading = this.#inTurn(() => this.#load(tenant, space, source));
    this.#copies.set(k, loading);
    loading.then(
      (copy) => {
        if (copy === null) this.#copies.delete(k);
      },
      () => this.#copies.delete(k),
    );
    return loading;
  }

  /** Runs `load` once fewer than LOADS_AT_ONCE run; a load that ends hands its turn to the next waiting. */
  async #inTurn<T>(load: () => Promise<T>): Promise<T> {
    if (this.#loading < LOADS_AT_ONCE) this.#loading++;
    else {
      const t0 = performance.now();
      await new Promise<void>((resolve) => this.#waiting.push(resolve));
      this.counts.loadWaitMs += performance.now() - t0;
    }
    this.mostLoadsAtOnce = Math.max(this.mostLoadsAtOnce, this.#loading);
    try {
      return await load();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#loading--;
    }
  }

  async #load(tenant: string, space: Scope, source: SpaceSource): Promise<SpaceCopy | null> {
    const k = key(tenant, space);
    const t0 = performance.now();
    const { vectors: vectorRows, text: textRows } = this.#maxRows;
    if (source.size && (await source.size()) > textRows) {
      this.#large.add(k);
      return null;
    }
    // A load from the table keeps the rows the table gets from now on for the file it writes.
    const keep = space !== null ? this.#files?.reserve(k) : undefined;
    let rows: SpaceRow[];
    try {
      // One read, not a count and then a read: each call into LanceDB costs a hop to its threads.
      rows = await source.rows(textRows + 1, space === null ? 0 : vectorRows);
    } catch (error) {
      keep?.(null);
      throw error;
    }
    if (rows.length > textRows) {
      keep?.(null);
      this.#large.add(k);
      return null;
    }
    const read = performance.now();
    rows.sort((a, b) => a.seq - b.seq);
    const tokens = await this.#tokens.tokens(
      rows.map((r) => r.text),
      source.tokenize,
    );
    const tokenized = performance.now();
    // With vectors only as the source read them (it decides by the rows it found, which may differ by one
    // compaction from those it returned).
    const copy = new SpaceCopy(space !== null && rows.length <= vectorRows && rows[0]?.vector !== NO_VECTOR);
    copy.append(rows, tokens);
    // Larger than the whole budget: it would be read again for every search, and dropped each time.
    if (copy.bytes > this.#budget) {
      keep?.(null);
      this.#large.add(k);
      const mb = (b: number): number => Math.ceil(b / 1048576);
      this.#warn(
        `search copies: ${space === null ? 'the whole' : `space "${space}" of`} tenant "${tenant}" holds ${rows.length} rows ` +
          `(~${mb(copy.bytes)} MB in memory), more than SVC_SEARCH_SPACES_MB=${mb(this.#budget)} holds: its searches are scored ` +
          `through LanceDB, and one at a past as_of may rank differently once more rows are written. Raise SVC_SEARCH_SPACES_MB.`,
      );
      return null;
    }
    keep?.(copy.hasVectors ? rows : null, tokens);
    this.counts.loads++;
    this.counts.loadMs += performance.now() - t0;
    this.counts.readMs += read - t0;
    this.counts.tokenMs += tokenized - read;
    this.#noteReload(tenant, space);
    this.#held.set(k, copy);
    this.#evict();
    return copy;
  }

  /**
   * A copy loaded again soon after being dropped for room (reload-watch.ts): the spaces being searched do
   * not fit the budget, so their searches keep reading LanceDB and count as heavy (tens to hundreds of ms,
   * and a heavy slot each). Said once per window, as the read models say theirs, since nothing else shows it.
   */
  #noteReload(tenant: string, space: Scope): void {
    const reload = this.#reloadWatch.loaded(key(tenant, space));
    if (!reload) return;
    this.counts.reloads++;
    if (!reload.say) return;
    const { spaces, bytes } = this.held();
    const mb = (b: number): number => Math.round(b / 1048576);
    this.#warn(
      `search copies: ${space === null ? 'the whole' : `space "${space}" of`} tenant "${tenant}" is loaded again ${(reload.afterMs / 1000).toFixed(1)} s after it was ` +
        `dropped (${this.counts.reloads} such reloads so far). The spaces being searched do not fit ` +
        `SVC_SEARCH_SPACES_MB=${mb(this.#budget)} (${spaces} spaces held, ~${mb(bytes)} MB): each search of a dropped one reads ` +
        `LanceDB and takes a heavy slot. Raise SVC_SEARCH_SPACES_MB.`,
    );
  }

  /**
   * Adds rows just written to the table to the copies of their spaces and of the whole tenant (waiting for a
   * load in progress: it may have read the table before these rows landed; rows it already holds are
   * skipped by seq).
   */
  async append(tenant: string, rows: readonly SpaceRow[], tokenize: Tokenize): Promise<void> {
    await this.#appendFiles(tenant, rows, tokenize);
    const bySpace = new Map<Scope, SpaceRow[]>();
    for (const r of rows) {
      if (!this.#copies.has(key(tenant, r.space))) continue;
      const list = bySpace.get(r.space);
      if (list) list.push(r);
      else bySpace.set(r.space, [r]);
    }
    if (rows.length > 0 && this.#copies.has(key(tenant, null))) bySpace.set(null, [...rows]);
    const yieldIfLong = loopTurns();
    for (const [space, list] of bySpace) {
      await yieldIfLong();
      const k = key(tenant, space);
      const copy = await this.#copies.get(k)?.catch(() => null);
      if (copy && this.#held.get(k) === copy) await this.#grow(k, copy, list, tokenize);
    }
    if (bySpace.size > 0) this.#evict();
  }

  /**
   * The rows' spaces' files get them with their tokens (so no load tokenizes them again), after the table
   * did: a load that read the table before they landed has reserved its file's place, and gets them after
   * its own rows; one that reads it after holds them already (a row twice is read once).
   */
  async #appendFiles(tenant: string, rows: readonly SpaceRow[], tokenize: Tokenize): Promise<void> {
    const files = this.#files;
    if (!files) return;
    const start = this.#fresh.has(tenant);
    const bySpace = new Map<string, SpaceRow[]>();
    for (const r of rows) {
      const k = key(tenant, r.space);
      if (!files.has(k) && !files.pending(k) && !(start && !this.#large.has(k))) continue;
      const list = bySpace.get(k);
      if (list) list.push(r);
      else bySpace.set(k, [r]);
    }
    if (bySpace.size === 0) return;
    const lists = [...bySpace.values()];
    // A table's first rows come before its full-text index, and with it its tokenizer: their files are
    // removed, and the spaces' next searches load them from the table.
    const tokens = await this.#tokens
      .tokens(
        lists.flatMap((list) => list.map((r) => r.text)),
        tokenize,
      )
      .catch(() => undefined);
    // A batch reaches hundreds of spaces, each file written in turn: up to 17–55 ms in one stretch in
    // profiles under the 300k-row load, which every request in flight waited for. Each space's append is
    // whole, and a search of a space not reached yet adds its rows from the queue (they stay queued until
    // this batch is done).
    const yieldIfLong = loopTurns();
    let at = 0;
    for (const [k, list] of bySpace) {
      await yieldIfLong();
      files.append(k, list, start, tokens?.slice(at, at + list.length));
      at += list.length;
    }
  }

  /** Rows of the space's copy file, when it has a complete one. */
  fileRows(tenant: string, space: string): number | undefined {
    return this.#files?.rows(key(tenant, space));
  }

  /** The tenant's table was created empty by this process: its spaces' files may start with their first rows. */
  fresh(tenant: string): void {
    if (this.#files) this.#fresh.add(tenant);
  }

  /** Files kept and their bytes, loads read from them (diagnosis). */
  files(): {
    files: number;
    bytes: number;
    reads: number;
    writes: number;
    appends: number;
    merges: number;
    removed: number;
    failed: number;
  } {
    return this.#files
      ? { files: this.#files.size, bytes: this.#files.bytes, ...this.#files.counts }
      : { files: 0, bytes: 0, reads: 0, writes: 0, appends: 0, merges: 0, removed: 0, failed: 0 };
  }

  /**
   * Adds rows of one scope to its copy (rows it holds are skipped by seq), as a search adds the scope's rows
   * still queued for the table; false when the copy is not held (or its file is gone), or the rows took it
   * past its bound.
   */
  async appendTo(tenant: string, space: Scope, copy: ScopeCopy, rows: readonly SpaceRow[], tokenize: Tokenize): Promise<boolean> {
    const k = key(tenant, space);
    if (copy instanceof FileCopy) {
      const tokens = await this.#tokens.tokens(
        rows.map((r) => r.text),
        tokenize,
      );
      this.#files?.append(k, rows, false, tokens);
      return copy.present;
    }
    if (!(copy instanceof SpaceCopy)) return false;
    if (this.#held.get(k) !== copy) return false;
    const kept = await this.#grow(k, copy, rows, tokenize);
    this.#evict();
    return kept && this.#held.get(k) === copy;
  }

  /** Appends to a held copy; past its bound it is dropped (false): one with vectors is read again as full text only. */
  async #grow(k: string, copy: SpaceCopy, rows: readonly SpaceRow[], tokenize: Tokenize): Promise<boolean> {
    copy.append(
      rows,
      await this.#tokens.tokens(
        rows.map((r) => r.text),
        tokenize,
      ),
    );
    if (copy.size <= (copy.hasVectors ? this.#maxRows.vectors : this.#maxRows.text)) return true;
    this.#drop(k);
    this.#files?.remove(k);
    if (copy.size > this.#maxRows.text) this.#large.add(k);
    return false;
  }

  /** Forgets a tenant's copies (its table changed under them), or every copy. */
  dropTenant(tenant?: string): void {
    this.#forget(tenant);
    this.#files?.removeWhere((k) => ofTenant(tenant, k));
  }

  /** Forgets every copy held, leaving their files (the next start removes them). */
  close(): void {
    this.#forget();
    this.#files?.close();
  }

  #forget(tenant?: string): void {
    for (const k of [...this.#copies.keys()]) if (ofTenant(tenant, k)) this.#drop(k);
    for (const k of [...this.#large]) if (ofTenant(tenant, k)) this.#large.delete(k);
    if (tenant === undefined) this.#fresh.clear();
    else this.#fresh.delete(tenant);
  }

  /** Copies, rows and bytes held, and the copies of full text only among them (tests, diagnosis). */
  held(): { spaces: number; rows: number; bytes: number; textOnly: number } {
    let rows = 0;
    let bytes = 0;
    let textOnly = 0;
    for (const c of this.#held.values()) {
      rows += c.size;
      bytes += c.bytes;
      if (!c.hasVectors) textOnly++;
    }
    return { spaces: this.#held.size, rows, bytes, textOnly };
  }

  #drop(k: string): void {
    this.#copies.delete(k);
    this.#held.delete(k);
  }

  #evict(): void {
    let total = 0;
    for (const c of this.#held.values()) total += c.bytes;
    for (const k of [...this.#copies.keys()]) {
      if (total <= this.#budget) break;
      const c = this.#held.get(k);
      if (!c) continue;
      total -= c.bytes;
      this.#drop(k);
      this.counts.evictions++;
      this.#reloadWatch.evicted(k);
    }
  }
}
