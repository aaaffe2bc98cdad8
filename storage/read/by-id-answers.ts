// What get_memory and why answer, shaped from a snapshot: the server's tools and the offline bundle reader
// both answer through these, so a bundle answers as the server did.
import type { Certificate } from './certificate.ts';
import { edgeRow, invalidationRow, type EdgeRow, type InvalidationRow, type NodeRow } from './rows-out.ts';
import type { Snapshot } from './snapshot.ts';
import type { Role } from './why.ts';
import type { EdgeType } from '../types.ts';

export interface GetAnswer {
  item: NodeRow | null;
  versions: NodeRow[];
  edges: { in: EdgeRow[]; out: EdgeRow[] };
  reason?: 'not_yet' | 'absent' | 'invalidated';
  invalidation?: InvalidationRow;
  certificate: Certificate;
}

export interface WhyLink {
  node: NodeRow;
  depth: number;
  path: string[];
  via: EdgeType | null;
  role: Role;
}

export interface WhyAnswer {
  chain: WhyLink[];
  reason?: 'not_yet' | 'absent' | 'invalidated';
  certificate: Certificate;
}

export function getAnswer(snap: Snapshot, id: string): GetAnswer {
  const r = snap.get(id);
  const out: GetAnswer = {
    item: r.item ? snap.row(r.item) : null,
    versions: r.versions.map((v) => snap.row(v)),
    edges: { in: r.edgesIn.map(edgeRow), out: r.edgesOut.map(edgeRow) },
    certificate: snap.certificate({
      masked: r.masked,
      shownBatches: [...r.versions, ...r.edgesIn, ...r.edgesOut].map((x) => x.batch_id),
    }),
  };
  if (r.reason) out.reason = r.reason;
  if (r.invalidation && r.reason === 'invalidated') out.invalidation = invalidationRow(r.invalidation);
  return out;
}

export function whyAnswer(snap: Snapshot, id: string, depth: number): WhyAnswer {
  const r = snap.why(id, depth);
  const out: WhyAnswer = {
    chain: r.chain.map((l) => ({ node: snap.row(l.node), depth: l.depth, path: l.path, via: l.via, role: l.role })),
    certificate: snap.certificate({
      masked: r.masked,
      shownBatches: r.chain.flatMap((l) => (l.edge ? [l.node.batch_id, l.edge.batch_id] : [l.node.batch_id])),
    }),
  };
  if (r.reason) out.reason = r.reason;
  return out;
}
