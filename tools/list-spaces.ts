import { z } from 'zod';
import type { Certificate } from '../storage/read/certificate.ts';
import type { SpaceSummary } from '../storage/read/snapshot.ts';
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
  async handler(input, ctx): Promise<ListSpacesOutput> {
    const snap = await openRead(ctx, input);
    return { spaces: snap.spaces(), certificate: snap.certificate() };
  },
});
