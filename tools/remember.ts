import { z } from 'zod';
import { formatInstant, type Micros } from '../storage/time.ts';
import type { EdgeInput, NodeInput, WriteOutcome } from '../storage/log/write-plan.ts';
import { EDGE_TYPES } from '../storage/types.ts';
import { invalidInput } from './errors.ts';
import { MAX_MESSAGES, MessageSchema, rememberMessages, type MessageRefusal } from './remember-messages.ts';
import { defineOperation } from './operation.ts';
import { Instant, JsonObject, JsonValue, SpaceName, instant, optionalInstant } from './schemas.ts';
import { RememberOutputSchema } from './output-schemas.ts';

const MAX_ROWS = 10_000;

/** A write of more rows than this is an import and takes a heavy slot. */
export const BULK_ROWS = 200;

const rows = (v: unknown): number => (Array.isArray(v) ? v.length : 0);

// Strict objects: an unknown field is a 422 naming it (a mistyped key must never be dropped silently).
// `captured_at` is declared so a row that sets it reaches the row rules and is refused by name, and
// `tenant` so it is ignored rather than rejected (SPEC: a tenant field is never read).
const ServerOnly = {
  captured_at: z
    .unknown()
    .optional()
    .describe('Never set it: only the server stamps captured_at, and a row that sets it is refused (captured_at_not_allowed).'),
  tenant: z.unknown().optional().describe('Ignored: the tenant comes from the key.'),
};

export const NodeSchema = z.strictObject({
  id: z.string().min(1).max(1024).optional().describe('Block id, unique in the tenant. Omitted: derived from the content.'),
  kind: z
    .string()
    .min(1)
    .max(256)
    .describe('entity, claim, prediction, factor, timeseries, episode, or a kind of your own (kept as given).'),
  statement: z.string().nullable().optional().describe('The statement in plain words.'),
  category: z.string().max(512).nullable().optional().describe('A topic label; reads and searches can filter on it exactly.'),
  payload: JsonObject.optional().describe('Free-form JSON object, stored and returned, never interpreted.'),
  asserted_at: Instant.optional().describe('When the statement was made. Omitted: the capture instant.'),
  valid_from: Instant.optional().describe('Start of the interval the content holds. Omitted: asserted_at.'),
  valid_to: Instant.nullable().optional().describe('End of that interval (excluded). Omitted or null: open.'),
  fact_key: z.string().min(1).max(512).nullable().optional().describe('Makes the node a candidate value of this declared fact.'),
  fact_value: JsonValue.optional().describe('The value this node gives the fact (any JSON).'),
  ...ServerOnly,
});

export const EdgeSchema = z.strictObject({
  source_id: z.string().min(1).max(1024).describe('Id of the node the edge starts from (written earlier or in this request).'),
  target_id: z.string().min(1).max(1024).describe('Id of the node the edge points to.'),
  edge_type: z
    .string()
    .min(1)
    .max(64)
    .meta({ examples: [...EDGE_TYPES] })
    .describe(`One of ${EDGE_TYPES.join(', ')} (matched case-insensitively, stored upper-case).`),
  confidence: z.number().finite().nullable().optional().describe('How sure the link is, as a number.'),
  lag: z
    .string()
    .nullable()
    .optional()
    .describe('Delay between cause and effect: an ISO 8601 duration (P3D, PT36H) or a plain interval ("36 hours").'),
  mechanism: z.string().nullable().optional().describe('Free text saying how the link works.'),
  asserted_at: Instant.optional().describe("When the link was stated. Omitted: the later of its two endpoints' asserted_at."),
  valid_from: Instant.optional().describe('Start of validity. Omitted: asserted_at.'),
  valid_to: Instant.nullable().optional().describe('End of validity (excluded). Omitted or null: open.'),
  ...ServerOnly,
});

export const BackfillSchema = z.strictObject({
  declared_captured_at: Instant.describe('The knowledge instant to record for every row of this request (not later than now).'),
  reason: z.string().min(1).max(2000).describe('Why the rows are declared as known earlier (e.g. "crm import").'),
});

export const RememberInput = z.strictObject({
  space: SpaceName.describe('Whose memory the rows belong to, e.g. user:<id>, agent:<id>, svc:<id>.'),
  nodes: z.array(NodeSchema).max(MAX_ROWS).optional().describe('Blocks to write.'),
  edges: z.array(EdgeSchema).max(MAX_ROWS).optional().describe('Typed links between blocks.'),
  backfill: BackfillSchema.optional().describe('Declares past knowledge: past as_of reads will see these rows, and certificates say so.'),
  messages: z.array(MessageSchema).min(1).max(MAX_MESSAGES).optional().describe('Text to extract blocks from, in place of nodes/edges.'),
});

export type RememberInput = z.infer<typeof RememberInput>;

export interface RememberOutput {
  accepted: number;
  refused: (WriteOutcome['refused'][number] | MessageRefusal)[];
  warnings: WriteOutcome['warnings'];
  ids: string[];
  batch: { id: string; declared_captured_at: string; reason: string } | null;
  episodes: unknown[];
}

/**
 * A row that could never be in force: its validity ends at or before it starts, after the defaults
 * (valid_from = asserted_at = the capture instant, which is later than `present`). An edge without
 * asserted_at starts at its endpoints' assertion, known only to the plan, so only explicit starts count.
 */
