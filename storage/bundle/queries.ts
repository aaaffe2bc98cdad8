// list / get / why over a loaded bundle, answered by the server's own Snapshot on the bundle's
// TenantView and shaped as the server's JSON responses. The certificate's tx_as_of is the bundle's exported_as_of: the instant the answer's knowledge was cut.
import { nonZeroMasked, type Certificate } from '../read/certificate.ts';
import { resolveLens, type ReadLens } from '../read/lens.ts';
import { edgeRow, invalidationRow, type EdgeRow, type InvalidationRow, type NodePage, type NodeRow } from '../read/rows-out.ts';
import { Snapshot } from '../read/snapshot.ts';
import type { Micros } from '../time.ts';
import type { EdgeType } from '../types.ts';
import type { Role } from '../read/why.ts';
import type { LoadedBundle } from './reader.ts';
import { decodeCursor, encodeCursor } from '../read/cursor.ts';

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
    throw new BundleQueryError(
      `as_of is later than the bundle's exported_as_of (${b.manifest.exported_as_of}): the bundle cannot say what was known then`,
    );
  }
  return asOf;
}

export interface BundleListQuery extends BundleReadQuery {
  kind?: string | undefined;
  category?: string | undefined;
  /** Page size; omitted: every row. */
  limit?: number | undefined;
  cursor?: string | undefined;
  currentOnly?: boolean | undefined;
  includeInvalidated?: boolean | undefined;
}

export type BundleListOutput = NodePage;

function afterSeqOf(cursor: string): number {
  const seq = decodeCursor(cursor);
  if (seq === null) throw new BundleQueryError('cursor: not a cursor this reader issued');
  return seq;
}

/** The bundle seen through the server's own snapshot: the same rules for superseded and invalidated blocks. */
function snapshotOf(
  b: LoadedBundle,
  q: BundleReadQuery,
  lens: Partial<Pick<ReadLens, 'currentOnly' | 'includeInvalidated'>> = {},
): Snapshot {
  return new Snapshot(
    b.view,
    resolveLens({ asOf: asOfOf(b, q), validAt: q.validAt, space: q.space, ...lens }, b.exportedAsOf),
    b.exportedAsOf,
  );
}

export function bundleList(b: LoadedBundle, q: BundleListQuery): BundleListOutput {
  const snap = snapshotOf(b, q, { currentOnly: q.currentOnly, includeInvalidated: q.includeInvalidated });
  const r = snap.list({
    kind: q.kind,
    category: q.category,
    limit: q.limit ?? Number.MAX_SAFE_INTEGER,
    afterSeq: q.cursor === undefined ? undefined : afterSeqOf(q.cursor),
  });
  return {
    items: r.items.map((n) => snap.row(n)),
    masked: nonZeroMasked(r.masked) ? { ...r.masked } : null,
    next_cursor: r.nextSeq === null ? null : encodeCursor(r.nextSeq),
    certificate: snap.certificate({ masked: r.masked, shownBatches: r.items.map((n) => n.batch_id), invalidated: r.invalidated }),
  };
}

export interface BundleGetOutput {
  item: NodeRow | null;
  versions: NodeRow[];
  edges: { in: EdgeRow[]; out: EdgeRow[] };
  reason?: 'not_yet' | 'absent' | 'invalidated';
  invalidation?: InvalidationRow;
  certificate: Certificate;
}

export function bundleGet(b: LoadedBundle, id: string, q: BundleReadQuery): BundleGetOutput {
  const snap = snapshotOf(b, q);
  const r = snap.get(id);
  const out: BundleGetOutput = {
    item: r.item ? snap.row(r.item) : null,
    versions: r.versions.map((v) => snap.row(v)),
    edges: { in: r.edgesIn.map(edgeRow), out: r.edgesOut.map(edgeRow) },
    certificate: snap.certificate({ masked: r.masked, shownBatches: [...r.versions, ...r.edgesIn, ...r.edgesOut].map((x) => x.batch_id) }),
  };
  if (r.reason) out.reason = r.reason;
  if (r.invalidation && r.reason === 'invalidated') out.invalidation = invalidationRow(r.invalidation);
  return out;
}

export interface BundleWhyOutput {
  chain: { node: NodeRow; depth: number; path: string[]; via: EdgeType | null; role: Role }[];
  reason?: 'not_yet' | 'absent' | 'invalidated';
  certificate: Certificate;
}

export function bundleWhy(b: LoadedBundle, id: string, q: BundleReadQuery & { depth?: number | undefined }): BundleWhyOutput {
  const snap = snapshotOf(b, q);
  const r = snap.why(id, q.depth ?? 3);
  const out: BundleWhyOutput = {
    chain: r.chain.map((l) => ({ node: snap.row(l.node), depth: l.depth, path: l.path, via: l.via, role: l.role })),
    certificate: snap.certificate({
      masked: r.masked,
      shownBatches: r.chain.flatMap((l) => (l.edge ? [l.node.batch_id, l.edge.batch_id] : [l.node.batch_id])),
    }),
  };
  if (r.reason) out.reason = r.reason;
  return out;
}
