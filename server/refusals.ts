// The answers to a request refused for overload before it is read (./early-shed.ts, and the HTTP threads
// in server/fronts/): REST's 503 or 429 with Retry-After, and MCP's tool error result naming the call.
import { errorAnswer } from '../tools/error-body.ts';
import type { SvcError } from '../tools/errors.ts';
import { toolErrorMeta, toolErrorResult, toolErrorText } from './mcp/error-meta.ts';
import { readBodyText } from './request-body.ts';

/** An MCP body up to this size is read to answer a refusal in the protocol; a larger one is refused unread (by its content-length, or once this much has come in). */
const MCP_PEEK_BYTES = 16 * 1024;

/** A REST refusal as Node's listener writes it, before any Fetch `Request` is built (here and in server/fronts/). */
export function plainRefusal(error: SvcError): { status: number; headers: Record<string, string>; body: string } {
  const answer = errorAnswer(error, () => 'body');
  return {
    status: answer.status,
    headers: { 'content-type': 'application/json', 'retry-after': String(answer.retryAfter ?? 1) },
    body: JSON.stringify(answer.body),
  };
}

/** The same refusal as a Fetch `Response`, for the app's middleware (./early-shed.ts). */
export function restRefusal(error: SvcError): Response {
  const refused = plainRefusal(error);
  return new Response(refused.body, { status: refused.status, headers: refused.headers });
}

export async function mcpRefusal(request: Request, error: SvcError): Promise<Response> {
  const answer = errorAnswer(error, () => 'body');
  const retryAfter = String(answer.retryAfter ?? 1);
  const meta = toolErrorMeta(answer);
  const body = await readBodyText(request, MCP_PEEK_BYTES).catch(() => ({ tooLarge: true as const }));
  if (!body.tooLarge) {
    const id = toolCallId(body.text);
    if (id !== null) {
      return Response.json({ result: toolErrorResult(meta), jsonrpc: '2.0', id }, { status: 200, headers: { 'retry-after': retryAfter } });
    }
  }
  return Response.json(
    { jsonrpc: '2.0', error: { code: -32000, message: toolErrorText(meta), data: meta }, id: null },
    { status: 503, headers: { 'retry-after': retryAfter } },
  );
}

/** The id of a single JSON-RPC `tools/call`; null for anything else (a batch, another method, bad JSON). */
function toolCallId(text: string): string | number | null {
  try {
    const body = JSON.parse(text) as { method?: unknown; id?: unknown };
    if (body.method !== 'tools/call') return null;
    return typeof body.id === 'string' || typeof body.id === 'number' ? body.id : null;
  } catch {
    return null;
  }
}
