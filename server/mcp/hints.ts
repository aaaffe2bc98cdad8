// What a model is told about each tool beyond its schema: the behaviour annotations (does it write, can
// it take something back, is a repeat harmless), derived from each operation's `effect`, and the
// server's instructions.
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { AnyOperation } from '../../tools/operation.ts';

// A write that hides something must say it deletes nothing; the annotations cannot.
const APPEND_ONLY_NOTE =
  ' Append-only: nothing is deleted; reads with an earlier as_of still see the block, and include_invalidated=true shows it with its invalidation.';

export function annotationsOf(op: AnyOperation): ToolAnnotations {
  const e = op.effect;
  // The title is the tool's own `title`; repeating it here would only lengthen every listing.
  const a: ToolAnnotations = { readOnlyHint: e.readOnly, openWorldHint: false };
  if (!e.readOnly) {
    a.destructiveHint = e.destructive ?? false;
    a.idempotentHint = e.idempotent ?? false;
  }
  return a;
}

/** The operation's description, with what its annotations cannot say (append-only invalidation). */
export function describeEffect(op: AnyOperation): string {
  const d = op.description;
  const says = /append-only/i.test(d) && /earlier as_of/i.test(d);
  return op.effect.destructive && !says ? d + APPEND_ONLY_NOTE : d;
}

export const INSTRUCTIONS = [
  'A time-aware, append-only memory ledger: blocks (nodes) and typed edges, never changed or deleted.',
  'Every read names as_of, the knowledge instant: pass "now" for what is known at present, an earlier instant to replay what was known then; the certificate counts rows hidden because they were learned later.',
  'Pass current_only=true to list or search only current beliefs (nothing superseded or invalidated).',
  'To change a belief, remember a new block and a SUPERSEDES edge from it to the old one; to retract one with nothing to replace it, use invalidate_memory (append-only: earlier as_of reads still see it).',
].join('\n');
