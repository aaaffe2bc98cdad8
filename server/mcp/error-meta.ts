// A tool error's text and machine-readable `_meta` (the rule is in ./errors.ts), apart from the operations
// so the HTTP threads (server/fronts/) word a refusal without loading them.
import type { ErrorAnswer } from '../../tools/error-body.ts';

/** The `_meta` key of a tool error's machine-readable part. */
export const ERROR_META_KEY = 'memory-ledger/error';

export interface McpIssue {
  type: string;
  /** The argument's path as the tool call names it: `["limit"]`, `["nodes", 0, "asserted_at"]`. */
  loc: (string | number)[];
  msg: string;
  input: unknown;
}

export interface ToolErrorMeta {
  /** The error code (REST's `detail.error`; `invalid_input` for a failed argument). */
  error: string;
  why?: string;
  /** The failed arguments of an `invalid_input`. */
  issues?: McpIssue[];
  loc?: (string | number)[];
  /** Seconds to wait before calling again, when the server shed the call (overloaded, over_share). */
  retry_after?: number;
}

const FIX: Readonly<Record<string, string>> = {
  invalid_input: 'Fix the argument named above and call the tool again.',
  SVC_BAD_TIMESTAMP: 'Send an ISO 8601 instant with an offset (2024-03-01T12:00:00Z), a date (2024-03-01), or "now".',
  not_found: 'Check the id (list_memories or search_memory show the ids that exist).',
  internal: 'Retry once; if it fails again the server log says why.',
  unavailable: 'Retry in a moment.',
};

/** REST's `["query", "limit"]` is the tool's `["limit"]`: an argument has no HTTP source. */
const argumentPath = (loc: readonly (string | number)[]): (string | number)[] =>
  ['query', 'body', 'path'].includes(String(loc[0])) ? loc.slice(1) : [...loc];

const shown = (v: unknown): string => (v === null || v === undefined ? '' : ` (sent ${JSON.stringify(v)})`);

export function toolErrorMeta(answer: ErrorAnswer): ToolErrorMeta {
  const d = answer.body.detail;
  if (Array.isArray(d))
    return { error: 'invalid_input', issues: d.map((i) => ({ type: i.type, loc: argumentPath(i.loc), msg: i.msg, input: i.input })) };
  return {
    error: d.error,
    why: d.why,
    ...(d.loc ? { loc: argumentPath(d.loc) } : {}),
    ...(d.retry_after !== undefined ? { retry_after: d.retry_after } : {}),
  };
}

/** `code: what failed (per argument). Fix.` on one line. */
export function toolErrorText(meta: ToolErrorMeta): string {
  const what = meta.issues
    ? meta.issues.map((i) => `${i.loc.length ? i.loc.join('.') : 'arguments'}: ${i.msg}${shown(i.input)}`).join('; ')
    : (meta.why ?? '');
  const fix = FIX[meta.error];
  return `${meta.error}${what ? `: ${what}` : ''}${fix && !what.includes(fix) ? `. ${fix}` : ''}`;
}

/** The `isError` tool result of an error: its one-line text for the model, its machine-readable part in `_meta`. */
export function toolErrorResult(meta: ToolErrorMeta): {
  isError: true;
  content: { type: 'text'; text: string }[];
  _meta: Record<string, ToolErrorMeta>;
} {
  return { isError: true, content: [{ type: 'text', text: toolErrorText(meta) }], _meta: { [ERROR_META_KEY]: { ...meta } } };
}
