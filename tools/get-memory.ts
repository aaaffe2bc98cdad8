import { z } from 'zod';
import { buildCertificate, type Certificate } from '../storage/certificate.ts';
import { getNode } from '../storage/reads.ts';
import { edgeRow, nodeRow, type EdgeRow, type NodeRow } from '../storage/rows-out.ts';
import { defineOperation } from './operation.ts';
import { AsOf, SpaceName, ValidAt, knowledgeInstant, optionalInstant } from './schemas.ts';

export const GetMemoryInput = z.object({
  id: z.string().min(1).describe('The block id.'),
  as_of: AsOf,
  valid_at: ValidAt.optional().describe('Pick the version in force at this instant. Omitted: the version with the latest validity start.'),
  space: SpaceName.optional().describe('Look only in this space.'),
});

export interface GetMemoryOutput {
  item: NodeRow | null;
  versions: NodeRow[];
  edges: { in: EdgeRow[]; out: EdgeRow[] };
  reason?: 'not_yet' | 'absent';
  certificate: Certificate;
}

export const getMemory = defineOperation({
  name: 'get_memory',
  title: 'Get one memory',
  description:
    'Read one block by id as known at as_of: the version in force (at valid_at, or the latest), all its known versions, and ' +
    'its edges in and out. reason "not_yet" means the block exists but was learned after as_of; "absent" means there is no such block.',
  input: GetMemoryInput,
  requiresAsOf: true,
  confinable: true,
  async handler(input, ctx): Promise<GetMemoryOutput> {
    const asOf = knowledgeInstant(input.as_of);
    await ctx.ledger.settled(asOf);
    const r = getNode(ctx.ledger.view(ctx.tenant), input.id, { asOf, validAt: optionalInstant(input.valid_at), space: input.space });
    const out: GetMemoryOutput = {
      item: r.item ? nodeRow(r.item) : null,
      versions: r.versions.map(nodeRow),
      edges: { in: r.edgesIn.map(edgeRow), out: r.edgesOut.map(edgeRow) },
      certificate: buildCertificate({
        asOf, txAsOf: ctx.ledger.now(), masked: r.masked,
        shownBatches: [...r.versions, ...r.edgesIn, ...r.edgesOut].map((x) => x.batch_id),
      }),
    };
    if (r.reason) out.reason = r.reason;
    return out;
  },
});
