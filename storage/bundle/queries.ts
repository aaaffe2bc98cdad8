// list / get / why over a loaded bundle, answered by the server's own read functions (reads.ts,
// traverse.ts, why.ts) on the bundle's TenantView and shaped as the server's JSON responses. The
// certificate's tx_as_of is the bundle's exported_as_of: the instant the answer's knowledge was cut.
import { buildCertificate, nonZeroMasked, type Certificate } from '../certificate.ts';
import { getNode, listNodes } from '../reads.ts';
import { edgeRow, nodeRow, type EdgeRow, type NodePage, type NodeRow } from '../rows-out.ts';
import type { Micros } from '../time.ts';
import type { EdgeType } from '../types.ts';
import { evidenceChain, type Role } from '../why.ts';
import type { LoadedBundle } from './reader.ts';
import { decodeCursor, encodeCursor } from '../cursor.ts';

export interface BundleReadQuery {
  /** Defaults to the bundle's exported_as_of; a later instant is refused (the bundle cannot know it). */
  asOf?: Micros | undefined;
  validAt?: Micros | undefined;
  space?: string | undefined;
}

export class BundleQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BundleQueryError';
  }
}

function asOfOf(b: LoadedBundle, q: BundleReadQuery): Micros {
  const asOf = q.asOf ?? b.exportedAsOf;
  if (asOf > b.exportedAsOf) {
    throw new BundleQueryError(`as_of is later than the bundle's exported_as_of (${b.manifest.exported_as_of}): the bundle cannot say what was known then`);
  }
  return asOf;
}

export interface BundleListQuery extends BundleReadQuery {
  kind?: string | undefined;
  category?: string | undefined;
  /** Page size; omitted: every row. */
  limit?: number | undefined;
  cursor?: string | undefined;
}

export type BundleListOutput = NodePage;

function afterSeqOf(cursor: string): number {
  const seq = decodeCursor(cursor);
  if (seq === null) throw new BundleQueryError('cursor: not a cursor this reader issued');
  return seq;
}

export function bundleList(b: LoadedBundle, q: BundleListQuery): BundleListOutput {
  const asOf = asOfOf(b, q);
  const r = listNodes(b.view, {
    asOf, validAt: q.validAt, space: q.space, kind: q.kind, category: q.category,
    limit: q.limit ?? Number.MAX_SAFE_INTEGER, afterSeq: q.cursor === undefined ? undefined : afterSeqOf(q.cursor),
  });
  return {
    items: r.items.map(nodeRow),
    masked: nonZeroMasked(r.masked) ? { ...r.masked } : null,
    next_cursor: r.nextSeq === null ? null : encodeCursor(r.nextSeq),
    certificate: buildCertificate({ asOf, txAsOf: b.exportedAsOf, masked: r.masked, shownBatches: r.items.map((n) => n.batch_id) }),
  };
}

export interface BundleGetOutput {
  item: NodeRow | null;
  versions: NodeRow[];
  edges: { in: EdgeRow[]; out: EdgeRow[] };
  reason?: 'not_yet' | 'absent';
  certificate: Certificate;
}

export function bundleGet(b: LoadedBundle, id: string, q: BundleReadQuery): BundleGetOutput {
  const asOf = asOfOf(b, q);
  const r = getNode(b.view, id, { asOf, validAt: q.validAt, space: q.space });
  const out: BundleGetOutput = {
    item: r.item ? nodeRow(r.item) : null,
    versions: r.versions.map(nodeRow),
    edges: { in: r.edgesIn.map(edgeRow), out: r.edgesOut.map(edgeRow) },
    certificate: buildCertificate({
      asOf, txAsOf: b.exportedAsOf, masked: r.masked,
      shownBatches: [...r.versions, ...r.edgesIn, ...r.edgesOut].map((x) => x.batch_id),
    }),
  };
  if (r.reason) out.reason = r.reason;
  return out;
}

export interface BundleWhyOutput {
  chain: { node: NodeRow; depth: number; path: string[]; via: EdgeType | null; role: Role }[];
  reason?: 'not_yet' | 'absent';
  certificate: Certificate;
}

export function bundleWhy(b: LoadedBundle, id: string, q: BundleReadQuery & { depth?: number | undefined }): BundleWhyOutput {
  const asOf = asOfOf(b, q);
  const r = evidenceChain(b.view, id, { asOf, validAt: q.validAt, depth: q.depth ?? 3, space: q.space });
  const out: BundleWhyOutput = {
    chain: r.chain.map((l) => ({ node: nodeRow(l.node), depth: l.depth, path: l.path, via: l.via, role: l.role })),
    certificate: buildCertificate({
      asOf, txAsOf: b.exportedAsOf, masked: r.masked,
      shownBatches: r.chain.flatMap((l) => (l.edge ? [l.node.batch_id, l.edge.batch_id] : [l.node.batch_id])),
    }),
  };
  if (r.reason) out.reason = r.reason;
  return out;
}
