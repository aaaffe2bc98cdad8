// The full-text side of a small tenant's table, held in memory and scored in JS. LanceDB's BM25 query
// costs several milliseconds even on a few hundred rows (planning, reading the index and the unindexed
// fragments, Arrow across the JS boundary), more with the rows appended since the last optimize, which
// it scans flat. The mirror gives LanceDB's answers: its own tokenizer's tokens (asked of LanceDB, word
// by word, and kept), BM25 with k1 = 1.2 and b = 0.75 in float32, rows in the full-text index scored
// with the index's statistics (rows without a token not counted), rows appended since scored with those
// plus the appended rows the prefilter admits (what LanceDB's flat scan reads), and the same prefilter
// (admits, vector-mirror.ts). Equal scores come in LanceDB in no fixed order (it varies from one call to
// the next on the same table), so both paths order them newest first (byScore; LanceDB's answer is
// fetched with CUT_SLACK rows more, and a tie at the cut that runs past them is settled among all its rows
// by newestAtCut, closed-cut.ts). The mirror always answers: where two scores are so close (within 1e-5
// relative) that LanceDB's float32 arithmetic might tie or swap them, it keeps its own order. It once left those to LanceDB, whose query on a table with many rows
// appended since its last optimize scans them flat: in a live replay of messages (~5k rows a tenant) 7% of
// searches went there and took ~70-90 ms each, the whole of the p95. The copies of a space or of a whole
// tenant's full text (space-copies.ts) hold the same structure with other statistics (TextStatistics): no
// table answers for them, so they count only the rows known at the read's as_of.
import type { Table as ArrowTable } from 'apache-arrow';
import type { Hit, RowFilter } from '../index-row.ts';
import { admits, cellsOf, FILTER_COLUMNS, filterCells, idSets, type FilterCells } from './vector-mirror.ts';

/** A row's prefilter columns and its text. */
export type TextRow = FilterCells & { text: string };

type Scalars = FilterCells;

/** LanceDB's tokenizer for the table's full-text index: one text in, its tokens out. */
export type Tokenize = (text: string) => Promise<string[]>;

const K1 = 1.2;
const B = 0.75;
const f32 = Math.fround;

/** One token's BM25 share in a row's score: `w` its idf, `tf` its count in the row of `length` tokens, `avg` the mean length; float32 as LanceDB. */
export const termScore = (w: number, tf: number, length: number, avg: number): number => {
  const norm = f32(K1 * f32(f32(1 - B) + f32(B * f32(length / avg))));
  return f32(w * f32(f32((K1 + 1) * tf) / f32(tf + norm)));
};

/** Rows fetched from LanceDB beyond the limit, so that equal scores at the cut are ordered among all of them. */
export const CUT_SLACK = 16;

/** Best first; equal scores newest (highest seq) first, in both paths. */
export const byScore = (a: { score: number; seq: number }, b: { score: number; seq: number }): number => b.score - a.score || b.seq - a.seq;

/** BM25's inverse document frequency, in float32 as LanceDB computes it. */
export const idf = (withToken: number, docs: number): number =>
  f32(Math.log(f32(f32(f32(docs - withToken) + 0.5) / f32(withToken + 0.5)) + 1));

/**
 * Tokens of whitespace-separated chunks, asked of LanceDB in batches and kept: its tokenizer splits on
 * every non-alphanumeric character and filters token by token (lowercase, stem, stop words, folding),
 * so a text's tokens are its chunks' tokens end to end. A batch is one call: chunks between a marker
 * chunk whose single token is known, so each chunk's tokens are those between two markers.
 */
export class TokenCache {
  readonly #known = new Map<string, readonly string[]>();
  static readonly MARKER = 'qjxzvq';
  /** Chunks kept at most (about 100 bytes each); the cache starts over beyond. */
  readonly #maxChunks: number;

  constructor(maxChunks = 500_000) {
    this.#maxChunks = maxChunks;
  }

