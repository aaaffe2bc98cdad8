// A block that ends by asking is rarely what a question about it wants: in a conversation the asker's
// "What inspired you to start making gaming videos?" shares every word with the question later asked
// about it, and the answer is the reply. Such a block keeps only a share of its score; its reply, linked to
// it, still gains from it through the neighbour lift, so the exchange stays found.
import type { NodeVersion } from '../../types.ts';
import { messageText } from './context.ts';
import { enabled } from './mechanisms.ts';

/**
 * Share of its score a block ending in a question keeps. Chosen on LoCoMo conversations 1-5 (turns mode,
 * recall_any@10 / recall_all@10 / MRR): 1 (off) 0.825 / 0.695 / 0.533, 0.85 0.833 / 0.707 / 0.565,
 * 0.7 0.840 / 0.709 / 0.569, 0.5 0.837 / 0.708 / 0.565.
 */
export const ASKING_SHARE = 0.7;

/** The text's last sentence is a question (closing quotes and brackets aside). */
export function endsAsking(text: string): boolean {
  return /\?["'”’)\]]*\s*$/u.test(text);
}

/** Scales the score of each candidate whose shown text ends asking, and re-sorts. */
export function withAskingLowered<T extends { id: string; score: number }>(
  ranked: readonly T[],
  shown: (id: string) => NodeVersion | null,
  share = enabled('asking') ? ASKING_SHARE : 1,
): T[] {
  if (share >= 1) return [...ranked];
  return ranked
    .map((r) => {
      const n = shown(r.id);
      return n && endsAsking(messageText(n) ?? '') ? { ...r, score: r.score * share } : r;
    })
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
}
