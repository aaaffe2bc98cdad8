import { z } from 'zod';
import { nonZeroMasked } from '../storage/read/certificate.ts';
import type { NodePage } from '../storage/read/rows-out.ts';
import { invalidInput } from './errors.ts';
import { defineOperation } from './operation.ts';
import { lensOf, openRead } from './read.ts';
import type { Context } from './context.ts';
import type { ListResult } from '../storage/read/reads.ts';
import type { ListParams, Snapshot } from '../storage/read/snapshot.ts';
import { AsOf, Flag, SpaceName, ValidAt, wholeNumber } from './schemas.ts';
import { decodeCursor, encodeCursor } from '../storage/read/cursor.ts';
import { ListMemoriesOutputSchema } from './output-schemas.ts';

export const ListMemoriesInput = z.strictObject({
  as_of: AsOf,
  valid_at: ValidAt.optional(),
  space: SpaceName.optional().describe('Only this space. Omitted: the whole tenant.'),
  kind: z.string().min(1).optional().describe('Only nodes of this kind.'),
  category: z.string().optional().describe('Only nodes of this category (exact match).'),
  limit: wholeNumber(1, 1000, true).default(100).describe('Page size, 1 to 1000 (default 100).'),
  cursor: z.string().optional().describe('next_cursor of the previous page.'),
  current_only: Flag.optional().describe('true: leave out superseded and invalidated blocks.'),
  include_invalidated: Flag.optional().describe('true: keep invalidated blocks, marked with their invalidation.'),
});

export type ListMemoriesInput = z.output<typeof ListMemoriesInput>;
export type ListMemoriesOutput = NodePage;

function afterSeqOf(cursor: string): number {
  const seq = decodeCursor(cursor);
  if (seq === null)
    throw invalidInput([{ type: 'cursor', loc: ['cursor'], msg: 'not a cursor this server issued', input: cursor.slice(0, 100) }]);
  return seq;
}

/**
 * The page and the snapshot it is shown through. Without a space, a tenant whose view is not in memory is
 * read from the store page by page rather than loaded whole; a resident view answers as before (free).
 */
async function listPage(ctx: Context, input: ListMemoriesInput, params: ListParams): Promise<{ snap: Snapshot; result: ListResult }> {
  if (input.space === undefined && !ctx.ledger.tenants().includes(ctx.tenant)) {
    const paged = await ctx.ledger.listByPages(ctx.tenant, lensOf(input), params, ctx.signal);
    return { snap: paged.snapshot, result: paged };
  }
  const snap = await openRead(ctx, input);
  return { snap, result: snap.list(params) };
}

export const listMemories = defineOperation({
  name: 'list_memories',
  title: 'List memories',
  description:
    'List the blocks known at as_of (every version, oldest first), filtered by space, kind, category or valid_at. current_only leaves out superseded and invalidated blocks. Page with limit and next_cursor.',
  input: ListMemoriesInput,
  output: ListMemoriesOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'GET', path: '/v1/memories', from: 'query' },
  effect: { readOnly: true },
  async handler(input, ctx): Promise<ListMemoriesOutput> {
    const afterSeq = input.cursor === undefined ? undefined : afterSeqOf(input.cursor);
    const params = { kind: input.kind, category: input.category, limit: input.limit, afterSeq };
    const { snap, result } = await listPage(ctx, input, params);
    const certificate = snap.certificate({
      masked: result.masked,
      shownBatches: result.items.map((n) => n.batch_id),
      invalidated: result.invalidated,
    });
    return {
      items: result.items.map((n) => snap.row(n)),
      masked: nonZeroMasked(result.masked) ? { ...result.masked } : null,
      next_cursor: result.nextSeq === null ? null : encodeCursor(result.nextSeq),
      certificate,
    };
  },
});
