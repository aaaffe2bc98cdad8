// The words a block is also found by: those of the blocks linked to it when it was written. A short
// reply ("Yes, last Saturday!") names nothing; its topic is in the turn it answers, linked to it by the
// writer. The rows used are those the block's own version could be read with: known no later than it and
// written before it or in the same write (same captured_at), so a read that sees the block sees them too
// (no leak through the context) and a rebuild from the ledger indexes the same words.
import type { TenantView } from '../tenant-view.ts';
import type { NodeVersion } from '../types.ts';

/**
 * Linked blocks whose words are added, the nearest in write order first. On LoCoMo 1-5 (a turn linked to
 * the turns before and after it, recall_any@10): 1 0.796, 2 0.817, 4 0.825, 6 0.825.
 */
export const CONTEXT_NEIGHBOURS = 4;
/** Characters taken from each linked block. */
const CONTEXT_CHARS = 400;

const readableWith = (r: { seq: number; known_at: number; captured_at: number }, n: NodeVersion): boolean =>
  r.known_at <= n.known_at && (r.seq < n.seq || r.captured_at === n.captured_at);

/** Statements of the blocks linked to `n` (either direction), as readable with `n`; '' when none. */
export function contextText(view: TenantView, n: NodeVersion, max = CONTEXT_NEIGHBOURS): string {
  const found = new Map<string, NodeVersion>();
  const visit = (other: string): void => {
    if (other === n.id || found.has(other)) return;
    let best: NodeVersion | null = null;
    for (const v of view.versionsOf(other)) if (readableWith(v, n) && (best === null || v.seq > best.seq)) best = v;
    if (best?.statement) found.set(other, best);
  };
  for (const e of view.edgesFrom(n.id)) if (readableWith(e, n)) visit(e.target_id);
  for (const e of view.edgesTo(n.id)) if (readableWith(e, n)) visit(e.source_id);
  return [...found.values()]
    .sort((a, b) => Math.abs(a.seq - n.seq) - Math.abs(b.seq - n.seq))
    .slice(0, max)
    .map((m) => (m.statement ?? '').slice(0, CONTEXT_CHARS))
    .join(' ');
}
