// A query's first rows in a total order, whatever order LanceDB gives equal scores in. LanceDB returns the
// best n rows by score, but among equal scores it returns an arbitrary part of the group, and which part
// depends on how the table and its indexes were laid out (appended over time on one server, imported in
// pages on another): a tenant moved between servers answered with other rows of a tie that straddled the
// cut. Here a group of equal scores at the cut is always settled among all its rows: full text keeps the
// newest (byScore, as the in-memory copies do), vectors the oldest (byNearness, as the in-memory scans do).
import type { Hit } from '../index-row.ts';
import { CUT_SLACK } from '../copies/text-mirror.ts';

/** Nearest first; equal distances oldest (lowest seq) first, as the in-memory scans keep them (vector-mirror.ts). */
export const byNearness = (a: Hit, b: Hit): number => b.score - a.score || a.seq - b.seq;

/**
 * Scores this close count as equal. LanceDB's float32 arithmetic gives one row scores a unit in the last
 * place apart from one query to another (measured: 5.385890483856201 and 5.385890007019043 for the same
 * row, asked with and without a `seq` prefilter), so a tie is a tie up to that.
 */
const SAME_SCORE = 1e-6;
export const sameScore = (a: number, b: number): boolean => Math.abs(a - b) <= SAME_SCORE * Math.max(Math.abs(a), Math.abs(b));

/**
 * `hits` best first, scores within SAME_SCORE of the first of their run counted as equal and ordered by seq
 * (`newestFirst`: highest first), so rounding noise does not order rows of a tie.
 */
export function inScoreOrder(hits: readonly Hit[], newestFirst: boolean): Hit[] {
  const sorted = [...hits].sort((a, b) => b.score - a.score);
  const out: Hit[] = [];
  for (let i = 0; i < sorted.length;) {
    let j = i + 1;
    while (j < sorted.length && sameScore(sorted[i]!.score, sorted[j]!.score)) j++;
    out.push(...sorted.slice(i, j).sort((a, b) => (newestFirst ? b.seq - a.seq : a.seq - b.seq)));
    i = j;
  }
  return out;
}

/** Rows an answer is grown to at most to hold a whole group of equal scores at its cut. */
export const MAX_TIE_ROWS = 10_000;
/** Queries one full-text answer spends at most on settling a group of equal scores at its cut. */
export const MAX_TIE_PROBES = 32;
/** Rows a probe asks for, per row still wanted from the tied group: larger probes narrow the window faster. */
const PROBE_FACTOR = 4;

/** The best `n` rows by score (among rows with seq >= `fromSeq`, when given); equal scores in any order. */
export type Fetch = (n: number, fromSeq?: number) => Promise<Hit[]>;

/**
 * The first `limit` rows in score order, ties by seq (inScoreOrder): `fetch` is asked for more rows until the group of
 * equal scores at the cut ends inside its answer. For a group that may run long only at a cost that grows
 * with its size (a flat vector scan costs the same whatever it returns), at most MAX_TIE_ROWS.
 */
export async function closedCut(fetch: Fetch, limit: number, newestFirst: boolean): Promise<Hit[]> {
  if (limit <= 0) return [];
  for (let n = limit + CUT_SLACK; ; n *= 4) {
    const hits = inScoreOrder(await fetch(n), newestFirst);
    if (hits.length < n || !sameScore(hits[n - 1]!.score, hits[limit - 1]!.score) || n >= MAX_TIE_ROWS) return hits.slice(0, limit);
  }
}

/**
 * The first `limit` rows in byScore order (score, then newest first), for a query whose ties may number
 * in the thousands (near-identical statements share every full-text score): rather than fetching the whole
 * group, windows of the newest rows (seq >= from) are probed until one holds enough of the tied rows and
 * all of them. `topSeq` is at least the highest seq the table holds. Every row scoring above the cut is in
 * the first answer (they precede the tie), so a window only has to settle which tied rows are newest. A
 * probe whose scores disagree with the first answer's (rows appended meanwhile and scored by a flat scan
 * whose statistics follow the prefilter) or MAX_TIE_PROBES probes end the search with the first answer's
 * rows: the order is then LanceDB's, as before.
 */
export async function newestAtCut(fetch: Fetch, limit: number, topSeq: () => Promise<number>): Promise<Hit[]> {
  if (limit <= 0) return [];
  const n = limit + CUT_SLACK;
  const first = inScoreOrder(await fetch(n), true);
  if (first.length < n || !sameScore(first[n - 1]!.score, first[limit - 1]!.score)) return first.slice(0, limit);
  const cut = first[limit - 1]!.score;
  const isTied = (h: Hit): boolean => sameScore(h.score, cut);
  const above = first.filter((h) => !isTied(h) && h.score > cut);
  const aboveScore = new Map(above.map((h) => [h.seq, h.score]));
  const need = limit - above.length;
  /** The need-th highest seq among tied rows: a window from there holds at least `need` of them. */
  const nthNewest = (tied: readonly Hit[]): number | undefined => tied.map((h) => h.seq).sort((a, b) => b - a)[need - 1];
  const newestTied = (tied: readonly Hit[]): Hit[] => [...above, ...[...tied].sort((a, b) => b.seq - a.seq).slice(0, need)];
  // The window [from, ∞) holds at least `need` tied rows for from = lo, fewer for from = hi.
  let lo = nthNewest(first.filter(isTied)) ?? 0;
  let hi = (await topSeq()) + 1;
  const m = above.length + PROBE_FACTOR * need + CUT_SLACK;
  let step = m;
  let bisecting = false;
  for (let probe = 0; probe < MAX_TIE_PROBES; probe++) {
    const from = hi - lo <= 1 ? lo : bisecting ? Math.floor((lo + hi) / 2) : Math.max(lo, hi - step);
    const hits = [...(await fetch(m, from))].sort((a, b) => b.score - a.score);
    const aboveHere = hits.filter((h) => !isTied(h) && h.score > cut);
    const consistent =
      aboveHere.every((h) => sameScore(aboveScore.get(h.seq) ?? Number.NaN, h.score)) &&
      aboveHere.length === above.filter((h) => h.seq >= from).length;
    if (!consistent) break;
    const tied = hits.filter(isTied);
    if (hits.length < m || !isTied(hits[m - 1]!)) {
      // Every tied row from `from` on is here.
      if (tied.length >= need) return newestTied(tied);
      hi = from;
      step *= 2;
    } else {
      // More tied rows from `from` on than a probe returns: the window may start later.
      lo = Math.max(lo, nthNewest(tied) ?? lo);
      bisecting = true;
    }
  }
  return first.slice(0, limit);
}
