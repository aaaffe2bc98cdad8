import { z } from 'zod';
import { getAnswer, type GetAnswer } from '../storage/read/by-id-answers.ts';
import { defineOperation } from './operation.ts';
import { readById } from './read.ts';
import { AsOf, Flag, SpaceName, ValidAt } from './schemas.ts';
import { GetMemoryOutputSchema } from './output-schemas.ts';

export const GetMemoryInput = z.strictObject({
  id: z.string().min(1).describe('The block id.'),
  as_of: AsOf,
  valid_at: ValidAt.optional().describe('Pick the version in force at this instant. Omitted: the version with the latest validity start.'),
  space: SpaceName.optional().describe('Look only in this space.'),
  include_invalidated: Flag.optional().describe('true: show an invalidated block as item, with its invalidation.'),
});

export type GetMemoryOutput = GetAnswer;

export const getMemory = defineOperation({
  name: 'get_memory',
  title: 'Get one memory',
  description:
    'Read one block by id as known at as_of: the version in force, all known versions, and its edges. reason says why there is none: not_yet (learned after as_of), absent, invalidated.',
  input: GetMemoryInput,
  output: GetMemoryOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'GET', path: '/v1/memories/:id', from: 'query' },
  effect: { readOnly: true },
  handler(input, ctx): Promise<GetMemoryOutput> {
    return readById(ctx, input, (snap) => getAnswer(snap, input.id));
  },
});
