// list / get / why over a loaded bundle, answered by the server's own Snapshot on the bundle's
// TenantView and shaped as the server's JSON responses. The certificate's tx_as_of is the bundle's exported_as_of: the instant the answer's knowledge was cut.
import { nonZeroMasked } from '../read/certificate.ts';
import { resolveLens, type ReadLens } from '../read/lens.ts';
import type { NodePage } from '../read/rows-out.ts';
import { Snapshot } from '../read/snapshot.ts';
import { getAnswer, whyAnswer, type GetAnswer, type WhyAnswer } from '../read/by-id-answers.ts';
import type { Micros } from '../time.ts';
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

export type BundleGetOutput = GetAnswer;

export function bundleGet(b: LoadedBundle, id: string, q: BundleReadQuery): BundleGetOutput {
  return getAnswer(snapshotOf(b, q), id);
}

export type BundleWhyOutput = WhyAnswer;

export function bundleWhy(b: LoadedBundle, id: string, q: BundleReadQuery & { depth?: number | undefined }): BundleWhyOutput {
  return whyAnswer(snapshotOf(b, q), id, q.depth ?? 3);
}
