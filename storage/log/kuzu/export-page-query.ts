// What an export asks of the store without loading the tenant: one table's rows of one tenant, a page at a
// time in seq order (the order the tenant's view holds them in, so a bundle staged from pages is the one
// staged from the view), cut at the sequence number committed when the export started.
import type { EdgeRecord, Invalidation, NodeVersion, Verdict } from '../../types.ts';

/** The tables an export pages through, and their rows. */
export interface ExportRowsOf {
  nodes: NodeVersion;
  edges: EdgeRecord;
  verdicts: Verdict;
  invalidations: Invalidation;
}
export type ExportTable = keyof ExportRowsOf;

/** A page of one table for an export: `after` < seq <= `upTo`, known_at <= `knownBy`, at most `limit` rows. */
export interface ExportPageQuery {
  after: number;
  upTo: number;
  limit: number;
  knownBy: number;
  /**
   * Nodes: only this space's (walked from its TenantSpace row through HoldsBlock, no scan). Edges: only
   * those whose two ends are ids of a version of this space known by `knownBy` with seq <= `upTo` (and of
   * `category` when given), a filter applied in the engine; the caller still checks each end.
   */
  space?: string | undefined;
  /** Nodes: only this category's; edges with `space`: ends of this category. */
  category?: string | undefined;
}
