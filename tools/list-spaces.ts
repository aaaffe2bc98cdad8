import { z } from 'zod';
import type { Certificate } from '../storage/read/certificate.ts';
import { buildCertificate } from '../storage/read/certificate.ts';
import { resolveLens } from '../storage/read/lens.ts';
import { spaceSummaries, type SpaceSummary } from '../storage/read/space-summary.ts';
import { defineOperation } from './operation.ts';
import { openRead } from './read.ts';
import { AsOf, SpaceName } from './schemas.ts';
import { ListSpacesOutputSchema } from './output-schemas.ts';

export const ListSpacesInput = z.strictObject({
  as_of: AsOf,
  space: SpaceName.optional().describe('Only this space. Omitted: every space of the tenant.'),
});

export interface ListSpacesOutput {
  spaces: SpaceSummary[];
  certificate: Certificate;
}

export const listSpaces = defineOperation({
  name: 'list_spaces',
  title: 'List spaces',
  description:
    'The spaces holding rows known at as_of, with their node and edge counts: find whose memory is here before listing or searching one space.',
  input: ListSpacesInput,
  output: ListSpacesOutputSchema,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'GET', path: '/v1/spaces', from: 'query' },
  effect: { readOnly: true },
  // Every space of the tenant is counted by a scan in the graph store (seconds at 300k rows): a heavy slot.
  heavy: { when: 'without a space', test: (input) => typeof input.space !== 'string' },
  async handler(input, ctx): Promise<ListSpacesOutput> {
    if (input.space !== undefined) {
      const snap = await openRead(ctx, input);
      return { spaces: snap.spaces(), certificate: snap.certificate() };
    }
    // Every space of the tenant: counted in the graph store, so the tenant's rows are never loaded for it.
    const { asOf } = resolveLens({ asOf: input.as_of }, ctx.ledger.now());
    const counts = await ctx.ledger.spaceCounts(ctx.tenant, asOf);
    return { spaces: spaceSummaries(counts), certificate: buildCertificate({ asOf, txAsOf: ctx.ledger.now() }) };
  },
});
