// SvcError → MCP, in one place. A tool error is `isError: true` with a text that names the argument (as
// the model sent it: `limit`, not REST's `query.limit`), what was expected and what to do. It carries no
// structuredContent: that field is held to the tool's output schema by strict clients (the v1 SDK client
// throws on a mismatch, the Inspector reports it), so an error body there would hide the error itself.
// The machine-readable code and failed fields travel in `_meta` instead, without REST's HTTP status.
import type { CallToolResult } from '@modelcontextprotocol/server';
import { errorAnswer } from '../../tools/error-body.ts';
import { locatorOf } from '../../tools/input-sources.ts';
import type { AnyOperation } from '../../tools/operation.ts';
import { toolErrorMeta, toolErrorResult } from './error-meta.ts';

export function errorResult(op: AnyOperation, error: unknown, args?: unknown): CallToolResult {
  const answer = errorAnswer(error, locatorOf(op.name), args);
  return toolErrorResult(toolErrorMeta(answer));
}
