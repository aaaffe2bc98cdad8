// Input pieces shared by the operations. Timestamps stay strings in the schemas (their JSON Schema is
// what agents read) and are parsed to microseconds by the handlers through `instant()`.
import { z } from 'zod';
import { instantProblem, knowledgeInstantProblem, parseInstant, parseKnowledgeInstant, type Micros } from '../storage/time.ts';

/** Marks a refinement failure as a timestamp problem, so a query parameter gets 400 SVC_BAD_TIMESTAMP. */
export const TIMESTAMP_ISSUE = 'svc_timestamp';

export const Instant = z
  .string()
  .refine((s) => instantProblem(s) === null, {
    message: 'must be an ISO 8601 instant with a timezone offset, e.g. 2024-03-01T12:00:00Z',
    params: { svc: TIMESTAMP_ISSUE },
  });

export const KnowledgeInstant = z
  .string()
  .refine((s) => knowledgeInstantProblem(s) === null, {
    message: 'must be an ISO 8601 instant with a timezone offset, or a date YYYY-MM-DD (read as 23:59:59.999999 UTC)',
    params: { svc: TIMESTAMP_ISSUE },
  });

export const AsOf = KnowledgeInstant.describe(
  'Knowledge instant: the answer uses only what the ledger had learned by then (inclusive). A date means the end of that day in UTC. Use the present instant for "what do we know now"; an earlier one replays what was known then.',
);

export const ValidAt = Instant.describe(
  'Content instant: keep only rows asserted by then whose validity interval [valid_from, valid_to) contains it.',
);

export const SpaceName = z.string().min(1).max(512);

export const instant = (text: string): Micros => parseInstant(text);
export const knowledgeInstant = (text: string): Micros => parseKnowledgeInstant(text);
export const optionalInstant = (text: string | undefined): Micros | undefined => (text === undefined ? undefined : parseInstant(text));

const MAX_JSON_DEPTH = 32;

function jsonDepth(value: unknown, depth = 0): number {
  if (depth > MAX_JSON_DEPTH) return depth;
  if (value === null || typeof value !== 'object') return depth;
  let max = depth + 1;
  for (const v of Array.isArray(value) ? value : Object.values(value as Record<string, unknown>)) {
    max = Math.max(max, jsonDepth(v, depth + 1));
    if (max > MAX_JSON_DEPTH) break;
  }
  return max;
}

/** Free-form JSON, nested at most 32 levels (deeper payloads are refused rather than crash a parser). */
export const JsonValue = z.unknown().refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, {
  message: `nested deeper than ${MAX_JSON_DEPTH} levels`,
});

export const JsonObject = z
  .record(z.string(), z.unknown())
  .refine((v) => jsonDepth(v) <= MAX_JSON_DEPTH, { message: `nested deeper than ${MAX_JSON_DEPTH} levels` });
