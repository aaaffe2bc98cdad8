import { z } from 'zod';
import type { Certificate } from '../storage/read/certificate.ts';
import type { NodeRow } from '../storage/read/rows-out.ts';
import type { EdgeFamily } from '../storage/types.ts';
import { SvcError } from './errors.ts';
import { defineOperation } from './operation.ts';
import { lensOf } from './read.ts';
import { AsOf, Flag, SpaceName, ValidAt, wholeNumber } from './schemas.ts';
import { SearchMemoryOutputSchema } from './output-schemas.ts';

const FAMILIES = ['causal', 'temporal', 'argumentative', 'general'] as const satisfies readonly EdgeFamily[];

export const SearchMemoryInput = z.strictObject({
  query: z
    .string()
    .max(10_000)
    .refine((q) => q.trim().length > 0, { message: 'must contain something to search for' })
    .describe(
      'What to look for, by words and meaning. A whole question works well: blocks matching every part of it rank first, ' +
        'and a when, how long or where question prefers blocks that say so.',
    ),
  as_of: AsOf,
  valid_at: ValidAt.optional(),
  space: SpaceName.optional().describe('Only this space (expansion stays in it too). Omitted: the whole tenant.'),
  category: z.string().optional().describe('Only blocks of this category as direct hits; expansion may still cross categories.'),
  kind: z.string().min(1).optional().describe('Only blocks of this kind as direct hits.'),
  limit: wholeNumber(1, 100, false).default(10).describe('Direct hits wanted, 1 to 100 (default 10); expansions come in addition.'),
  depth: wholeNumber(0, 5, false).default(1).describe('Expansion hops from each direct hit, 0 to 5 (default 1).'),
  family: z
    .array(z.enum(FAMILIES))
    .max(4)
    .default([])
    .describe('Edge families to follow besides causal and temporal: argumentative, general.'),
  current_only: Flag.optional().describe('true: leave out superseded and invalidated blocks.'),
  include_invalidated: Flag.optional().describe('true: keep invalidated blocks as direct hits, marked.'),
});

export interface SearchMemoryResult {
  node: NodeRow;
  score: number;
  match: 'direct' | 'expansion';
  depth: number;
  path: string[];
  via: string | null;
}

export interface SearchMemoryOutput {
  results: SearchMemoryResult[];
  certificate: Certificate;
}

export const searchMemory = defineOperation({
  name: 'search_memory',
  title: 'Search memory',
  description:
    'Find blocks known at as_of by words and meaning, then follow causal and temporal edges up to depth hops to add causes, effects and successors. Each result says whether it matched directly or by expansion (via). A superseded block never ranks above its successor.',
  input: SearchMemoryInput,
  output: SearchMemoryOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'POST', path: '/v1/search', from: 'body' },
  effect: { readOnly: true },
  // A space whose copy is in memory and up to date is searched in ~1 ms of JavaScript, as cheap as a list:
  // it takes no heavy slot; nor does a small space's first load (~10 ms, as a cold user's list). Without a
  // space, before a larger space's copy is loaded (tens to hundreds of ms of LanceDB reads) or while rows of
  // the space wait to be embedded, it does.
  heavy: {
    when: 'without a space, or in a space not searched in memory now (a small one excepted)',
    test: (input, resident) => typeof input.space !== 'string' || !resident.searchIsLight(input.space),
  },
  // A light search still takes turns with the others: interleaved, many at once held lists and writes back.
  searchSlot: true,
  async handler(input, ctx): Promise<SearchMemoryOutput> {
    const index = ctx.services.search;
    if (!index) throw new SvcError('unavailable', 'the search index is not running on this server');
    const query = {
      query: input.query,
      kind: input.kind,
      category: input.category,
      limit: input.limit,
      depth: input.depth,
      families: input.family,
    };
    // Without a space and the tenant's view not resident, the ranking runs over the views of the spaces
    // holding what it reads, loaded round by round; the index is asked once (Ledger.readAcrossSpaces).
    const { snap, value } = await ctx.ledger.readAcrossSpaces(
      ctx.tenant,
      lensOf(input),
      async (opened) => {
        ctx.signal?.throwIfAborted();
        await index.caughtUp(ctx.tenant, opened.lens.space);
        // Past its deadline while waiting for the index: the scoring below would be work nobody reads.
        ctx.signal?.throwIfAborted();
        return opened.prepareSearch(index, query);
      },
      async (opened, prepared) => ({ answer: await opened.rankSearch(index, prepared), prepared }),
    );
    const { answer, prepared } = value;
    prepared.candidates?.report();
    return {
      results: answer.results.map((r) => ({
        node: snap.row(r.node),
        score: Number(r.score.toFixed(6)),
        match: r.match,
        depth: r.depth,
        path: r.path,
        via: r.via,
      })),
      certificate: snap.certificate({
        masked: answer.masked,
        shownBatches: answer.results.map((r) => r.node.batch_id),
        invalidated: answer.invalidated,
      }),
    };
  },
});
