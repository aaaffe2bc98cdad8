// Ranking: reciprocal-rank fusion of the full-text and vector lists, then scores for blocks reached by
// expansion (the score of the block they were reached from, times a weight for each hop's edge type).
import type { EdgeType } from '../../types.ts';
import type { Hit } from '../index-row.ts';
import { enabled } from './mechanisms.ts';

/**
 * The RRF constant. The textbook 60 flattens the head of each list; on LoCoMo turns a small constant
 * keeps the first full-text hits ahead. Re-chosen on conversations 1-5 only, with every list in place
 * (recall_any@10 / MRR): k=2 0.809 / 0.499, 5 0.811 / 0.505, 10 0.807 / 0.490, 20 0.791 / 0.459, 60 0.736 / 0.391.
 */
export const RRF_K = 5;

/**
 * Weight of the vector list against the full-text list. The local hashing embedder is weaker than BM25;
 * on LoCoMo 1-5 (recall_any@10 / MRR) 0: 0.813 / 0.491, 0.15: 0.811 / 0.494, 0.3: 0.811 / 0.505, 0.5: 0.805 / 0.512.
 */
export const VECTOR_WEIGHT = 0.3;

/**
 * Weight of the word-vector list (word-vectors.ts), when the index has one. LoCoMo 1-5 (recall_any@10 /
 * recall_all@10 / MRR): none 0.803 / 0.678 / 0.481, 0.15 0.807 / 0.683 / 0.496, 0.3 0.811 / 0.692 / 0.505,
 * 0.5 0.812 / 0.695 / 0.512, 0.8 0.811 / 0.693 / 0.504.
 */
export const WORD_VECTOR_WEIGHT = 0.5;

/**
 * Weight of the full-text list restricted to the dates the query names (time-query.ts). LoCoMo 1-5
 * (recall_any@10 / MRR): none 0.791 / 0.492, 0.5 0.805 / 0.502, 1 0.811 / 0.505, 2 0.809 / 0.501.
 */
export const DATED_WEIGHT = 1;

/**
 * Weight of the list of blocks mentioning the entities the query names (entity-reach.ts). LoCoMo 1-5,
 * messages mode (recall_any@10 / recall_all@10 / MRR): before messages were read as exchanges, none 0.715 /
 * 0.587 / 0.481, 0.5 0.725 / 0.593 / 0.483, 1 0.713 / 0.588 / 0.466; with exchanges and the asking rule,
 * none 0.834 / 0.708 / 0.563, 0.5 0.840 / 0.724 / 0.591, 1 0.841 / 0.724 / 0.585. Turns mode writes no
 * entities, so the list is empty there.
 */
export const ENTITY_WEIGHT = 0.5;

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
 * match is more likely the topic than an isolated hit. Re-chosen on LoCoMo conversations 1-5 only (the
 * former 0.5, 0.35 were chosen on all ten), with linked words indexed and all lists in place
 * (recall_any@10 / recall_all@10 / MRR): none 0.793 / 0.662 / 0.526; 0.25, 0.35 0.825 / 0.695 / 0.533;
 * 0.5, 0.35 0.824 / 0.693 / 0.524; 0.25, 0.2 0.818 / 0.689 / 0.537 (differences under 0.01 are noise).
 */
export const NEIGHBOUR_WEIGHTS: readonly [number, number] = [0.25, 0.35];

/**
 * Re-ranks fused candidates: each adds the weighted fused scores of the candidates one and two hops away
 * (`neighbours` visits the ids linked to one id; paths back to the candidate itself are skipped). Only
 * candidates already found gain: no extra index query.
 */
export function withNeighbours(
  fused: readonly Fused[],
  neighbours: (id: string, visit: (to: string) => void) => void,
  weights: readonly [number, number] = enabled('neighbours') ? NEIGHBOUR_WEIGHTS : [0, 0],
): Fused[] {
  const [w1, w2] = weights;
  if (w1 <= 0 && w2 <= 0) return [...fused];
  const base = new Map(fused.map((f) => [f.id, f.score]));
  return fused
    .map((f) => {
      let lift = 0;
      neighbours(f.id, (m) => {
        if (m === f.id) return;
        lift += w1 * (base.get(m) ?? 0);
        if (w2 > 0)
          neighbours(m, (m2) => {
            if (m2 !== f.id) lift += w2 * (base.get(m2) ?? 0);
          });
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
  CAUSES: 0.8,
  TRIGGERS: 0.8,
  CONTRIBUTING_FACTOR: 0.7,
  PREVENTS: 0.7,
  SUPERSEDES: 0.75,
  RESTATES: 0.75,
  CONCURRENT_SIGNAL: 0.6,
  SUPPORTS: 0.6,
  QUALIFIES: 0.55,
  CONTRADICTS: 0.55,
  DERIVED_FROM: 0.6,
  DEPENDS_ON: 0.5,
  MENTIONS: 0.45,
};

export function expansionScore(fromScore: number, via: EdgeType): number {
  return fromScore * EDGE_WEIGHT[via];
}
