// Query-term coverage: how much of what the query asks about a block's own words (and, at a lower share,
// the words of the blocks it is read with) contain. Fusion rewards a block for ranking high in any list;
// a block matching one rare word strongly can then outrank one that matches every part of the question.
// A second pass adds a share of the coverage to each candidate's fused score. Words weigh by their rarity
// in English (the word vectors' smooth inverse frequency; a word they do not know, a name, weighs most).
// A block often says what the question asks in other words ("I drew it" for "the drawing", "a puppy" for
// "dogs"): exact words miss it, and the word-vector list ranks whole texts, where one such word is diluted.
// So a query word the block lacks counts in part for the block's most related word ('related').
import type { TenantView } from '../../read/tenant-view.ts';
import type { NodeVersion } from '../../types.ts';
import { answerCredit, answerType } from './answer-type.ts';
import { contextText, messageText } from './context.ts';
import { enabled } from './mechanisms.ts';
import { stem, words, contentWords } from '../embed/text-features.ts';

/**
 * Share of the coverage added to the fused score. Chosen on LoCoMo conversations 1-5, turns mode with the
 * asking rule (recall_any@10 / recall_all@10 / MRR): none 0.840 / 0.709 / 0.569, 0.2 0.843 / 0.713 / 0.577,
 * 0.4 0.847 / 0.720 / 0.584, 0.7 0.850 / 0.721 / 0.586.
 */
export const COVERAGE_WEIGHT = 0.7;
/** The share a query word counts for when only the block's context has it (not tuned). */
export const CONTEXT_COVERAGE = 0.5;

export type WordWeight = (word: string) => number;

/**
 * Cosine similarity (word vectors) above which a block's word counts, in part, for a query word it does not
 * contain: "drew" for "drawing", "puppy" for "dogs", "band" for "musical". A word at the floor counts for
 * nothing, one at cosine 1 as the word itself. Chosen on LoCoMo conversations 1-5, turns mode (recall_any@10
 * / recall_all@10 / MRR): none 0.850 / 0.721 / 0.585; 0.3 0.850 / 0.728 / 0.590,
 * 0.35 0.850 / 0.726 / 0.588, 0.4 0.851 / 0.728 / 0.587, 0.45 0.851 / 0.728 / 0.589, 0.5 0.850 / 0.725 / 0.590, 0.6
 * 0.850 / 0.721 / 0.589 (names credited too, at 0.4: 0.853 / 0.730 / 0.589).
 */
export const RELATED_FLOOR = 0.4;
/** Candidates compared for related words beyond the number asked for (see withCoverage). */
export const RELATED_SLACK = 5;

/** What related-word credit needs from the word vectors (word-vectors.ts). */
export interface RelatedWords {
  indexOf(word: string): number;
  unit(word: string): Float32Array | null;
  cosinesAt(units: readonly Float32Array[], i: number, out: Float32Array): Float32Array;
}

/** The query's distinct stemmed content words, each with its weight. */
export function queryStems(query: string, weight: WordWeight): Map<string, number> {
  const out = new Map<string, number>();
  for (const w of contentWords(query)) {
    const s = stem(w);
    out.set(s, Math.max(out.get(s) ?? 0, weight(w)));
  }
  return out;
}

const stemsOf = (text: string): Set<string> => new Set(words(text).map(stem));

/**
 * Per block version, its own stems (share 1) and those only its context has (CONTEXT_COVERAGE). Both are
 * fixed once the block's write is in: the context takes only rows written before it or with it (context.ts).
 * Kept per version, so a block ranked again is not re-read: as one flat string, " own… \u0001 context… ",
 * not a Map of stems. A Map and its stems were ~30 objects a version, and a warm tenant holds one for
 * nearly every version it searched (~300k at 2,000 users × 150 rows), each marked by every full collection;
 * a string is one object the collector does not look into (~100 MB less heap under load:
 * docs/load.md#searches-take-turns-2026-11-28).
 */
const shares = new WeakMap<NodeVersion, string>();
const CONTEXT_MARK = '\u0001';

function stemShares(view: TenantView, n: NodeVersion): string {
  let found = shares.get(n);
  if (found === undefined) {
    const own = stemsOf(messageText(n) ?? '');
    const context = [...stemsOf(contextText(view, n))].filter((s) => !own.has(s));
    found = ` ${[...own].join(' ')} ${CONTEXT_MARK} ${context.join(' ')} `;
    // A partial view may lack the block's linked rows this round: its context is read again next time.
    if (!view.partial()) shares.set(n, found);
  }
  return found;
}

/** The share stemShares' string gives `stem`: a stem is a word (no spaces), found between two spaces. */
function shareOf(found: string, stem: string): number {
  for (let at = found.indexOf(stem); at >= 0; at = found.indexOf(stem, at + 1))
    if (found.charCodeAt(at - 1) === 32 && found.charCodeAt(at + stem.length) === 32)
      return at < found.indexOf(CONTEXT_MARK) ? 1 : CONTEXT_COVERAGE;
  return 0;
}

/** A query's words as related-word credit compares them: unit vectors by stem, and cosines met so far. */
export interface RelatedQuery {
  words: RelatedWords;
  /** Query stems with a vector, each with its place in `units`. */
  slots: Map<string, number>;
  units: Float32Array[];
  /** Block words (by place in the list) already compared with the query words, and their cosines (one search's memo). */
  seen: Map<number, Float32Array>;
  floor: number;
}

