import { z } from 'zod';
import { buildCertificate, nonZeroMasked } from '../storage/certificate.ts';
import { listNodes } from '../storage/reads.ts';
import { nodeRow, type NodePage } from '../storage/rows-out.ts';
import { invalidInput } from './errors.ts';
import { defineOperation } from './operation.ts';
import { AsOf, SpaceName, ValidAt, knowledgeInstant, optionalInstant } from './schemas.ts';
import { decodeCursor, encodeCursor } from '../storage/cursor.ts';

export const ListMemoriesInput = z.object({
  as_of: AsOf,
  valid_at: ValidAt.optional(),
  space: SpaceName.optional().describe('Only this space. Omitted: the whole tenant.'),
  kind: z.string().min(1).optional().describe('Only nodes of this kind.'),
  category: z.string().optional().describe('Only nodes of this category (exact match).'),
  limit: z.coerce.number().int().min(1).max(1000).default(100).describe('Page size, 1 to 1000 (default 100).'),
  cursor: z.string().optional().describe('next_cursor of the previous page.'),
});

export type ListMemoriesOutput = NodePage;

function afterSeqOf(cursor: string): number {
  const seq = decodeCursor(cursor);
  if (seq === null) throw invalidInput([{ type: 'cursor', loc: ['cursor'], msg: 'not a cursor this server issued', input: cursor.slice(0, 100) }]);
  return seq;
}

export const listMemories = defineOperation({
  name: 'list_memories',
  title: 'List memories',
  description:
    'List the blocks known at as_of (every version, oldest first), optionally only those in force at valid_at, in one space, ' +
    'of one kind or category. The certificate says what was hidden because it was learned after as_of (masked) and which ' +
    'rows rest on a declared backfill instant. Page with limit and next_cursor.',
  input: ListMemoriesInput,
  requiresAsOf: true,
  confinable: true,
  async handler(input, ctx): Promise<ListMemoriesOutput> {
    const asOf = knowledgeInstant(input.as_of);
    const afterSeq = input.cursor === undefined ? undefined : afterSeqOf(input.cursor);
    await ctx.ledger.settled(asOf);
    const result = listNodes(ctx.ledger.view(ctx.tenant), {
      asOf, validAt: optionalInstant(input.valid_at), space: input.space, kind: input.kind, category: input.category,
      limit: input.limit, afterSeq,
    });
    const certificate = buildCertificate({
      asOf, txAsOf: ctx.ledger.now(), masked: result.masked, shownBatches: result.items.map((n) => n.batch_id),
    });
    return {
      items: result.items.map(nodeRow),
      masked: nonZeroMasked(result.masked) ? { ...result.masked } : null,
      next_cursor: result.nextSeq === null ? null : encodeCursor(result.nextSeq),
      certificate,
    };
  },
});
