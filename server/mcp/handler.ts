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
import { payloadTooLarge, plainLegacy, plainToolCall, rpcError, type LegacyEra } from './plain-call.ts';

export type ServerFactory = (authInfo: AuthInfo | undefined) => McpServer;

/**
 * Answers one plain 2025-era `tools/call` without building a server, or returns undefined to leave the
 * request to the SDK. Building a server with its ten tools, connecting a transport and running the SDK's
 * zod classifiers over the message cost ~1 ms of CPU a call, several times the operation itself
 * (`npm run bench -- --only mcp`); the answer is the same result the tool's callback gives the SDK.
 */
export type ToolCallFastPath = (name: string, args: Record<string, unknown>, authInfo: AuthInfo) => Promise<unknown> | undefined;

/** The 2025 era as this SDK knows it; the HTTP threads are given it (server/fronts/start-fronts.ts). */
export const LEGACY_ERA: LegacyEra = { versions: SUPPORTED_PROTOCOL_VERSIONS, versionMetaKey: PROTOCOL_VERSION_META_KEY };

export interface StatelessMcpHandler {
  fetch(request: Request, authInfo: AuthInfo): Promise<Response>;
  close(): Promise<void>;
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
      if (fastPath && plainLegacy(request, parsed, LEGACY_ERA)) {
        const call = plainToolCall(request, parsed);
        const answer = call ? fastPath(call.name, call.args, authInfo) : undefined;
        if (call && answer) return Response.json({ result: await answer, jsonrpc: '2.0', id: call.id }, { status: 200 });
      }
      return plainLegacy(request, parsed, LEGACY_ERA) || (await isLegacyRequest(request, parsed))
        ? legacy(request, parsed, authInfo)
        : modern.fetch(request, { authInfo, parsedBody: parsed });
    },
    close: () => modern.close(),
  };
}
