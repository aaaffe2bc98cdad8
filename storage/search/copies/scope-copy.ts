// What a search reads of a scope's copy, whether it is held in memory (space-copies.ts) or searched in its
// file (file-copy.ts).
import type { Hit, RowFilter } from '../index-row.ts';

export interface ScopeCopy {
  /** Whether the copy holds the scope's vectors (otherwise its full text only). */
  readonly hasVectors: boolean;
  /** The highest seq held: rows at or below it are here already. */
  readonly maxSeq: number;
  readonly size: number;
  /**
   * BM25 over the rows known at the read's as_of; null when the copy is gone since it was handed out (ask
   * again). A copy in memory answers at once, one in its file when its thread has read it.
   */
  fullText(tokens: readonly string[], f: RowFilter, limit: number): Hit[] | null | Promise<Hit[] | null>;
  /** Cosine by a flat scan; null as for fullText. */
  nearest(query: Float32Array, f: RowFilter, limit: number, column: 'vector' | 'wvec'): Hit[] | null | Promise<Hit[] | null>;
}
