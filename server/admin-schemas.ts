// The shapes of the operator routes under /admin (server/admin.ts, app.ts), defined once: the routes check
// their bodies and type their answers with them, `memory-ledger move` checks the answers it gets with them
// (server/cluster/operator-client.ts), and the OpenAPI document describes the routes from them.
import { z } from 'zod';
import { ErrorDetailSchema } from '../tools/error-schemas.ts';
import { TenantRowSchema } from '../storage/log/tenant-copy.ts';
import { PlacementRecordSchema } from './cluster/placement.ts';

/** Rows a page holds when `limit` is not given, and at most. */
export const DEFAULT_LIMIT = 1_000;
export const MAX_LIMIT = 50_000;

const count = z.number().int().nonnegative();
const tseq = z.number().int().nonnegative();

export const ImportBodySchema = z
  .strictObject({ rows: z.array(TenantRowSchema).describe('Rows as GET …/rows answers them, in any order; usually one page.') })
  .describe('Rows of the tenant of the path, stored verbatim.');

export const ExportPageSchema = z
  .object({
    tenant: z.string(),
    rows: z.array(TenantRowSchema).describe('In tseq order, all tables interleaved; rows of one tseq are never split across pages.'),
    next_after: tseq.nullable().describe('The `after` of the next page; null when this page reached last_tseq.'),
    last_tseq: tseq.describe("The tenant's highest tseq when the page was read."),
  })
  .describe('One page of a tenant\u2019s rows, each with every stored column but this server\u2019s own seq.');

export const ImportResultSchema = z
  .object({
    stored: count.describe('Rows stored by this call (durable when it answers).'),
    skipped: count.describe('Rows the tenant already held, equal to the ones sent.'),
    last_tseq: tseq.describe("The tenant's highest tseq here after the call."),
  })
  .describe('What an import did; sending the same rows again stores nothing.');

export const DigestSchema = z
  .object({
    tenant: z.string(),
    after: tseq,
    up_to: tseq,
    rows: count,
    digest: z
      .string()
      .describe('sha256 over the rows with after < tseq <= up_to, in export order: equal on two servers exactly when their copies are.'),
  })
  .describe('The digest of a range of a tenant\u2019s rows.');

export const DeleteResultSchema = z
  .object({
    tenant: z.string(),
    deleted: count.describe(
      'Rows deleted so far over every table, by this run of the deletion (a run resumed after a restart counts from 0).',
    ),
    done: z
      .boolean()
      .describe(
        'true: no row of the tenant is left here (200); false: the deletion goes on in the background (202), DELETE again to follow it.',
      ),
  })
  .describe('A partial or moved-away copy deleted, or being deleted.');

export const PlacementStatusSchema = z
  .object({
    tenant: z.string(),
    server: z.string().describe('This server\u2019s id (SVC_SERVER_ID).'),
    placement: PlacementRecordSchema.nullable().describe('The record as this server last read it from etcd; null when not placed.'),
    revision: z.number().int().describe('The etcd revision this server\u2019s view is at.'),
    in_flight: count.describe('The tenant\u2019s requests admitted here and not yet answered.'),
  })
  .describe('What this server believes about a tenant\u2019s placement.');

export const ImportConflictBodySchema = z
  .object({
    detail: ErrorDetailSchema.extend({
      row: z.string().describe('The row refused: its table, identity and tseq.'),
      tseq: tseq,
    }),
  })
  .describe(
    'conflict: a row differs from the one stored, a row below the tenant\u2019s last tseq is missing here (a gap), or a space is held by another tenant; nothing of the call was stored.',
  );
