import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { packDirectory } from '../storage/bundle/archive-files.ts';
import { BUNDLE_FORMAT_VERSION } from '../storage/bundle/rows.ts';
import { stageBundle } from '../storage/bundle/writer.ts';
import type { Archive } from './archive.ts';
import { SvcError } from './errors.ts';
import { defineOperation } from './operation.ts';
import { AsOf, SpaceName, atInstant } from './schemas.ts';

export const ExportLedgerInput = z.strictObject({
  as_of: AsOf.describe(
    'Knowledge instant of the export: only rows learned at or before it are in the bundle (inclusive; a date means the end of that day in UTC). Validity is not filtered: the bundle is the ledger.',
  ),
  space: SpaceName.optional().describe('Only this space. Omitted: the whole tenant.'),
  category: z.string().min(1).max(512).optional().describe('Only nodes of this category, with the edges between them.'),
});

export const exportLedger = defineOperation({
  name: 'export_ledger',
  title: 'Export the ledger',
  description:
    'Export the ledger as known at as_of as a self-contained .tar.gz bundle (manifest, nodes, edges, resolutions, invalidations), answering as-of reads offline.',
  input: ExportLedgerInput,
  requiresAsOf: true,
  confinable: true,
  rest: { method: 'GET', path: '/v1/export', from: 'query', answer: 'archive' },
  effect: { readOnly: true },
  heavy: 'always',
  // Its size is the caller's choice and it is streamed as it is packed: it runs to the end, bounded by the queue.
  deadline: 'finish',
  async handler(input, ctx): Promise<Archive> {
    // A bundle cannot vouch for knowledge it does not have yet: an as_of in the future is cut at the
    // server's present instant, which then names the bundle and is its exported_as_of.
    const asOf = Math.min(atInstant(input.as_of, ctx.ledger.now()), ctx.ledger.now());
    ctx.signal?.throwIfAborted();
    const root = await mkdtemp(join(tmpdir(), 'ledger-export-'));
    let disposed = false;
    const dispose = async (): Promise<void> => {
      if (disposed) return;
      disposed = true;
      await rm(root, { recursive: true, force: true });
    };
    try {
      // The tenant's view when it is resident, else the store page by page: the bundle of a space keeps an
      // edge of another space joining two of its nodes, which the space's view does not hold, and a
      // tenant's export must not load the tenant.
      const scope = { asOf, space: input.space, category: input.category };
      const staged = await ctx.ledger.withBundleSource(ctx.tenant, scope, (source) =>
        stageBundle(source, scope, `svc/${ctx.services.version}`, BUNDLE_FORMAT_VERSION, root),
      );
      return {
        kind: 'archive',
        filename: `${staged.stem}.tar.gz`,
        mediaType: 'application/gzip',
        open: () => packDirectory(root, staged.stem),
        dispose,
      };
    } catch (error) {
      await dispose();
      throw new SvcError('internal', `the export could not be staged: ${(error as Error).message}`);
    }
  },
});