/**
 * The query words related-word credit may be given for: those the word vectors know, names left out. A
 * name (capitalised inside the question) stands for one person or place; the vectors put names near other
 * names ("Melanie" near "Caroline"), which is no evidence of the same one.
 */
export function relatedQuery(query: string, vectors: RelatedWords, floor = RELATED_FLOOR): RelatedQuery {
  const names = new Set<string>();
  for (const [i, token] of query.split(/\s+/).entries()) if (i > 0 && /^\p{Lu}/u.test(token)) for (const w of words(token)) names.add(w);
  const slots = new Map<string, number>();
  const units: Float32Array[] = [];
  for (const w of contentWords(query)) {
    const s = stem(w);
    if (names.has(w) || slots.has(s)) continue;
    const u = vectors.unit(w);
    if (u) slots.set(s, units.push(u) - 1);
  }
  return { words: vectors, slots, units, seen: new Map(), floor };
}

/**
 * Per word list, each block version's distinct content words it knows, by their places in the list: a plain
 * array of small integers, which lives in the heap as one block (a typed array past 64 bytes holds its
 * numbers outside it, with a record the collector sweeps for each).
 */
const ownWords = new WeakMap<RelatedWords, WeakMap<NodeVersion, readonly number[]>>();

/** The best cosine between the query word in `slot` and a word of the block's own text, 0 if none. */
function bestRelated(r: RelatedQuery, n: NodeVersion, slot: number): number {
  let known = ownWords.get(r.words);
  if (!known) ownWords.set(r.words, (known = new WeakMap()));
  let mine = known.get(n);
  if (!mine) {
    const places = new Set(contentWords(messageText(n) ?? '').map((w) => r.words.indexOf(w)));
    places.delete(-1);
    known.set(n, (mine = [...places]));
  }
  let best = 0;
  for (const i of mine) {
    let c = r.seen.get(i);
    if (!c) r.seen.set(i, (c = r.words.cosinesAt(r.units, i, new Float32Array(r.units.length))));
    if (c[slot]! > best) best = c[slot]!;
  }
  return best;
}

/**
 * Weighted share (0-1) of the query's words found in the block's text, context words counting less. With
 * `related`, a query word the block's own text lacks counts for as much as its closest own word is related
 * to it (above the floor), when that is more than its context gives.
 */
export function coverage(view: TenantView, n: NodeVersion, query: ReadonlyMap<string, number>, related?: RelatedQuery): number {
  let total = 0;
  for (const w of query.values()) total += w;
  if (total <= 0) return 0;
  const found = stemShares(view, n);
  let got = 0;
  for (const [s, w] of query) {
    let share = shareOf(found, s);
    const slot = share < 1 ? related?.slots.get(s) : undefined;
    if (related && slot !== undefined) {
      const c = bestRelated(related, n, slot);
      if (c > related.floor) share = Math.max(share, Math.min(1, (c - related.floor) / (1 - related.floor)));
    }
    got += share * w;
  }
  return got / total;
}

/**
 * Adds COVERAGE_WEIGHT × coverage to the score of each of the first `head` candidates (those the read
 * cannot show are left as they are); the rest keep their places after them, as the tail of the fused
 * lists rarely reaches the cut and reading every candidate's context costs time. With word `vectors`, the
 * `cut` + RELATED_SLACK leading shown candidates also get related-word credit (`cut`: the hits asked for).
 */
export function withCoverage<T extends { id: string; score: number }>(
  ranked: readonly T[],
  view: TenantView,
  shown: (id: string) => NodeVersion | null,
  query: string,
  weight: WordWeight,
  head: number,
  vectors?: RelatedWords | null,
  cut = head,
): T[] {
  if (!enabled('coverage') || COVERAGE_WEIGHT <= 0) return [...ranked];
  const q = queryStems(query, weight);
  // The expected answer type's credit (answer-type.ts) rides on the same pass: the same candidates, one sort
  // (so switching `coverage` off switches it off too).
  const type = answerType(query);
  const base = (r: T, n: NodeVersion): number => r.score + answerCredit(type, n);
  const scored = ranked.slice(0, head).map((r) => {
    const n = shown(r.id);
    return { r, n, score: n ? base(r, n) + COVERAGE_WEIGHT * coverage(view, n, q) : r.score };
  });
  const related = vectors && enabled('related') ? relatedQuery(query, vectors) : undefined;
  if (related && related.units.length > 0) {
    // Comparing words costs more than the rest of ranking together: only the candidates that lead once
    // exact words have counted are compared. LoCoMo 1-5 (recall_any@10 / recall_all@10 / recall_any@25 and
    // cosines per search, 25 asked for): all 100 0.851 / 0.728 / 0.901, 2,025; 50 0.851 / 0.728 / 0.900,
    // 1,258; 30 0.851 / 0.728 / 0.900, 847; 25 0.851 / 0.728 / 0.896, 732.
    const leading = scored
      .filter((s) => s.n !== null)
      .sort((a, b) => b.score - a.score)
      .slice(0, cut + RELATED_SLACK);
    for (const s of leading) if (s.n) s.score = base(s.r, s.n) + COVERAGE_WEIGHT * coverage(view, s.n, q, related);
  }
  const top = scored.map((s) => (s.n ? { ...s.r, score: s.score } : s.r)).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return [...top, ...ranked.slice(head)];
}
