// The error bodies' zod schemas: the OpenAPI document's (bridge/openapi.ts) and the types the bodies are
// built with (./error-body.ts).
import { z } from 'zod';
import { MAX_INPUT_CHARS } from './errors.ts';

export const ErrorDetailSchema = z
  .object({
    error: z
      .string()
      .describe(
        'A stable code: SVC_AS_OF_REQUIRED, SVC_BAD_TIMESTAMP, SVC_UNAUTHORIZED, invalid_json, payload_too_large, not_found, append_only, unavailable, overloaded, over_share, deadline_exceeded, internal.',
      ),
    why: z.string().describe('What went wrong and what to do, in plain words.'),
    loc: z
      .array(z.union([z.string(), z.number()]))
      .optional()
      .describe('SVC_BAD_TIMESTAMP only: the query parameter, e.g. ["query", "as_of"].'),
    retry_after: z
      .number()
      .int()
      .optional()
      .describe('overloaded, over_share and deadline_exceeded only: seconds to wait before retrying (also the Retry-After header).'),
  })
  .describe('Every error but a validation failure.');

export const FieldIssueSchema = z.object({
  type: z.string().describe('What failed: a zod issue code (invalid_type, too_small, ...), extra_forbidden, timestamp, ...'),
  loc: z
    .array(z.union([z.string(), z.number()]))
    .describe('The field, from its source on: ["body", "nodes", 0, "asserted_at"], ["query", "limit"], ["path", "id"].'),
  msg: z.string(),
  input: z
    .unknown()
    .describe(
      `The offending value as sent (a string or JSON text over ${MAX_INPUT_CHARS} characters is cut and ends with "…"); null when the field is missing.`,
    ),
});

export const ErrorBodySchema = z.object({ detail: ErrorDetailSchema });
export const ValidationErrorBodySchema = z.object({ detail: z.array(FieldIssueSchema).min(1) });

export type ErrorDetail = z.infer<typeof ErrorDetailSchema>;
export type ShownIssue = z.infer<typeof FieldIssueSchema>;
