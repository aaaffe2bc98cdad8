import { z } from 'zod';
import type { Certificate } from '../storage/certificate.ts';
import type { NodeRow } from '../storage/rows-out.ts';
import type { EdgeFamily } from '../storage/types.ts';
import { SvcError } from './errors.ts';
import { defineOperation } from './operation.ts';
import { openRead } from './read.ts';
import { AsOf, Flag, SpaceName, ValidAt } from './schemas.ts';

const FAMILIES = ['causal', 'temporal', 'argumentative', 'general'] as const satisfies readonly EdgeFamily[];

export const SearchMemoryInput = z.strictObject({
  query: z
    .string()
    .max(10_000)
    .refine((q) => q.trim().length > 0, { message: 'must contain something to search for' })
    .describe(
      'What to look for, in any language: words are matched (full text, stemmed) and compared by meaning (vectors). ' +
        'A whole question works well: blocks matching every part of it rank first, and one asking when, how long or ' +
        'where (in English) prefers blocks that say when, how long or where.',
    ),
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
  current_only: Flag.optional().describe(
    'true: leave out blocks superseded or invalidated as of as_of, before ranking (direct hits and expansions).',
  ),
  include_invalidated: Flag.optional().describe(
    'true: keep invalidated blocks as direct hits, each carrying `invalidated`; expansion still never walks through them.',
  ),
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
    'and the edge type it was reached by. A superseded block never ranks above a block that supersedes it; rows carry ' +
    'superseded_by. The certificate counts matches hidden because they were learned after as_of, and invalidated ones left out.',
  input: SearchMemoryInput,
  requiresAsOf: true,
  confinable: true,
  async handler(input, ctx): Promise<SearchMemoryOutput> {
    const index = ctx.services.search;
    if (!index) throw new SvcError('unavailable', 'the search index is not running on this server');
    const snap = await openRead(ctx, input);
    await index.caughtUp(ctx.tenant, snap.lens.space);
    const answer = await snap.search(index, {
      query: input.query,
      kind: input.kind,
      category: input.category,
      limit: input.limit,
      depth: input.depth,
      families: input.family,
    });
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
