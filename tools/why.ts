import { z } from 'zod';
import { whyAnswer, type WhyAnswer } from '../storage/read/by-id-answers.ts';
import { defineOperation } from './operation.ts';
import { readById } from './read.ts';
import { AsOf, SpaceName, ValidAt, wholeNumber } from './schemas.ts';
import { WhyOutputSchema } from './output-schemas.ts';

export const MAX_WHY_DEPTH = 10;

export const WhyInput = z.strictObject({
  id: z.string().min(1).describe('Id of the block whose evidence chain to walk.'),
  as_of: AsOf,
  valid_at: ValidAt.optional().describe(
    'Walk only nodes and edges in force at this content instant (asserted by then, validity containing it).',
  ),
  depth: wholeNumber(0, MAX_WHY_DEPTH, true)
    .default(3)
    .describe(`How many hops to walk from the block, 0 to ${MAX_WHY_DEPTH} (default 3).`),
  space: SpaceName.optional().describe('Walk only nodes and edges of this space. Omitted: the whole tenant.'),
});

export type WhyOutput = WhyAnswer;

export const why = defineOperation({
  name: 'why',
  title: 'Evidence chain of a memory',
  description:
    'Explain a block: walk causal, argumentative and temporal edges in both directions, using only what was known at as_of. Each link gives the node, its depth, path, the edge type it was reached by (via) and its role (cause, effect, support, successor, ...), ordered by asserted_at.',
  input: WhyInput,
  output: WhyOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'GET', path: '/v1/memories/:id/why', from: 'query' },
  effect: { readOnly: true },
  heavy: 'always',
  handler(input, ctx): Promise<WhyOutput> {
    return readById(ctx, input, (snap) => whyAnswer(snap, input.id, input.depth));
  },
});
