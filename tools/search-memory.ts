import { z } from 'zod';
import { buildCertificate, type Certificate } from '../storage/certificate.ts';
import { nodeRow, type NodeRow } from '../storage/rows-out.ts';
import { search } from '../storage/search/search.ts';
import type { EdgeFamily } from '../storage/types.ts';
import { SvcError } from './errors.ts';
import { defineOperation } from './operation.ts';
import { AsOf, SpaceName, ValidAt, knowledgeInstant, optionalInstant } from './schemas.ts';

const FAMILIES = ['causal', 'temporal', 'argumentative', 'general'] as const satisfies readonly EdgeFamily[];

export const SearchMemoryInput = z.object({
  query: z
    .string()
    .max(10_000)
    .refine((q) => q.trim().length > 0, { message: 'must contain something to search for' })
    .describe('What to look for, in any language: words are matched (full text, stemmed) and compared by meaning (vectors).'),
  as_of: AsOf,
  valid_at: ValidAt.optional(),
  space: SpaceName.optional().describe('Only this space (expansion stays in it too). Omitted: the whole tenant.'),
  category: z.string().optional().describe('Only blocks of this category as direct hits; expansion may still cross categories.'),
  kind: z.string().min(1).optional().describe('Only blocks of this kind as direct hits.'),
  limit: z.number().int().min(1).max(100).default(10).describe('Direct hits wanted, 1 to 100 (default 10); expansions come in addition.'),
  depth: z.number().int().min(0).max(5).default(1).describe('Expansion hops from each direct hit, 0 to 5 (default 1).'),
  family: z
    .array(z.enum(FAMILIES))
    .max(4)
    .default([])
    .describe('Edge families to follow besides causal and temporal (which are always followed): argumentative, general.'),
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
    'Find blocks known at as_of by words and meaning (full text and vectors, fused), after filtering by space, category, kind ' +
    'and valid_at; then follow causal and temporal edges (plus the families named in `family`) up to `depth` hops to add causes, ' +
    'effects and successors, crossing categories. Each result says whether it matched directly or by expansion, with its path ' +
    'and the edge type it was reached by. The certificate counts matches hidden because they were learned after as_of.',
  input: SearchMemoryInput,
  requiresAsOf: true,
  confinable: true,
  async handler(input, ctx): Promise<SearchMemoryOutput> {
    const index = ctx.services.search;
    if (!index) throw new SvcError('unavailable', 'the search index is not running on this server');
    const asOf = knowledgeInstant(input.as_of);
    await ctx.ledger.settled(asOf);
    await index.caughtUp();
    const view = ctx.ledger.view(ctx.tenant);
    const answer = await search(index, view, {
      query: input.query, asOf, validAt: optionalInstant(input.valid_at), space: input.space, kind: input.kind,
      category: input.category, limit: input.limit, depth: input.depth, families: input.family, now: ctx.ledger.now(),
    });
    return {
      results: answer.results.map((r) => ({
        node: nodeRow(r.node), score: Number(r.score.toFixed(6)), match: r.match, depth: r.depth, path: r.path, via: r.via,
      })),
      certificate: buildCertificate({
        asOf, txAsOf: ctx.ledger.now(), masked: answer.masked, shownBatches: answer.results.map((r) => r.node.batch_id),
      }),
    };
  },
});
