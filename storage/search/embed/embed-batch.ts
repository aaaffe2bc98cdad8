// Both vector columns of a batch (the local embedder's and the word vectors') in one pass over its texts:
// each text is split into words once for the two embedders, not once each. The vectors are those
// embedLocal and WordVectors.embed give for each text alone, bit for bit.
import { LOCAL_DIMENSION, embedLocalWords } from './local-embedder.ts';
import { words as splitWords } from './text-features.ts';
import type { WordVectors } from './word-vectors.ts';

export interface BatchVectors {
  /** Row i's local vector at i * LOCAL_DIMENSION; null when not asked for. */
  local: Float32Array | null;
  /** Row i's word vector at i * words.dimension; null without word vectors. */
  wvecs: Float32Array | null;
}

export function embedBatch(texts: readonly string[], local: boolean, words: WordVectors | null): BatchVectors {
  const n = texts.length;
  const d = words?.dimension ?? 0;
  const flatLocal = local ? new Float32Array(n * LOCAL_DIMENSION) : null;
  const flatWords = words ? new Float32Array(n * d) : null;
  if (!flatLocal && !flatWords) return { local: null, wvecs: null };
  for (let i = 0; i < n; i++) {
    const ws = splitWords(texts[i]!);
    if (flatLocal) embedLocalWords(ws, flatLocal.subarray(i * LOCAL_DIMENSION, (i + 1) * LOCAL_DIMENSION));
    if (words && flatWords) words.embedWords(ws, flatWords.subarray(i * d, (i + 1) * d));
  }
  return { local: flatLocal, wvecs: flatWords };
}

/** A flat column's rows as views into it (no copy). */
export const rowViews = (flat: Float32Array, dimension: number): Float32Array[] =>
  Array.from({ length: dimension > 0 ? flat.length / dimension : 0 }, (_, i) => flat.subarray(i * dimension, (i + 1) * dimension));
