// Streamable HTTP serving for both protocol eras, stateless. 2025-era requests (what today's clients send)
// are answered by a fresh server over the SDK's web-standard transport in JSON mode: the tools answer with
// one result, so there is nothing to stream, and a plain JSON body skips the SSE wrapping the SDK's
// stateless fallback adds (several ms a call, measured in `npm run bench -- --only mcp`). 2026-07-28
// requests go to the SDK's own modern handler. The body is read and parsed once for both.
import {
  createMcpHandler,
  isJsonContentType,
  isLegacyRequest,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';
import { readBodyText } from '../request-body.ts';

export type ServerFactory = (authInfo: AuthInfo | undefined) => McpServer;

/**
 * Answers one plain 2025-era `tools/call` without building a server, or returns undefined to leave the
 * request to the SDK. Building a server with its ten tools, connecting a transport and running the SDK's
 * zod classifiers over the message cost ~1 ms of CPU a call, several times the operation itself
 * (`npm run bench -- --only mcp`); the answer is the same result the tool's callback gives the SDK.
 */
export type ToolCallFastPath = (name: string, args: Record<string, unknown>, authInfo: AuthInfo) => Promise<unknown> | undefined;

const rpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/** A body over SVC_MAX_BODY_BYTES, refused in the protocol (here and by the HTTP threads, server/fronts/). */
export const payloadTooLarge = (maxBodyBytes: number): Response =>
  rpcError(413, -32000, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`);

/**
 * The common case decided without the SDK's classifier (a zod pass that costs ~0.3 ms a call): one
 * request or notification with no per-request protocol envelope and no modern version header is 2025-era.
 * Anything else (batches, responses, envelopes, modern headers) is left to `isLegacyRequest`.
 */
export function plainLegacy(request: Request, body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const { method, params } = body as { method?: unknown; params?: { _meta?: Record<string, unknown> } };
  if (typeof method !== 'string') return false;
  if (params?._meta && PROTOCOL_VERSION_META_KEY in params._meta) return false;
  const header = request.headers.get('mcp-protocol-version')?.trim();
  return header === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(header);
}

export interface StatelessMcpHandler {
  fetch(request: Request, authInfo: AuthInfo): Promise<Response>;
  close(): Promise<void>;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A single JSON-RPC `tools/call` request the fast path may answer: the SDK would accept it and do nothing more. */
export function plainToolCall(
  request: Request,
  body: unknown,
): { id: string | number; name: string; args: Record<string, unknown> } | null {
  if (!isPlainObject(body) || body.jsonrpc !== '2.0' || body.method !== 'tools/call') return null;
  const { id, params } = body;
  if ((typeof id !== 'string' && typeof id !== 'number') || !isPlainObject(params) || typeof params.name !== 'string') return null;
  const args = params.arguments ?? {};
  // Task-augmented calls and anything the SDK would refuse (406 without both media types) stay with the SDK.
  if (!isPlainObject(args) || 'task' in params || Object.keys(body).length !== 4) return null;
  const accept = request.headers.get('accept');
  if (!accept?.includes('application/json') || !accept.includes('text/event-stream')) return null;
  return { id, name: params.name, args };
}

export function statelessMcpHandler(factory: ServerFactory, maxBodyBytes: number, fastPath?: ToolCallFastPath): StatelessMcpHandler {
  const modern = createMcpHandler(({ authInfo }) => factory(authInfo), { legacy: 'reject', maxRequestBodySize: maxBodyBytes });

  const legacy = async (request: Request, parsedBody: unknown, authInfo: AuthInfo): Promise<Response> => {
    // Sessions (GET streams, DELETE) do not exist on a stateless endpoint.
    if (request.method !== 'POST') return rpcError(405, -32000, 'Method not allowed.');
    const server = factory(authInfo);
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody, authInfo });
    } finally {
      void transport.close().catch(() => undefined);
      void server.close().catch(() => undefined);
    }
  };

  return {
    async fetch(request, authInfo) {
      if (request.method !== 'POST')
        return (await isLegacyRequest(request)) ? legacy(request, undefined, authInfo) : modern.fetch(request, { authInfo });
      if (!isJsonContentType(request.headers.get('content-type')))
        return rpcError(415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      const body = await readBodyText(request, maxBodyBytes);
      if (body.tooLarge) return payloadTooLarge(maxBodyBytes);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON');
      }
      if (fastPath && plainLegacy(request, parsed)) {
        const call = plainToolCall(request, parsed);
        const answer = call ? fastPath(call.name, call.args, authInfo) : undefined;
        if (call && answer) return Response.json({ result: await answer, jsonrpc: '2.0', id: call.id }, { status: 200 });
      }
      return plainLegacy(request, parsed) || (await isLegacyRequest(request, parsed))
        ? legacy(request, parsed, authInfo)
        : modern.fetch(request, { authInfo, parsedBody: parsed });
    },
    close: () => modern.close(),
  };
}
