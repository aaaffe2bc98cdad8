import { z } from 'zod';
import type { Certificate } from '../storage/read/certificate.ts';
import { edgeRow, invalidationRow, type EdgeRow, type InvalidationRow, type NodeRow } from '../storage/read/rows-out.ts';
import { defineOperation } from './operation.ts';
import { readById } from './read.ts';
import type { Snapshot } from '../storage/read/snapshot.ts';
import { AsOf, Flag, SpaceName, ValidAt } from './schemas.ts';
import { GetMemoryOutputSchema } from './output-schemas.ts';

export const GetMemoryInput = z.strictObject({
  id: z.string().min(1).describe('The block id.'),
  as_of: AsOf,
  valid_at: ValidAt.optional().describe('Pick the version in force at this instant. Omitted: the version with the latest validity start.'),
  space: SpaceName.optional().describe('Look only in this space.'),
  include_invalidated: Flag.optional().describe('true: show an invalidated block as item, with its invalidation.'),
});

export interface GetMemoryOutput {
  item: NodeRow | null;
  versions: NodeRow[];
  edges: { in: EdgeRow[]; out: EdgeRow[] };
  reason?: 'not_yet' | 'absent' | 'invalidated';
  invalidation?: InvalidationRow;
  certificate: Certificate;
}

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
    return readById(ctx, input, (snap) => answer(snap, input.id));
  },
});

function answer(snap: Snapshot, id: string): GetMemoryOutput {
  const r = snap.get(id);
  const out: GetMemoryOutput = {
    item: r.item ? snap.row(r.item) : null,
    versions: r.versions.map((v) => snap.row(v)),
    edges: { in: r.edgesIn.map(edgeRow), out: r.edgesOut.map(edgeRow) },
    certificate: snap.certificate({
      masked: r.masked,
      shownBatches: [...r.versions, ...r.edgesIn, ...r.edgesOut].map((x) => x.batch_id),
    }),
  };
  if (r.reason) out.reason = r.reason;
  if (r.invalidation && r.reason === 'invalidated') out.invalidation = invalidationRow(r.invalidation);
  return out;
}
