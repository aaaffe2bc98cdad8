// In-memory copies of single spaces, so a search confined to one space costs what that space holds, not
// what its tenant holds. A tenant's table serves every space of an application; searched through LanceDB,
// a space's 150 rows were found by BM25 over the tenant's postings and an HNSW walk that skips the other
// spaces' rows (11 ms at 30k rows in the tenant, 177 ms at 300k). A copy holds one space's rows (read
// once through the `space` prefilter), its full text (text-mirror.ts, BM25 with the statistics of the
// space's rows known at the search's as_of, so an answer at a past as_of never changes) and its vectors
// (vector-mirror.ts, a flat scan, exact), loaded on first search, kept fresh by the index's appends, and
// dropped least recently searched first beyond a memory budget.
import type { Hit, RowFilter } from '../index-row.ts';
import { TenantText, type TextRow, type Tokenize, type TokenCache } from './text-mirror.ts';
import { TenantVectors, type MirrorRow } from './vector-mirror.ts';
import { ReloadWatch } from '../../reload-watch.ts';

/** A row as the index writes it: prefilter columns, text and vectors. */
export type SpaceRow = MirrorRow & TextRow;

/** The vector cells of a row read for a copy that holds none. */
export const NO_VECTOR = new Float32Array(0);

/**
 * One scope's rows: full text, and for a space its vectors too. A whole tenant's copy holds its full text
 * only: the tenant's vectors are scanned exactly by the vector mirrors (vector-mirror.ts) or LanceDB's flat
 * search, within their own budget, and a copy of them here would double the largest part of the memory.
 */
export class SpaceCopy {
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

  /** The highest seq held: rows at or below it are here already. */
  get maxSeq(): number {
    return this.#maxSeq;
  }

  get size(): number {
    return this.#text.size;
  }

  /** Approximate memory held: vectors, per-row cells and postings. */
  get bytes(): number {
    return (this.#vectors?.bytes ?? 0) + 120 * this.#text.size + 24 * this.#tokens;
  }

  fullText(tokens: readonly string[], f: RowFilter, limit: number): Hit[] {
    return this.#text.search(tokens, f, limit);
  }

  nearest(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): Hit[] {
    if (!this.#vectors) throw new Error("a whole tenant's search copy holds no vectors: its vector mirror answers");
    return this.#vectors.nearest(query, f, limit, column);
  }
}

/** What loading a space reads: its rows, at most `limit` (one more than a copy may hold: then it is too large). */
export interface SpaceSource {
  rows(limit: number): Promise<SpaceRow[]>;
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

/** Copies of many spaces within a byte budget, least recently searched dropped first. */
export class SpaceCopies {
  readonly #budget: number;
  readonly #maxRows: number;
  readonly #tokens: TokenCache;
  /** Loaded or loading, least recently used first. */
  readonly #copies = new Map<string, Promise<SpaceCopy | null>>();
  readonly #held = new Map<string, SpaceCopy>();
  /** Spaces found too large for a copy: they only grow, so they are not counted again. */
  readonly #large = new Set<string>();
  /** Copies loaded, the time spent loading them, copies dropped and loaded again soon after (tests, diagnosis). */
  readonly counts = { loads: 0, evictions: 0, loadMs: 0, reloads: 0 };
  readonly #reloadWatch: ReloadWatch;
  readonly #warn: (message: string) => void;

  constructor(
    budgetBytes: number,
    maxRows: number,
    tokens: TokenCache,
    warn: (message: string) => void = (m) => console.error(m),
    clock: () => number = Date.now,
  ) {
    this.#budget = budgetBytes;
    this.#maxRows = maxRows;
    this.#tokens = tokens;
    this.#warn = warn;
    this.#reloadWatch = new ReloadWatch(clock);
  }

  get enabled(): boolean {
    return this.#budget > 0 && this.#maxRows > 0;
  }

  /** The space's copy if it is loaded (not merely loading), without counting a use. */
  loaded(tenant: string, space: Scope): SpaceCopy | undefined {
    return this.#held.get(key(tenant, space));
  }

  /** The space's copy, loaded from `source` when absent; null when it is too large or does not fit. */
  get(tenant: string, space: Scope, source: SpaceSource): Promise<SpaceCopy | null> {
    const k = key(tenant, space);
    const cached = this.#copies.get(k);
    if (cached) {
      this.#copies.delete(k);
      this.#copies.set(k, cached);
      return cached;
    }
    if (!this.enabled || this.#large.has(k)) return Promise.resolve(null);
    const loading = this.#load(tenant, space, source);
    this.#copies.set(k, loading);
    loading.then(
      (copy) => {
        if (copy === null) this.#copies.delete(k);
      },
      () => this.#copies.delete(k),
    );
    return loading;
  }

  async #load(tenant: string, space: Scope, source: SpaceSource): Promise<SpaceCopy | null> {
    const k = key(tenant, space);
    const t0 = performance.now();
    if (source.size && (await source.size()) > this.#maxRows) {
      this.#large.add(k);
      return null;
    }
    // One read, not a count and then a read: each call into LanceDB costs a hop to its threads.
    const rows = await source.rows(this.#maxRows + 1);
    if (rows.length > this.#maxRows) {
      this.#large.add(k);
      return null;
    }
    rows.sort((a, b) => a.seq - b.seq);
    const tokens = await this.#tokens.tokens(
      rows.map((r) => r.text),
      source.tokenize,
    );
    const copy = new SpaceCopy(space !== null);
    copy.append(rows, tokens);
    if (copy.bytes > this.#budget) return null;
    this.counts.loads++;
    this.counts.loadMs += performance.now() - t0;
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
    const bySpace = new Map<Scope, SpaceRow[]>();
    for (const r of rows) {
      if (!this.#copies.has(key(tenant, r.space))) continue;
      const list = bySpace.get(r.space);
      if (list) list.push(r);
      else bySpace.set(r.space, [r]);
    }
    if (rows.length > 0 && this.#copies.has(key(tenant, null))) bySpace.set(null, [...rows]);
    for (const [space, list] of bySpace) {
      const k = key(tenant, space);
      const copy = await this.#copies.get(k)?.catch(() => null);
      if (!copy || this.#held.get(k) !== copy) continue;
      copy.append(
        list,
        await this.#tokens.tokens(
          list.map((r) => r.text),
          tokenize,
        ),
      );
      if (copy.size > this.#maxRows) {
        this.#drop(k);
        this.#large.add(k);
      }
    }
    if (bySpace.size > 0) this.#evict();
  }

  /** Forgets a tenant's copies (its table changed under them), or every copy. */
  dropTenant(tenant?: string): void {
    for (const k of [...this.#copies.keys()]) if (ofTenant(tenant, k)) this.#drop(k);
    for (const k of [...this.#large]) if (ofTenant(tenant, k)) this.#large.delete(k);
  }

  /** Rows and bytes held (tests, diagnosis). */
  held(): { spaces: number; rows: number; bytes: number } {
    let rows = 0;
    let bytes = 0;
    for (const c of this.#held.values()) {
      rows += c.size;
      bytes += c.bytes;
    }
    return { spaces: this.#held.size, rows, bytes };
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
