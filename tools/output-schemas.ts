// What each operation answers, as zod schemas: each operation names its own as `output`, and the OpenAPI
// document gives it as the 200 body, so the doors and the document describe the same JSON. Kept apart
// from the operation files so the handlers and their inputs can change without touching this.
import { z } from 'zod';
import { EDGE_TYPES, POLICIES } from '../storage/types.ts';

const Instant = z
  .string()
  .meta({ format: 'date-time' })
  .describe('ISO 8601 UTC instant with six fraction digits, e.g. 2024-03-01T23:59:59.999999Z.');
const Id = z.string();
const Count = z.number().int().min(0);

export const ValidSchema = z
  .object({
    from: Instant.describe('Start of the validity interval (included).'),
    to: Instant.nullable().describe('End of the validity interval (excluded); null when open.'),
  })
  .describe('The half-open interval [from, to) in which the content holds.');

export const InvalidatedSchema = z.object({
  reason: z.string(),
  by: z.string().nullable(),
  invalidated_at: Instant.describe('When the server recorded the invalidation.'),
  known_at: Instant.describe('From when reads see it: the declared instant when backfilled, else invalidated_at.'),
});

export const InvalidationSchema = z
  .object({ target_id: Id, ...InvalidatedSchema.shape })
  .meta({ id: 'Invalidation', description: 'Who retracted a block, why, and from when reads see it.' });

export const NodeRowSchema = z
  .object({
    id: Id,
    kind: z.string(),
    tenant: z.string(),
    space: z.string(),
    statement: z.string().nullable(),
    category: z.string().nullable(),
    payload: z.record(z.string(), z.unknown()),
    asserted_at: Instant,
    captured_at: Instant.describe('When the server learned the row.'),
    known_at: Instant.describe('The knowledge instant reads mask on: the declared backfill instant, else captured_at.'),
    valid: ValidSchema,
    fact_key: z.string().optional(),
    fact_value: z.unknown().optional(),
    superseded_by: z
      .array(Id)
      .describe('Ids of the nodes whose SUPERSEDES edge, visible to this read, points at this one, sorted; [] when none.'),
    invalidated: InvalidatedSchema.optional().describe('Present only with include_invalidated=true on a node invalidated as of the read.'),
  })
  .meta({ id: 'NodeRow', description: 'One version of a block.' });

export const EdgeRowSchema = z
  .object({
    source_id: Id,
    target_id: Id,
    edge_type: z.enum(EDGE_TYPES as [string, ...string[]]),
    confidence: z.number().nullable(),
    lag: z.string().nullable().describe('ISO 8601 duration.'),
    mechanism: z.string().nullable(),
    space: z.string(),
    tenant: z.string(),
    asserted_at: Instant,
    valid: ValidSchema,
    captured_at: Instant,
    known_at: Instant,
  })
  .meta({ id: 'EdgeRow', description: 'One typed edge between two blocks.' });

export const MaskedSchema = z
  .object({ node: Count.optional(), edge: Count.optional(), verdict: Count.optional() })
  .describe('Rows hidden because they were learned after as_of, by kind; kinds with none are left out.');

export const CertificateSchema = z
  .object({
    as_of: Instant.describe('The knowledge instant applied (a date widened to the end of its day; "now" resolved).'),
    tx_as_of: Instant.describe('When the server answered.'),
    masked: MaskedSchema.optional(),
    backfill: z.object({ batches: Count, rows: Count }).optional().describe('Shown rows resting on a declared backfill instant.'),
    rules_as_of: Instant.optional(),
    fact: z.string().optional(),
    invalidated: Count.optional().describe('Versions left out because their node was invalidated as of as_of (omitted when 0).'),
  })
  .meta({ id: 'Certificate', description: 'What the answer is certified against.' });

const ReadReason = z.enum(['not_yet', 'absent', 'invalidated']);

const Batch = z.object({ id: Id, declared_captured_at: Instant, reason: z.string() }).describe('The declared backfill batch of the write.');

const Refusal = z
  .looseObject({ id: z.string(), kind: z.string(), reason: z.string() })
  .describe('A row left unwritten; may carry more keys (allowed, expected).');