  /** Each text's tokens, in order; `tokenize` is any table's with the same index settings. */
  async tokens(texts: readonly string[], tokenize: Tokenize): Promise<string[][]> {
    const chunked = texts.map((t) => t.split(/\s+/).filter((c) => c !== ''));
    const missing = new Set<string>();
    for (const chunks of chunked) for (const c of chunks) if (!this.#known.has(c)) missing.add(c);
    if (this.#known.size + missing.size > this.#maxChunks) {
      this.#known.clear();
      for (const chunks of chunked) for (const c of chunks) missing.add(c);
    }
    if (missing.size > 0) await this.#learn([...missing], tokenize);
    return chunked.map((chunks) => chunks.flatMap((c) => this.#known.get(c) ?? []));
  }

  async #learn(chunks: string[], tokenize: Tokenize): Promise<void> {
    const marker = TokenCache.MARKER;
    // A chunk that could yield the marker's token is asked alone.
    const alone = chunks.filter((c) => c.toLowerCase().includes(marker));
    const batched = chunks.filter((c) => !c.toLowerCase().includes(marker));
    if (batched.length > 0) {
      const tokens = await tokenize([marker, ...batched.flatMap((c) => [c, marker])].join(' '));
      const per: string[][] = [];
      let current: string[] | null = null;
      for (const t of tokens) {
        if (t === marker) {
          if (current) per.push(current);
          current = [];
        } else current?.push(t);
      }
      // A chunk that folds into the marker shifts the groups: then each is asked alone.
      if (per.length === batched.length) batched.forEach((c, i) => this.#known.set(c, per[i] ?? []));
      else alone.push(...batched);
    }
    for (const c of alone) this.#known.set(c, await tokenize(c));
  }
}

/** One token's rows (indexes into the tenant's rows, ascending) and its frequency in each. */
interface Postings {
  rows: number[];
  tf: number[];
}

/**
 * Which rows BM25's statistics count. `table`: as LanceDB's full-text query over the table does (the rows
 * in its index, and the unindexed rows its flat scan reads), so a tenant's copy answers as the table
 * would. `known`: the rows held that are known at the read's as_of (every row held is scored as indexed),
 * so an answer at a past as_of does not change with rows learned after it.
 */
export type TextStatistics = 'table' | 'known';

/** One tenant's texts, in write (seq) order; the first `indexed` are in LanceDB's full-text index. */
export class TenantText {
  readonly #statistics: TextStatistics;
  readonly #rows: Scalars[] = [];
  readonly #lengths: number[] = [];
  readonly #postings = new Map<string, Postings>();
  #indexed = 0;
  /** Indexed rows with a token (LanceDB counts no others), and their tokens. */
  #indexedDocs = 0;
  #indexedTokens = 0;
  #maxSeq = Number.NEGATIVE_INFINITY;
  #maxKnown = Number.NEGATIVE_INFINITY;
  /**
   * A search's running scores by row, and the rows it touched in the order first touched: reused from one
   * search to the next (each leaves it zeroed), since a map of scores cost most of a search over long
   * postings.
   */
  #acc = new Float64Array(0);

  constructor(statistics: TextStatistics = 'table') {
    this.#statistics = statistics;
  }

  /** Appends rows written after those held, with their tokens (same order). */
  append(rows: readonly TextRow[], tokens: readonly (readonly string[])[]): void {
    rows.forEach((r, i) => {
      if (r.seq <= this.#maxSeq) return;
      this.#maxSeq = r.seq;
      const row = cellsOf(r);
      const at = this.#rows.length;
      const list = tokens[i] ?? [];
      const tf = new Map<string, number>();
      for (const t of list) tf.set(t, (tf.get(t) ?? 0) + 1);
      for (const [t, n] of tf) {
        const p = this.#postings.get(t);
        // Made with their first entry, not empty: V8 gives an empty array's first push room for 16 more,
        // and most words of a large scope are rare (a copy of 100k rows each with a word of its own held
        // ~440 bytes a word so).
        if (!p) this.#postings.set(t, { rows: [at], tf: [n] });
        else {
          p.rows.push(at);
          p.tf.push(n);
        }
      }
      this.#rows.push(row);
      this.#lengths.push(list.length);
      this.#maxKnown = Math.max(this.#maxKnown, row.known_at);
    });
  }

  get size(): number {
    return this.#rows.length;
  }

  /** Distinct tokens held. */
  get words(): number {
    return this.#postings.size;
  }

  /** The full-text index now covers the first `rows` rows (after LanceDB built or updated it). */
  setIndexed(rows: number): void {
    this.#indexed = Math.min(rows, this.#rows.length);
    this.#indexedTokens = 0;
    this.#indexedDocs = 0;
    for (let i = 0; i < this.#indexed; i++) {
      this.#indexedTokens += this.#lengths[i]!;
      if (this.#lengths[i]! > 0) this.#indexedDocs++;
    }
  }

  /**
   * The `limit` best rows by BM25 among those `f` admits, in byScore order, as LanceDB's full-text query
   * returns them (up to the order of scores within float rounding of each other, and which of the rows tied
   * at the cut past CUT_SLACK are kept: the newest).
   */
  search(query: readonly string[], f: RowFilter, limit: number): Hit[] {
    if (limit <= 0 || query.length === 0 || this.#rows.length === 0) return [];
    const { only, excluded } = idSets(f);
    // Rows appended since the index was updated are scored with the statistics of the indexed rows and
    // of the appended rows the prefilter admits (the ones LanceDB's flat scan reads).
    const total = this.#rows.length;
    const flat = new Uint8Array(total - this.#indexed);
    let flatDocs = 0;
    let flatTokens = 0;
    for (let i = this.#indexed; i < total; i++) {
      if (!admits(this.#rows[i]!, f, only, excluded)) continue;
      flat[i - this.#indexed] = 1;
      flatTokens += this.#lengths[i]!;
      if (this.#lengths[i]! > 0) flatDocs++;
    }
    // Under `known` statistics a read at a past as_of counts the indexed rows known then (a backfilled row
    // appended later counts if its declared instant is not after as_of); LanceDB's are all indexed rows.
    const knownBy = this.#countsKnownBy(f);
    let indexedDocs = this.#indexedDocs;
    let indexedTokens = this.#indexedTokens;
    if (knownBy !== undefined) {
      indexedDocs = 0;
      indexedTokens = 0;
      for (let i = 0; i < this.#indexed; i++) {
        if (!(this.#rows[i]!.known_at <= knownBy)) continue;
        indexedTokens += this.#lengths[i]!;
        if (this.#lengths[i]! > 0) indexedDocs++;
      }
      // No row known at as_of has a word: nothing to find (and no mean length to score by).
      if (indexedDocs === 0) return [];
    }
    const avgIndexed = f32(indexedTokens / indexedDocs);
    const flatAll = indexedDocs + flatDocs;
    const avgAll = f32((indexedTokens + flatTokens) / flatAll);
    if (this.#acc.length < total) this.#acc = new Float64Array(Math.max(total, 2 * this.#acc.length));
    const acc = this.#acc;
    const touched: number[] = [];
    for (const token of query) {
      const p = this.#postings.get(token);
      if (!p) continue;
      const indexedEnd = countBelow(p.rows, this.#indexed);
      const inIndex = knownBy === undefined ? indexedEnd : this.#knownIn(p.rows, indexedEnd, knownBy);
      let inFlat = 0;
      for (let k = indexedEnd; k < p.rows.length; k++) inFlat += flat[p.rows[k]! - this.#indexed]!;
      const idfIndexed = inIndex === 0 ? 0 : idf(inIndex, indexedDocs);
      const idfAll = idf(inIndex + inFlat, flatAll);
      for (let k = 0; k < p.rows.length; k++) {
        const row = p.rows[k]!;
        const indexed = row < this.#indexed;
        if (!indexed && flat[row - this.#indexed] === 0) continue; // left out of the flat scan by the prefilter
        const w = indexed ? idfIndexed : idfAll;
        if (w === 0) continue;
        const before = acc[row]!;
        if (before === 0) touched.push(row);
        acc[row] = f32(before + termScore(w, p.tf[k]!, this.#lengths[row]!, indexed ? avgIndexed : avgAll));
      }
    }
    // Only the best `limit` are kept, in byScore order: sorting every match cost most of a search whose
    // words are common (tens of thousands of rows), and most rows lose to the last kept on one comparison.
    const best: Hit[] = [];
    for (const row of touched) {
      const score = acc[row]!;
      acc[row] = 0;
      if (score <= 0) continue;
      const r = this.#rows[row]!;
      const worst = best[limit - 1];
      if (worst && byScore({ score, seq: r.seq }, worst) >= 0) continue;
      if (!admits(r, f, only, excluded)) continue;
      insertSorted(best, { id: r.id, seq: r.seq, score }, limit);
    }
    return best;
  }

  /**
   * The as_of whose known rows the statistics count, or undefined when they count every indexed row: under
   * `table` statistics, for a read that sees every row held (nothing held is known after its as_of), and
   * for the count of matches hidden from a read (scores unused).
   */
  #countsKnownBy(f: RowFilter): number | undefined {
    if (this.#statistics === 'table' || f.allKnown || f.hidden) return undefined;
    const asOf = Math.trunc(f.asOf);
    return asOf >= this.#maxKnown ? undefined : asOf;
  }

  /** How many of the first `end` rows in `rows` are known at `asOf`. */
  #knownIn(rows: readonly number[], end: number, asOf: number): number {
    let n = 0;
    for (let k = 0; k < end; k++) if (this.#rows[rows[k]!]!.known_at <= asOf) n++;
    return n;
  }
}

/** Puts `h` in its byScore place in `sorted`, keeping at most `cap` rows. */
export function insertSorted(sorted: Hit[], h: Hit, cap: number): void {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (byScore(sorted[mid]!, h) <= 0) lo = mid + 1;
    else hi = mid;
  }
  sorted.splice(lo, 0, h);
  if (sorted.length > cap) sorted.pop();
}

/** How many of the ascending `xs` are below `n`. */
function countBelow(xs: readonly number[], n: number): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid]! < n) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Columns the full-text copy is read with. */
export const TEXT_COLUMNS = [...FILTER_COLUMNS, 'text'];

/** The full-text copy's rows from a table read with TEXT_COLUMNS. */
export function textRows(data: ArrowTable): TextRow[] {
  const cells = filterCells(data);
  const text = data.getChild('text');
  const rows: TextRow[] = [];
  for (let i = 0; i < data.numRows; i++) rows.push({ ...cells(i), text: String(text?.get(i) ?? '') });
  return rows;
}
