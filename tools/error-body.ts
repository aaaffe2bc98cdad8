// One error shape for both doors, built here and nowhere else: an SvcError (or anything thrown) becomes a
// status and a `{detail}` body. REST sends them as they are; MCP puts the same code, status and detail in
// an `isError` result. The bodies' types come from their zod schemas (./error-schemas.ts), which feed the
// OpenAPI document, so neither can drift; only the types are imported, so building an error loads no zod.
import type { ErrorDetail, ShownIssue } from './error-schemas.ts';
import { MAX_INPUT_CHARS, SvcError, type ErrorCode, type FieldIssue } from './errors.ts';

/** Where the REST door reads a field from; a 422 `loc` starts with it. */
export type Source = 'body' | 'query' | 'path';
export type Locator = (field: string | number | undefined) => Source;

export const STATUS: Record<ErrorCode, number> = {
  SVC_AS_OF_REQUIRED: 400,
  SVC_BAD_TIMESTAMP: 400,
  SVC_UNAUTHORIZED: 401,
  invalid_input: 422,
  invalid_json: 400,
  payload_too_large: 413,
  not_found: 404,
  append_only: 501,
  unavailable: 503,
  overloaded: 503,
  over_share: 429,
  deadline_exceeded: 504,
  internal: 500,
};

export interface ErrorAnswer {
  status: number;
  /** Seconds before a retry can succeed; REST sends it as Retry-After. */
  retryAfter?: number;
  body: { detail: ErrorDetail } | { detail: ShownIssue[] };
}

/** The body of a non-422 error; `why` is always there, so a client never has to guess. */
export function errorDetail(code: ErrorCode | 'not_found', why: string): { detail: ErrorDetail } {
  return { detail: { error: code, why } };
}

export const UNAUTHORIZED_WHY =
  'a key is required: send Authorization: Bearer <API_KEY> (the key selects the tenant); only GET /v1/version, /v1/openapi.json and /docs are open';

/** What a short value looks like in a 422: scalars as sent (long strings cut), objects as they are or as cut JSON text. */
export function shownInput(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'string') return value.length > MAX_INPUT_CHARS ? `${value.slice(0, MAX_INPUT_CHARS)}…` : value;
  if (typeof value === 'bigint' || typeof value === 'function' || typeof value === 'symbol') return String(value);
  if (value === null || typeof value !== 'object') return value;
  let text: string;
  try {
    text = JSON.stringify(value);
  } catch {
    return null;
  }
  return text.length > MAX_INPUT_CHARS ? `${text.slice(0, MAX_INPUT_CHARS)}…` : value;
}

/** The value at `loc` in what the client sent, or undefined when the path leads nowhere (a missing field). */
function valueAt(raw: unknown, loc: readonly (string | number)[]): unknown {
  let at: unknown = raw;
  for (const key of loc) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string | number, unknown>)[key];
  }
  return at;
}

/**
 * Status and body for anything a door caught. `raw` is the input as the client sent it: a 422 item whose
 * validator did not keep the offending value gets it from there, so `input` is always present.
 */
export function errorAnswer(error: unknown, locate: Locator, raw?: unknown): ErrorAnswer {
  if (!(error instanceof SvcError)) {
    // A failure of ours is never reported with a client-fault code.
    console.error('internal error:', error);
    return {
      status: 500,
      body: errorDetail('internal', 'the server failed to answer; nothing was written by this request unless it was acknowledged'),
    };
  }
  if (error.code === 'invalid_input') {
    const located = error.issues.map((i: FieldIssue): ShownIssue => ({
      type: i.type,
      loc: [locate(i.loc[0]), ...i.loc],
      msg: i.msg,
      input: shownInput(i.input ?? valueAt(raw, i.loc)),
    }));
    // Conformance asks 400 for a query-parameter instant: the query is the read's address, not a body.
    const badQueryTime = located.find((i) => i.type === 'timestamp' && i.loc[0] === 'query');
    if (badQueryTime) {
      const why = `${badQueryTime.loc.slice(1).join('.')}: ${badQueryTime.msg}`;
      return { status: 400, body: { detail: { error: 'SVC_BAD_TIMESTAMP', why, loc: badQueryTime.loc } } };
    }
    if (located.length === 0) located.push({ type: 'invalid', loc: [locate(undefined)], msg: error.message, input: shownInput(raw) });
    return { status: 422, body: { detail: located } };
  }
  if (error.retryAfter !== undefined) {
    const body = { detail: { ...errorDetail(error.code, error.message).detail, retry_after: error.retryAfter } };
    return { status: STATUS[error.code], retryAfter: error.retryAfter, body };
  }
  return { status: STATUS[error.code], body: errorDetail(error.code, error.message) };
}

/** The one-word code of an answer: its `error`, or `invalid_input` for a 422. */
export function codeOf(answer: ErrorAnswer): string {
  return Array.isArray(answer.body.detail) ? 'invalid_input' : answer.body.detail.error;
}

/** One line naming what failed, for logs and for the text beside an MCP error result. */
export function oneLine(answer: ErrorAnswer): string {
  const d = answer.body.detail;
  const why = Array.isArray(d) ? d.map((i) => `${i.loc.join('.')}: ${i.msg}`).join('; ') : d.why;
  return `${codeOf(answer)}${why ? `: ${why}` : ''}`;
}
