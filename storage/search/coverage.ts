// Query-term coverage: how much of what the query asks about a block's own words (and, at a lower share,
// the words of the blocks it is read with) contain. Fusion rewards a block for ranking high in any list;
// a block matching one rare word strongly can then outrank one that matches every part of the question.
// A second pass adds a share of the coverage to each candidate's fused score. Words weigh by their rarity
// in English (the word vectors' smooth inverse frequency; a word they do not know, a name, weighs most).
import type { TenantView } from '../tenant-view.ts';
import type { NodeVersion } from '../types.ts';
import { contextText, messageText } from './context.ts';
import { enabled } from './mechanisms.ts';
import { stem, words, contentWords } from './text-features.ts';

/**
 * Share of the coverage added to the fused score. Chosen on LoCoMo conversations 1-5, turns mode with the
 * asking rule (recall_any@10 / recall_all@10 / MRR): none 0.840 / 0.709 / 0.569, 0.2 0.843 / 0.713 / 0.577,
 * 0.4 0.847 / 0.720 / 0.584, 0.7 0.850 / 0.721 / 0.586.
 */
export const COVERAGE_WEIGHT = 0.7;
/** The share a query word counts for when only the block's context has it (not tuned). */
export const CONTEXT_COVERAGE = 0.5;

export type WordWeight = (word: string) => number;

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
 * Kept per version, so a block ranked again is not re-read.
 */
const shares = new WeakMap<NodeVersion, Map<string, number>>();

function stemShares(view: TenantView, n: NodeVersion): Map<string, number> {
  let m = shares.get(n);
  if (!m) {
    m = new Map();
    for (const s of stemsOf(contextText(view, n))) m.set(s, CONTEXT_COVERAGE);
    for (const s of stemsOf(messageText(n) ?? '')) m.set(s, 1);
    shares.set(n, m);
  }
  return m;
}

/** Weighted share (0-1) of the query's words found in the block's text, context words counting less. */
export function coverage(view: TenantView, n: NodeVersion, query: ReadonlyMap<string, number>): number {
  let total = 0;
  for (const w of query.values()) total += w;
  if (total <= 0) return 0;
  const found = stemShares(view, n);
  let got = 0;
  for (const [s, w] of query) got += (found.get(s) ?? 0) * w;
  return got / total;
}

/**
 * Adds COVERAGE_WEIGHT × coverage to the score of each of the first `head` candidates (those the read
 * cannot show are left as they are); the rest keep their places after them, as the tail of the fused
 * lists rarely reaches the cut and reading every candidate's context costs time.
 */
export function withCoverage<T extends { id: string; score: number }>(
  ranked: readonly T[],
  view: TenantView,
  shown: (id: string) => NodeVersion | null,
  query: string,
  weight: WordWeight,
  head: number,
): T[] {
  if (!enabled('coverage') || COVERAGE_WEIGHT <= 0) return [...ranked];
  const q = queryStems(query, weight);
  const top = ranked
    .slice(0, head)
    .map((r) => {
      const n = shown(r.id);
      return n ? { ...r, score: r.score + COVERAGE_WEIGHT * coverage(view, n, q) } : r;
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
  return [...top, ...ranked.slice(head)];
}
