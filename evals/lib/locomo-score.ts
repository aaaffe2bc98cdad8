// Retrieval scores for LoCoMo questions: recall_any@k (some evidence turn in the first k), recall_all@k
// (every evidence turn in the first k), reciprocal rank of the first evidence turn.
export const KS = [5, 10, 25] as const;
export const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

export interface Outcome {
  category: number;
  evidence: readonly string[];
  ranked: readonly string[];
}

export type Scores = Record<string, number> & { n: number; mrr: number };

export function score(outcomes: readonly Outcome[]): Scores {
  const s: Record<string, number> = { n: outcomes.length, mrr: 0 };
  for (const k of KS) {
    s[`recall_any@${k}`] = 0;
    s[`recall_all@${k}`] = 0;
  }
  for (const o of outcomes) {
    for (const k of KS) {
      const top = new Set(o.ranked.slice(0, k));
      if (o.evidence.some((e) => top.has(e))) s[`recall_any@${k}`]! += 1;
      if (o.evidence.every((e) => top.has(e))) s[`recall_all@${k}`]! += 1;
    }
    const first = o.ranked.findIndex((t) => o.evidence.includes(t));
    if (first >= 0) s.mrr! += 1 / (first + 1);
  }
  if (outcomes.length > 0) for (const key of Object.keys(s)) if (key !== 'n') s[key] = s[key]! / outcomes.length;
  return s as Scores;
}

export function byCategory(outcomes: readonly Outcome[]): Record<string, Scores> {
  const out: Record<string, Scores> = {};
  for (const [cat, name] of Object.entries(CATEGORY_NAMES)) out[name] = score(outcomes.filter((o) => o.category === Number(cat)));
  return out;
}
