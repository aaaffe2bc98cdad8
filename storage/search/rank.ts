// Ranking: reciprocal-rank fusion of the full-text and vector lists, then scores for blocks reached by
// expansion (the score of the block they were reached from, times a weight for each hop's edge type).
import type { EdgeType } from '../types.ts';
import type { Hit } from './lance-index.ts';

/**
 * The RRF constant. The textbook 60 flattens the head of each list; on LoCoMo turns a small constant
 * keeps the first full-text hits ahead (recall@10: k=5 0.670, k=15 0.660, k=60 0.632, 4 conversations).
 */
export const RRF_K = Number(process.env.SVC_TUNE_K ?? 5);

/**
 * Weight of the vector list against the full-text list. The local hashing embedder is weaker than BM25
 * (recall@10 0.47 against 0.67 on LoCoMo turns); at equal weight it drags fusion down (0.58).
 */
export const VECTOR_WEIGHT = Number(process.env.SVC_TUNE_VW ?? 0.3);

/** Weight of the word-vector list (word-vectors.ts), when the index has one. */
export const WORD_VECTOR_WEIGHT = Number(process.env.SVC_TUNE_WVW ?? 0.3);

/** Weight of the full-text list restricted to the dates the query names (time-query.ts). */
export const DATED_WEIGHT = Number(process.env.SVC_TUNE_DW ?? 1);

export interface Fused {
  id: string;
  score: number;
}

/**
 * Fuses ranked lists of rows into one ranking of node ids: each id scores Σ weight / (k + rank) over
 * the lists it appears in (its best row per list). Scores are scaled so an id first in every list has 1.
 */
export function fuse(lists: readonly { hits: readonly Hit[]; weight: number }[], k = RRF_K): Fused[] {
  const scores = new Map<string, number>();
  let best = 0;
  for (const { hits, weight } of lists) {
    best += weight / (k + 1);
    const seen = new Set<string>();
    let rank = 0;
    for (const h of hits) {
      if (seen.has(h.id)) continue;
      seen.add(h.id);
      rank++;
      scores.set(h.id, (scores.get(h.id) ?? 0) + weight / (k + rank));
    }
  }
  return [...scores].map(([id, s]) => ({ id, score: best > 0 ? s / best : 0 })).sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/**
 * Shares of the fused scores of a candidate's matching neighbours (one hop, then two hops away) it gains
 * before the direct hits are cut. A block is read in the context of the blocks linked to it over the
 * followed edges (a reply, the turn it answers, the exchange around them): one whose surroundings also
 * match is more likely the topic than an isolated hit. Chosen on LoCoMo (turns linked CONCURRENT_SIGNAL,
 * recall_any@10 over 1,536 questions): none 0.70; one hop 0.5 → 0.73; two hops 0.5, 0.2 → 0.74;
 * 0.5, 0.35 → 0.75 (runs differ by about ±0.01).
 */
export const NEIGHBOUR_WEIGHTS: readonly [number, number] = [Number(process.env.SVC_TUNE_N1 ?? 0.5), Number(process.env.SVC_TUNE_N2 ?? 0.35)];

/**
 * Re-ranks fused candidates: each adds the weighted fused scores of the candidates one and two hops away
 * (`neighbours` visits the ids linked to one id; paths back to the candidate itself are skipped). Only
 * candidates already found gain: no extra index query.
 */
export function withNeighbours(fused: readonly Fused[], neighbours: (id: string, visit: (to: string) => void) => void, weights: readonly [number, number] = NEIGHBOUR_WEIGHTS): Fused[] {
  const [w1, w2] = weights;
  if (w1 <= 0 && w2 <= 0) return [...fused];
  const base = new Map(fused.map((f) => [f.id, f.score]));
  return fused
    .map((f) => {
      let lift = 0;
      neighbours(f.id, (m) => {
        if (m === f.id) return;
        lift += w1 * (base.get(m) ?? 0);
        if (w2 > 0) neighbours(m, (m2) => { if (m2 !== f.id) lift += w2 * (base.get(m2) ?? 0); });
      });
      return { id: f.id, score: f.score + lift };
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}

/**
 * How much of a block's score passes along one edge. Causes and effects pass the most; co-occurrence
 * and argument the least; a hop is always worth less than the block it starts from.
 */
export const EDGE_WEIGHT: Record<EdgeType, number> = {
  CAUSES: 0.8, TRIGGERS: 0.8, CONTRIBUTING_FACTOR: 0.7, PREVENTS: 0.7,
  SUPERSEDES: 0.75, RESTATES: 0.75, CONCURRENT_SIGNAL: 0.6,
  SUPPORTS: 0.6, QUALIFIES: 0.55, CONTRADICTS: 0.55,
  DERIVED_FROM: 0.6, DEPENDS_ON: 0.5, MENTIONS: 0.45,
};

export function expansionScore(fromScore: number, via: EdgeType): number {
  return fromScore * EDGE_WEIGHT[via];
}
