// Random prefilter columns for index rows, drawn as both in-memory copies' tests draw them (the vector
// and the full-text mirror against LanceDB), so their corpora cover the same filters.
import type { FilterCells } from '../../storage/search/copies/vector-mirror.ts';

/** Instants 1000-1100; `valid_to` either inside that range or open. */
export function randomCells(rand: () => number, id: string, seq: number): FilterCells {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  return {
    id,
    seq,
    space: pick(['a', 'b']),
    kind: pick(['claim', 'turn']),
    category: pick([null, 'x', 'y']),
    known_at: 1000 + Math.floor(rand() * 100),
    asserted_at: 1000 + Math.floor(rand() * 100),
    valid_from: 1000 + Math.floor(rand() * 50),
    valid_to: pick([1080, 1e15]),
  };
}

/** A row's cells for the hand-made cases: space `s`, kind `k`, known and valid from instant 1 to 9. */
export const plainCells = (id: string, seq: number): FilterCells => ({
  id,
  seq,
  space: 's',
  kind: 'k',
  category: null,
  known_at: 1,
  asserted_at: 1,
  valid_from: 1,
  valid_to: 9,
});
