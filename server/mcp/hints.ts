// What a model is told about each tool beyond its schema: the behaviour annotations (does it write, can
// it take something back, is a repeat harmless) and the server's instructions. Keyed by operation name,
// since these are promises about each operation's effect; an operation not listed is described from its
// registry entry (a read when it names as_of, else a write).
import type { ToolAnnotations } from '@modelcontextprotocol/server';
import type { AnyOperation } from '../../tools/operation.ts';

interface Effect {
  readOnly: boolean;
  destructive?: boolean;
  /** Repeating the same call changes nothing more; only said of tools that write. */
  idempotent?: boolean;
  /** Appended to the operation's description when it does not already say it. */
  note?: { unless: (description: string) => boolean; text: string };
}

const EFFECTS: Readonly<Record<string, Effect>> = {
  // Re-sending the same rows is a no-op, but a row without asserted_at is asserted at its capture
  // instant, so a repeat can be new content: not promised idempotent.
  remember: { readOnly: false, destructive: false, idempotent: false },
  list_memories: { readOnly: true },
  get_memory: { readOnly: true },
  search_memory: { readOnly: true },
  why: { readOnly: true },
  export_ledger: { readOnly: true },
  list_spaces: { readOnly: true },
  // Re-declaring the same rules returns the declaration in force and writes nothing.
  declare_fact: { readOnly: false, destructive: false, idempotent: true },
  // Each answer is recorded as a verdict; the same fact, candidates and rules give the same verdict once.
  resolve_fact: { readOnly: false, destructive: false, idempotent: true },
  // It hides a block from later reads (so a client should confirm it), yet deletes nothing.
  invalidate_memory: {
    readOnly: false,
    destructive: true,
    idempotent: true,
    note: {
      unless: (d) => /append-only/i.test(d) && /earlier as_of/i.test(d),
      text: ' Append-only: nothing is deleted; reads with an earlier as_of still see the block, and include_invalidated=true shows it with its invalidation.',
    },
  },
};

function effectOf(op: AnyOperation): Effect {
  return EFFECTS[op.name] ?? { readOnly: op.requiresAsOf, destructive: false };
}

export function annotationsOf(op: AnyOperation): ToolAnnotations {
  const e = effectOf(op);
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
  const note = effectOf(op).note;
  return note && !note.unless(op.description) ? op.description + note.text : op.description;
}

export const INSTRUCTIONS = [
  'A time-aware, append-only memory ledger: blocks (nodes) and typed edges, never changed or deleted.',
  'Every read names as_of, the knowledge instant: pass "now" for what is known at present, an earlier instant to replay what was known then; the certificate counts rows hidden because they were learned later.',
  'Pass current_only=true to list or search only current beliefs (nothing superseded or invalidated).',
  'To change a belief, remember a new block and a SUPERSEDES edge from it to the old one; to retract one with nothing to replace it, use invalidate_memory (append-only: earlier as_of reads still see it).',
].join('\n');
