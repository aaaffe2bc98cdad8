// What a whole tenant's list asks of the store without loading the tenant: its node rows in tseq order a
// page at a time, filtered as the list filters them, and the counts a read at a past as_of reports over the
// whole tenant. The filters are written twice here, once as Cypher for the engine's rows and once as a
// predicate for the write journal's, side by side so they cannot drift apart.
import type { Micros } from '../../time.ts';
import type { NodeVersion } from '../../types.ts';
import { inForceAt, knownAt } from '../../visibility.ts';

/** Node rows of one tenant with tseq above `after`, in tseq order, at most `limit`, that the filters admit. */
export interface NodePageQuery {
  after: number;
  limit: number;
  kind?: string | undefined;
  category?: string | undefined;
  /** In force at this instant (asserted by then, valid_from <= it < valid_to). */
  validAt?: Micros | undefined;
  /** Known at this instant (known_at <= it); undefined: any. */
  knownBy?: Micros | undefined;
}

/** What a whole tenant's list at `asOf` counts over every row of the tenant. */
export interface ListCountsQuery {
  asOf: Micros;
  validAt?: Micros | undefined;
  kind?: string | undefined;
  category?: string | undefined;
  /** Count the node versions known at asOf whose node has an invalidation known at asOf. */
  countInvalidated: boolean;
}

export interface ListCounts {
  /** The latest known_at of any node, edge, verdict or invalidation of the tenant (-Infinity: none). */
  latestKnownAt: Micros;
  masked: { node: number; edge: number; verdict: number };
  invalidated: number;
}

/** Text cells are stored JSON-encoded (see kuzu-graph.ts), so a literal compared with one is encoded too. */
export type EncodedLiteral = (text: string) => string;

/** The validity test on `x` as Cypher, or '' without valid_at. */
function inForceCypher(validAt: Micros | undefined): string {
  if (validAt === undefined) return '';
  const v = Math.trunc(validAt);
  return ` AND x.asserted_at <= ${v} AND x.valid_from <= ${v} AND x.valid_to > ${v}`;
}

/** The filters of a node row on `x` but the tenant's and the page's, as Cypher conditions each led by AND. */
export function nodeFilterCypher(q: Pick<NodePageQuery, 'kind' | 'category' | 'validAt' | 'knownBy'>, lit: EncodedLiteral): string {
  let out = '';
  if (q.kind !== undefined) out += ` AND x.kind = ${lit(q.kind)}`;
  if (q.category !== undefined) out += ` AND x.category = ${lit(q.category)}`;
  out += inForceCypher(q.validAt);
  if (q.knownBy !== undefined) out += ` AND x.known_at <= ${Math.trunc(q.knownBy)}`;
  return out;
}

/** The same filters on a decoded row (the write journal's rows). */
export function nodeMatches(n: NodeVersion, q: NodePageQuery): boolean {
  if (n.tseq <= q.after) return false;
  if (q.kind !== undefined && n.kind !== q.kind) return false;
  if (q.category !== undefined && n.category !== q.category) return false;
  if (!inForceAt(n, q.validAt)) return false;
  return q.knownBy === undefined || knownAt(n, q.knownBy);
}

/** Validity on `x` for the edges' masked count: in force at valid_at, as Cypher. */
export const edgeInForceCypher = inForceCypher;