const Warning = z.looseObject({ id: z.string(), kind: z.string(), warning: z.string() });
const Episode = z.object({
  message: Count,
  episode_id: Id,
  observed_at: Instant,
  blocks: z.array(Id),
  entities: z.array(Id),
  edges: z.array(z.object({ source_id: Id, target_id: Id, edge_type: z.string() })),
});

export const RememberOutputSchema = z.object({
  accepted: Count,
  refused: z.array(Refusal),
  warnings: z.array(Warning),
  ids: z.array(Id).describe('Ids of the nodes written.'),
  batch: Batch.nullable(),
  episodes: z.array(Episode).describe('Message writes only: what each message produced.'),
});

export const ListMemoriesOutputSchema = z.object({
  items: z.array(NodeRowSchema),
  masked: MaskedSchema.nullable(),
  next_cursor: z.string().nullable().describe('Pass as cursor for the next page; null on the last.'),
  certificate: CertificateSchema,
});

export const GetMemoryOutputSchema = z.object({
  item: NodeRowSchema.nullable(),
  versions: z.array(NodeRowSchema),
  edges: z.object({ in: z.array(EdgeRowSchema), out: z.array(EdgeRowSchema) }),
  reason: ReadReason.optional(),
  invalidation: InvalidationSchema.optional(),
  certificate: CertificateSchema,
});

export const SearchMemoryOutputSchema = z.object({
  results: z.array(
    z.object({
      node: NodeRowSchema,
      score: z.number(),
      match: z.enum(['direct', 'expansion']),
      depth: Count,
      path: z.array(Id),
      via: z.string().nullable(),
    }),
  ),
  certificate: CertificateSchema,
});

export const WhyOutputSchema = z.object({
  chain: z.array(
    z.object({
      node: NodeRowSchema,
      depth: Count,
      path: z.array(Id),
      via: z.string().nullable(),
      role: z
        .string()
        .describe(
          'subject, cause/effect, contributing_cause/contributed_effect, trigger/triggered, preventer/prevented, support/supported, contradiction/contradicted, qualification/qualified, successor/predecessor, restatement/restated, concurrent.',
        ),
    }),
  ),
  reason: ReadReason.optional(),
  certificate: CertificateSchema,
});

export const DeclareFactOutputSchema = z.object({
  declared: z.object({
    fact_key: z.string(),
    key_fields: z.array(z.string()),
    policy: z.enum(POLICIES as [string, ...string[]]),
    source_order: z.array(z.string()).nullable(),
    declared_at: Instant,
  }),
});

export const ResolveFactOutputSchema = z.object({
  status: z.enum(['answered', 'no_answer']),
  value: z.unknown().optional(),
  reason: z.enum(['undeclared_fact', 'no_data', 'not_yet', 'no_value_at', 'unresolved_conflict']).optional(),
  policy: z.string().nullable(),
  candidates: z.array(
    z.object({
      id: Id,
      value: z.unknown(),
      space: z.string(),
      asserted_at: Instant,
      valid: ValidSchema,
      known_at: Instant,
      source: z.string(),
      superseded_by: z.array(Id),
    }),
  ),
  certificate: CertificateSchema,
});

export const InvalidateMemoryOutputSchema = z.object({
  invalidation: InvalidationSchema,
  warnings: z
    .array(z.looseObject({ id: Id, warning: z.string() }))
    .describe('already_invalidated when the node was already invalidated (nothing written).'),
  batch: Batch.nullable(),
});

export const ListSpacesOutputSchema = z.object({
  spaces: z.array(z.object({ space: z.string(), nodes: Count, edges: Count, first_known_at: Instant, last_known_at: Instant })),
  certificate: CertificateSchema,
});

/** What an MCP tool answers for an archive (the bytes travel as an embedded resource beside it). */
export const ArchiveOutputSchema = z.object({
  filename: z.string(),
  media_type: z.literal('application/gzip'),
  bytes: Count,
  uri: z.string(),
});

export const VersionOutputSchema = z.object({
  name: z.string(),
  version: z.string(),
  api: z.literal('v1'),
  bundle_version: z.number().int(),
  now: Instant.describe('The server\'s present instant: what as_of "now" resolves to at this moment.'),
});

export const CheckInstallOutputSchema = z.object({
  ok: z.boolean(),
  checks: z.array(z.object({ name: z.string(), ok: z.boolean(), detail: z.string() })),
});
