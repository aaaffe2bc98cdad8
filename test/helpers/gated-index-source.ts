// The ledger as a search index's source, with the indexer held on rows of one space: it reads their linked
// words through a gate until `open()`, so the rows committed after them stay queued (or held, during a
// catch-up) for a test to count. `hold()` writes two such rows.
import type { Ledger } from '../../storage/log/ledger.ts';
import type { IndexSource } from '../../storage/search/search-index.ts';

export function gatedIndexSource(ledger: Ledger, space: string): { source: IndexSource; open: () => void; hold: () => Promise<unknown> } {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const source: IndexSource = {
    renumberedAbove: () => ledger.renumberedAbove(),
    linksView: async (tenant, nodes) => {
      if (nodes.some((n) => n.space === space)) await gate;
      return ledger.linksView(tenant, nodes);
    },
    isDropping: (tenant) => ledger.isDropping(tenant),
    isImported: (row) => ledger.isImported(row),
    onCommit: (listener) => ledger.onCommit(listener),
    onTenantDropped: (listener) => ledger.onTenantDropped(listener),
    committedSeq: () => ledger.committedSeq(),
    nodesBetween: (after, upTo, limit) => ledger.nodesBetween(after, upTo, limit),
  };
  // Linked, so the indexer reads their words (first versions of unlinked ids are worded without it).
  const hold = () =>
    ledger.write('t', {
      space,
      nodes: [
        { id: `${space}-held-0`, kind: 'claim', statement: 'Held row' },
        { id: `${space}-held-1`, kind: 'claim', statement: 'Held row too' },
      ],
      edges: [{ source_id: `${space}-held-0`, target_id: `${space}-held-1`, edge_type: 'CAUSES' }],
    });
  return { source, open, hold };
}