function intervalIssue(
  list: 'nodes' | 'edges',
  i: number,
  row: { valid_from?: string | undefined; valid_to?: string | null | undefined; asserted_at?: string | undefined },
  present: Micros,
) {
  if (row.valid_to === undefined || row.valid_to === null) return null;
  const from = row.valid_from ?? row.asserted_at;
  const start = from !== undefined ? instant(from) : list === 'nodes' ? present : undefined;
  if (start !== undefined && instant(row.valid_to) <= start) {
    const msg =
      from !== undefined
        ? 'valid_to must be later than valid_from'
        : 'valid_to must be later than the capture instant, where an omitted asserted_at and valid_from start';
    return { type: 'interval', loc: [list, i, 'valid_to'], msg, input: row.valid_to };
  }
  return null;
}

export function toNodeInput(n: z.infer<typeof NodeSchema>): NodeInput {
  return {
    id: n.id,
    kind: n.kind,
    statement: n.statement,
    category: n.category,
    payload: n.payload,
    asserted_at: optionalInstant(n.asserted_at),
    valid_from: optionalInstant(n.valid_from),
    valid_to: n.valid_to === null ? null : optionalInstant(n.valid_to),
    fact_key: n.fact_key,
    fact_value: n.fact_value,
    sets_captured_at: 'captured_at' in n,
  };
}

export function toEdgeInput(e: z.infer<typeof EdgeSchema>): EdgeInput {
  return {
    source_id: e.source_id,
    target_id: e.target_id,
    edge_type: e.edge_type.toUpperCase(),
    confidence: e.confidence,
    lag: e.lag,
    mechanism: e.mechanism,
    asserted_at: optionalInstant(e.asserted_at),
    valid_from: optionalInstant(e.valid_from),
    valid_to: e.valid_to === null ? null : optionalInstant(e.valid_to),
    sets_captured_at: 'captured_at' in e,
  };
}

export const remember = defineOperation({
  name: 'remember',
  title: 'Remember blocks',
  description:
    'Write memories into a space as immutable blocks: nodes (claims, predictions, entities, ...) and typed edges. To change a belief, write a new node with a SUPERSEDES edge to the old one; nothing is overwritten. Re-sending the same content writes nothing. Bad rows are refused by name while the rest is written. Or send messages (text with observed_at): claims, entities and causal links are extracted from them.',
  input: RememberInput,
  output: RememberOutputSchema,
  requiresAsOf: false,
  confinable: true,
  rest: { method: 'POST', path: '/v1/memories', from: 'body' },
  // Re-sending the same rows is a no-op, but a row without asserted_at is asserted at its capture
  // instant, so a repeat can be new content: not promised idempotent.
  effect: { readOnly: false, destructive: false, idempotent: false },
  // Natural-language writes run the extractor (possibly a remote model); bulk imports plan and embed many rows.
  heavy: {
    when: `with messages or over ${BULK_ROWS} rows`,
    test: (input) => Array.isArray(input.messages) || rows(input.nodes) + rows(input.edges) > BULK_ROWS,
  },
  async handler(input, ctx): Promise<RememberOutput> {
    const nodes = input.nodes ?? [];
    const edges = input.edges ?? [];
    if (nodes.length === 0 && edges.length === 0 && (input.messages ?? []).length === 0) {
      throw invalidInput([
        { type: 'missing', loc: [], msg: 'a write needs at least one of nodes, edges or messages (non-empty)', input: null },
      ]);
    }
    const present = ctx.ledger.now();
    const issues = [
      ...nodes.map((n, i) => intervalIssue('nodes', i, n, present)),
      ...edges.map((e, i) => intervalIssue('edges', i, e, present)),
    ].filter((x) => x !== null);
    const backfill = input.backfill
      ? { declared_captured_at: instant(input.backfill.declared_captured_at), reason: input.backfill.reason }
      : undefined;
    if (backfill && backfill.declared_captured_at > ctx.ledger.now()) {
      issues.push({
        type: 'backfill_in_future',
        loc: ['backfill', 'declared_captured_at'],
        msg: 'a declared knowledge instant cannot be later than the capture instant',
        input: input.backfill?.declared_captured_at ?? '',
      });
    }
    if (input.messages && (nodes.length > 0 || edges.length > 0)) {
      issues.push({
        type: 'messages_with_rows',
        loc: ['messages'],
        msg: 'send messages or nodes/edges in one request, not both',
        input: '',
      });
    }
    if (issues.length > 0) throw invalidInput(issues);
    if (input.messages) {
      const m = await rememberMessages({ space: input.space, messages: input.messages, backfill }, ctx);
      return {
        accepted: m.outcome.accepted,
        refused: [...m.refusedMessages, ...m.outcome.refused],
        warnings: [...m.resolvedWarnings, ...m.outcome.warnings],
        ids: m.outcome.ids,
        batch: m.outcome.batch
          ? {
              id: m.outcome.batch.id,
              declared_captured_at: formatInstant(m.outcome.batch.declared_captured_at),
              reason: m.outcome.batch.reason,
            }
          : null,
        episodes: m.episodes,
      };
    }
    const outcome = await ctx.ledger.write(ctx.tenant, {
      space: input.space,
      backfill,
      nodes: nodes.map(toNodeInput),
      edges: edges.map(toEdgeInput),
      endpointSpace: ctx.confinedSpace,
    });
    return {
      accepted: outcome.accepted,
      refused: outcome.refused,
      warnings: outcome.warnings,
      ids: outcome.ids,
      batch: outcome.batch
        ? { id: outcome.batch.id, declared_captured_at: formatInstant(outcome.batch.declared_captured_at), reason: outcome.batch.reason }
        : null,
      episodes: [],
    };
  },
});
