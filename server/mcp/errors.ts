// SvcError → MCP, in one place: an `isError` tool result carrying the code and body REST would answer
// for the same input (the 422 issues included), so an agent and a REST client read the same failure.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { httpError, type Source } from '../../bridge/errors.ts';
import { routes } from '../../bridge/routes.ts';
import type { AnyOperation } from '../../tools/operation.ts';

/** Where REST reads each field of the operation from, so a 422's `loc` and a query timestamp's 400 match. */
function sourceOf(op: AnyOperation): (field: string | number | undefined) => Source {
  const route = routes.find((r) => r.operation === op.name);
  if (!route) return () => 'body';
  const pathParams = new Set(route.path.split('/').filter((s) => s.startsWith(':')).map((s) => s.slice(1)));
  return (field) => (typeof field === 'string' && pathParams.has(field) ? 'path' : route.from);
}

export interface ToolErrorBody {
  /** The REST error code; `invalid_input` for a 422. */
  error: string;
  /** The status the REST route answers with. */
  status: number;
  /** The REST body's `detail`: `{error, why}`, or the list of failed fields for a 422. */
  detail: unknown;
}

export function errorResult(op: AnyOperation, error: unknown): CallToolResult {
  const { status, body } = httpError(error, sourceOf(op));
  const detail = (body as { detail: unknown }).detail;
  const code = Array.isArray(detail) ? 'invalid_input' : String((detail as { error?: unknown }).error ?? 'internal');
  const why = Array.isArray(detail)
    ? detail.map((i: { loc?: unknown[]; msg?: string }) => `${(i.loc ?? []).join('.')}: ${i.msg ?? ''}`).join('; ')
    : String((detail as { why?: unknown }).why ?? '');
  const structured: ToolErrorBody = { error: code, status, detail };
  return { isError: true, content: [{ type: 'text', text: `${code}${why ? `: ${why}` : ''}` }], structuredContent: { ...structured } };
}
