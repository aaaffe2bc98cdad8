import { z } from 'zod';
import { formatInstant } from '../storage/time.ts';
import { invalidationRow, type InvalidationRow } from '../storage/read/rows-out.ts';
import { invalidInput, SvcError } from './errors.ts';
import { defineOperation } from './operation.ts';
import { BackfillSchema } from './remember.ts';
import { SpaceName, instant } from './schemas.ts';
import { InvalidateMemoryOutputSchema } from './output-schemas.ts';

export const InvalidateMemoryInput = z.strictObject({
  id: z.string().min(1).max(1024).describe('Id of the block to retract (every version of it).'),
  reason: z
    .string()
    .trim()
    .min(1, 'must say why the block is retracted')
    .max(2000)
    .describe('Why the block is retracted (required), e.g. "the source withdrew it".'),
  by: z.string().min(1).max(512).nullable().optional().describe('Who retracts it (an agent, a user, a process).'),
  backfill: BackfillSchema.optional().describe('Records the retraction as known from an earlier instant.'),
  space: SpaceName.optional().describe('Only a block of this space can be retracted; an app-scoped address fixes it.'),
});

export interface InvalidateMemoryOutput {
  invalidation: InvalidationRow & { known_at: string };
  warnings: { id: string; warning: 'already_invalidated' }[];
  batch: { id: string; declared_captured_at: string; reason: string } | null;
}

export const invalidateMemory = defineOperation({
  name: 'invalidate_memory',
  title: 'Invalidate (retract) a memory',
  description:
    'Retract a block that is wrong: reads with as_of from now on leave it out. Append-only: nothing is deleted, an earlier as_of still sees it, and include_invalidated shows it. For a changed belief, write a new block with a SUPERSEDES edge instead.',
  input: InvalidateMemoryInput,
  output: InvalidateMemoryOutputSchema,
  requiresAsOf: false,
  confinable: true,
  rest: { method: 'POST', path: '/v1/memories/:id/invalidate', from: 'body' },
  // It hides a block from later reads (so a client should confirm it), yet deletes nothing.
  effect: { readOnly: false, destructive: true, idempotent: true },
  async handler(input, ctx): Promise<InvalidateMemoryOutput> {
    const backfill = input.backfill
      ? { declared_captured_at: instant(input.backfill.declared_captured_at), reason: input.backfill.reason }
      : undefined;
    const outcome = await ctx.ledger.invalidate(ctx.tenant, {
      id: input.id,
      reason: input.reason,
      by: input.by,
      backfill,
      space: input.space,
    });
    switch (outcome.kind) {
      case 'not_found':
        throw new SvcError(
          'not_found',
          `no block ${JSON.stringify(input.id)} is visible now${input.space === undefined ? '' : ` in space ${JSON.stringify(input.space)}`}`,
        );
      case 'bad_backfill':
        throw invalidInput([
          {
            type: 'backfill',
            loc: ['backfill', 'declared_captured_at'],
            msg: outcome.why,
            input: input.backfill?.declared_captured_at ?? null,
          },
        ]);
      case 'already':
        return {
          invalidation: invalidationRow(outcome.invalidation),
          warnings: [{ id: input.id, warning: 'already_invalidated' }],
          batch: null,
        };
      case 'written':
        return {
          invalidation: invalidationRow(outcome.invalidation),
          warnings: [],
          batch: outcome.batch
            ? {
                id: outcome.batch.id,
                declared_captured_at: formatInstant(outcome.batch.declared_captured_at),
                reason: outcome.batch.reason,
              }
            : null,
        };
    }
  },
});
