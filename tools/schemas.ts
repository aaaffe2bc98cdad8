// Input pieces shared by the operations. Write timestamps stay strings in the schemas and are parsed by
// the write handlers; read instants (as_of, valid_at) are parsed here, once, to microseconds or 'now'.
import { z } from 'zod';
import type { LensInstant } from '../storage/read/lens.ts';
import { instantProblemText } from './instant-text.ts';
import {
  instantProblem,
  knowledgeInstantProblem,
  parseInstant,
  parseKnowledgeInstant,
  type InstantProblem,
  type Micros,
} from '../storage/time.ts';

/** Marks a refinement failure as a timestamp problem, so a query parameter gets 400 SVC_BAD_TIMESTAMP. */
export const TIMESTAMP_ISSUE = 'svc_timestamp';

/** A string checked by `problem`; a failure is marked as a timestamp issue and says what is wrong. */
function instantString(problem: (text: string) => InstantProblem | null, extra = '') {
  return z.string().superRefine((text, ctx) => {
    const p = problem(text);
    if (p !== null)
      ctx.addIssue({ code: 'custom', message: instantProblemText(text, p, extra), params: { svc: TIMESTAMP_ISSUE }, input: text });
  });
}

export const Instant = instantString(instantProblem).meta({ format: 'date-time' });

export const KnowledgeInstant = instantString(knowledgeInstantProblem, ', or a date YYYY-MM-DD (read as 23:59:59.999999 UTC)');

const orNow =
  (problem: (text: string) => InstantProblem | null) =>
  (text: string): InstantProblem | null =>
    text === 'now' ? null : problem(text);

/**
 * A read's knowledge instant: an instant, a date, or `now` (the server's present, resolved when the read
 * is opened and written back in the certificate). Parsed here, once, to microseconds or 'now'.
 */
export const AsOf = instantString(orNow(knowledgeInstantProblem), ', a date YYYY-MM-DD, or "now"')
  .transform((text): LensInstant => (text === 'now' ? 'now' : parseKnowledgeInstant(text)))
  .describe(
    'Knowledge instant: the answer uses only what the ledger had learned by then (inclusive). "now" means the server\'s present ' +
      '(the certificate gives the instant used, so the read can be replayed); a date means the end of that day in UTC; an earlier ' +
      'instant replays what was known then.',
  );

/** A read's content instant: an instant with an offset, or `now`. */
export const ValidAt = instantString(orNow(instantProblem), ', or "now"')
  .transform((text): LensInstant => (text === 'now' ? 'now' : parseInstant(text)))
  .describe(
    'Content instant: keep only rows asserted by then whose validity interval [valid_from, valid_to) contains it. "now" means the server\'s present.',
  );

export const SpaceName = z.string().min(1).max(512);

export const instant = (text: string): Micros => parseInstant(text);
export const optionalInstant = (text: string | undefined): Micros | undefined => (text === undefined ? undefined : parseInstant(text));

/** Resolves a read instant against the ledger's present. */
export const atInstant = (t: LensInstant, present: Micros): Micros => (t === 'now' ? present : t);

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

/** A flag that arrives as a JSON boolean (body, MCP) or as the text true/false (query string). */
export const Flag = z
  .union([z.boolean(), z.enum(['true', 'false'])], { error: 'must be true or false' })
  .transform((v) => v === true || v === 'true');

/**
 * A whole number within [min, max]. `fromText` also takes its decimal text (a query string carries
 * nothing else); every failure, NaN included, says what is expected rather than what zod received.
 */
export function wholeNumber(min: number, max: number, fromText: boolean) {
  const expected = `must be a whole number from ${min} to ${max}`;
  const error = (issue: { input?: unknown }): string =>
    !fromText && typeof issue.input === 'string' ? `${expected}, sent as a JSON number (not in quotes)` : expected;
  return (fromText ? z.coerce.number({ error }) : z.number({ error })).int({ error }).min(min, { error }).max(max, { error });
}
