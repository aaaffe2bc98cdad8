// The row rules of an invalidation, in one place. An invalidation retracts every version of a node id
// from reads whose as_of is at or after its knowledge instant; the node's rows are never touched. Planned
// inside the writer queue against the committed view plus the commit group's overlay, so two requests
// invalidating the same node in one group write one row.
import type { Micros } from '../time.ts';
import type { BatchRow, Invalidation } from '../types.ts';
import type { Overlay, Sequencer } from './write-plan.ts';

export interface InvalidateInput {
  id: string;
  reason: string;
  by?: string | null | undefined;
  backfill?: { declared_captured_at: Micros; reason: string } | undefined;
  /** An app-scoped address can invalidate only nodes of its space; others are not found. */
  space?: string | undefined;
}

export type InvalidateOutcome =
  | { kind: 'written'; invalidation: Invalidation; batch: BatchRow | null }
  | { kind: 'already'; invalidation: Invalidation }
  | { kind: 'not_found' }
  /** The declared backfill instant is later than the capture instant, or earlier than the node was known. */
  | { kind: 'bad_backfill'; why: string };

export function planInvalidation(
  tenant: string,
  input: InvalidateInput,
  overlay: Overlay,
  capturedAt: Micros,
  seqs: Sequencer,
): InvalidateOutcome {
  // "Visible now": any version known at the capture instant (whatever its validity), in the address's space.
  const versions = overlay
    .versionsOf(input.id)
    .filter((v) => v.known_at <= capturedAt && (input.space === undefined || v.space === input.space));
  if (versions.length === 0) return { kind: 'not_found' };
  const existing = overlay
    .invalidationsOf(input.id)
    .filter((i) => i.known_at <= capturedAt)
    .sort((a, b) => a.known_at - b.known_at)[0];
  if (existing) return { kind: 'already', invalidation: existing };
  const declared = input.backfill?.declared_captured_at;
  if (declared !== undefined) {
    if (declared > capturedAt) return { kind: 'bad_backfill', why: 'declared_captured_at is later than the capture instant (now)' };
    // Retracting a node before the ledger knew it would make an earlier as_of show a hole it never had.
    if (!versions.some((v) => v.known_at <= declared))
      return { kind: 'bad_backfill', why: 'the node was not yet known at declared_captured_at' };
  }
  const batchId = input.backfill ? `batch-${capturedAt}` : null;
  const first = versions.reduce((a, b) => (b.seq < a.seq ? b : a));
  const seq = seqs.nextSeq();
  const invalidation: Invalidation = {
    seq,
    tseq: seq,
    tenant,
    target_id: input.id,
    space: first.space,
    reason: input.reason,
    by: input.by ?? null,
    invalidated_at: capturedAt,
    known_at: declared ?? capturedAt,
    batch_id: batchId,
  };
  overlay.stageInvalidation(invalidation);
  const batch =
    input.backfill && batchId
      ? {
          tenant,
          id: batchId,
          declared_captured_at: input.backfill.declared_captured_at,
          reason: input.backfill.reason,
          captured_at: capturedAt,
          tseq: seq,
        }
      : null;
  return { kind: 'written', invalidation, batch };
}
