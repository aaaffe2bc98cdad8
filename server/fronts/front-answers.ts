// The requests an HTTP thread answers itself, as the doors on the ledger thread would: a REST operation
// route (bridge/rest.ts) and a plain MCP `tools/call` (server/mcp/handler.ts). It reads the request,
// resolves the key and builds the operation's raw input; the ledger thread validates, admits and runs it
// (./answer-calls.ts). Anything else, or a request that turns out not to be one of these once its body is
// read, goes on whole to the ledger thread's own listener (./pass-on.ts).
import { matchPath } from '../../bridge/match-path.ts';
import { readRestInput } from '../../bridge/rest-input.ts';
import { tenantResolver, unauthorized } from '../auth.ts';
import { payloadTooLarge, plainJsonType, plainLegacy, plainToolCall } from '../mcp/plain-call.ts';
import { isLocalBind, scopeOf, SECRET_SPACE } from '../mcp/scope.ts';
import { readBodyText } from '../request-body.ts';
import type { LedgerCalls } from './ledger-calls.ts';
import type { PassOn } from './pass-on.ts';
import type { FrontData, FrontRoute } from './protocol.ts';

const json = (body: string, status: number, retryAfter?: number): Response => {
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (retryAfter !== undefined) headers['retry-after'] = String(retryAfter);
  if (status === 401) headers['www-authenticate'] = 'Bearer';
  return new Response(body, { status, headers });
};

/**
 * Whether a request may be answered here, decided from its method and path alone, before reading it: its
 * REST route, 'mcp' for an MCP POST, null when it is sent on whole.
 */
export function answeredHere(
  routes: readonly FrontRoute[],
  method: string | undefined,
  url: string | undefined,
): FrontRoute | 'mcp' | null {
  if (!url) return null;
  const query = url.indexOf('?');
  const path = query < 0 ? url : url.slice(0, query);
  if (method === 'POST' && (path === '/mcp' || path.startsWith('/mcp/') || path.startsWith('/apps/'))) return 'mcp';
  if ((method !== 'GET' && method !== 'POST') || !path.startsWith('/v1/')) return null;
  return routes.find((r) => r.method === method && matchPath(r.path, path) !== null) ?? null;
}

/** What answering needs of an HTTP thread's settings; `host`, the address it listens on (a local bind checks origins). */
export type FrontSettings = Pick<FrontData, 'apiKeys' | 'tenant' | 'maxBodyBytes' | 'routes' | 'tools' | 'legacyEra'> & { host: string };

/** `tenantOf`: the thread's one resolver of keys, whose cache of matched keys its listener shares. */
export function frontAnswers(
  data: FrontSettings,
  calls: Pick<LedgerCalls, 'call'>,
  passOn: Pick<PassOn, 'read'>,
  tenantOf: ReturnType<typeof tenantResolver> = tenantResolver(data),
): (request: Request) => Promise<Response> {
  const hosted = data.apiKeys !== null;
  const toolNames = new Set(data.tools);

  const rest = async (request: Request, url: URL, route: FrontRoute, params: Record<string, string>): Promise<Response> => {
    const tenant = tenantOf(request.headers.get('authorization'));
    if (tenant === null) return json(JSON.stringify(unauthorized), 401);
    const read = await readRestInput(request, url, route, params, data.maxBodyBytes);
    if (!read.ok) return json(JSON.stringify(read.error.body), read.error.status, read.error.retryAfter);
    const reply = await calls.call(
      { door: 'rest', operation: route.operation, input: read.input, tenant, pathFields: Object.keys(params), from: route.from },
      request.signal,
    );
    if (reply.kind === 'forward') return passOn.read(request, read.text ?? undefined);
    if (reply.kind !== 'rest') throw new Error(`a REST call was answered as ${reply.kind}`);
    return json(reply.body, reply.status, reply.retryAfter);
  };

  const mcp = async (request: Request, url: URL): Promise<Response> => {
    const scope = url.pathname === '/mcp' ? null : scopeOf(url.pathname);
    const authorization = request.headers.get('authorization');
    // Not found, a space addressed by its secret alone, or not JSON: the ledger thread's door answers.
    if (url.pathname !== '/mcp' && scope === null) return passOn.read(request);
    if (hosted && authorization === null && scope && SECRET_SPACE.test(scope.space)) return passOn.read(request);
    // A local server checks a browser's Origin (the SDK's rule, on the ledger thread); other clients send none.
    if (!hosted && isLocalBind(data.host) && request.headers.has('origin')) return passOn.read(request);
    const tenant = tenantOf(authorization);
    if (tenant === null) return json(JSON.stringify(unauthorized), 401);
    if (!plainJsonType(request.headers.get('content-type'))) return passOn.read(request);
    const body = await readBodyText(request, data.maxBodyBytes);
    if (body.tooLarge) return payloadTooLarge(data.maxBodyBytes);
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.text);
    } catch {
      return passOn.read(request, body.text);
    }
    const call = plainLegacy(request, parsed, data.legacyEra) ? plainToolCall(request, parsed) : null;
    if (!call || !toolNames.has(call.name)) return passOn.read(request, body.text);
    const reply = await calls.call(
      { door: 'mcp', operation: call.name, args: call.args, tenant, confinedSpace: scope?.space },
      request.signal,
    );
    if (reply.kind === 'forward') return passOn.read(request, body.text);
    if (reply.kind !== 'mcp') throw new Error(`an MCP call was answered as ${reply.kind}`);
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (reply.retryAfter !== undefined) headers['retry-after'] = String(reply.retryAfter);
    // The JSON-RPC answer around the result's text, in the order the door writes it.
    return new Response(`{"result":${reply.result},"jsonrpc":"2.0","id":${JSON.stringify(call.id)}}`, { status: 200, headers });
  };

  return async (request) => {
    const url = new URL(request.url);
    if (url.pathname.startsWith('/v1/')) {
      for (const route of data.routes) {
        if (route.method !== request.method) continue;
        const params = matchPath(route.path, url.pathname);
        if (params) return rest(request, url, route, params);
      }
      return passOn.read(request);
    }
    return mcp(request, url);
  };
}
