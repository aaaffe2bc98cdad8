// SvcError → MCP, in one place: an `isError` tool result carrying the code, status and detail that
// tools/error-body.ts builds for both doors (the 422 issues included), so an agent and a REST client
// read the same failure. Only the framing is MCP's.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { codeOf, errorAnswer, oneLine } from '../../tools/error-body.ts';
import { locatorOf } from '../../tools/input-sources.ts';
import type { AnyOperation } from '../../tools/operation.ts';

export interface ToolErrorBody {
  /** The REST error code; `invalid_input` for a 422. */
  error: string;
  /** The status the REST route answers with. */
  status: number;
  /** The REST body's `detail`: `{error, why}`, or the list of failed fields for a 422. */
  detail: unknown;
}

export function errorResult(op: AnyOperation, error: unknown, args?: unknown): CallToolResult {
  const answer = errorAnswer(error, locatorOf(op.name), args);
  const structured: ToolErrorBody = { error: codeOf(answer), status: answer.status, detail: answer.body.detail };
  return { isError: true, content: [{ type: 'text', text: oneLine(answer) }], structuredContent: { ...structured } };
}
