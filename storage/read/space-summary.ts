// What `list_spaces` answers per space, from counts made in memory (a space's read model) or in the
// graph store (a whole tenant): one shape and one order for both.
import { formatInstant } from '../time.ts';
import type { SpaceCounts } from '../types.ts';

export interface SpaceSummary {
  space: string;
  nodes: number;
  edges: number;
  first_known_at: string;
  last_known_at: string;
}

/** The spaces holding any row, by name. */
export function spaceSummaries(counts: Iterable<SpaceCounts>): SpaceSummary[] {
  return [...counts]
    .filter((c) => c.nodes + c.edges > 0)
    .sort((a, b) => (a.space < b.space ? -1 : a.space > b.space ? 1 : 0))
    .map((c) => ({
      space: c.space,
      nodes: c.nodes,
      edges: c.edges,
      first_known_at: formatInstant(c.firstKnownAt),
      last_known_at: formatInstant(c.lastKnownAt),
    }));
}
