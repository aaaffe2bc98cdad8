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
  readRequestBody,
  SUPPORTED_PROTOCOL_VERSIONS,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServer,
} from '@modelcontextprotocol/server';

export type ServerFactory = (authInfo: AuthInfo | undefined) => McpServer;

const rpcError = (status: number, code: number, message: string): Response =>
  Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });

/**
 * The common case decided without the SDK's classifier (a zod pass that costs ~0.3 ms a call): one
 * request or notification with no per-request protocol envelope and no modern version header is 2025-era.
 * Anything else (batches, responses, envelopes, modern headers) is left to `isLegacyRequest`.
 */
function plainLegacy(request: Request, body: unknown): boolean {
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

export function statelessMcpHandler(factory: ServerFactory, maxBodyBytes: number): StatelessMcpHandler {
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
      const body = await readRequestBody(request, maxBodyBytes);
      if (body.tooLarge) return rpcError(413, -32000, `Payload Too Large: the body must not exceed ${maxBodyBytes} bytes`);
      let parsed: unknown;
      try {
        parsed = JSON.parse(body.text);
      } catch {
        return rpcError(400, -32700, 'Parse error: the body is not valid JSON');
      }
      return plainLegacy(request, parsed) || (await isLegacyRequest(request, parsed))
        ? legacy(request, parsed, authInfo)
        : modern.fetch(request, { authInfo, parsedBody: parsed });
    },
    close: () => modern.close(),
  };
}
