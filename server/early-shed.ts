// Overload answered before a request is read. Each operation request passes `Admission.arrive` as it
// reaches the app, before its body is read, parsed or validated: over SVC_MAX_REQUESTS, or (for a route
// whose operation is heavy whatever its input, e.g. GET /v1/export) when the heavy queue would refuse it
// anyway, or (for a search) when both lanes a search may wait in refuse everybody (tools/search-gate.ts),
// the answer is given at once. `runOperation`'s `admit` still makes the full decision later (the key's
// share, input-dependent heavy writes); this only moves the refusals it can decide without the body to
// the front. Open routes (version, docs, the UI, discovery) never pass here.
//
// MCP names its tool in the body, so an MCP POST meets only the ceiling on requests in flight here. Its
// refusal is still an MCP answer: a small body is read (the JSON-RPC id is in it) to send the tool's
// `isError` result saying when to retry, the same as `admit` would; anything else gets HTTP 503 with
// Retry-After and a JSON-RPC error.
//
// A REST refusal is answered earlier still, by the HTTP listener itself (`createServerShedding`): the same
// decision and body, without building a Fetch request or running Hono for it.
import { createServer, type RequestListener, type Server, type ServerOptions } from 'node:http';
import type { MiddlewareHandler } from 'hono';
import { matchPath } from '../bridge/match-path.ts';
import type { RestEnv } from '../bridge/rest.ts';
import { routes } from '../bridge/routes.ts';
import type { Admission } from '../tools/admission.ts';
import { SvcError } from '../tools/errors.ts';
import { operationNamed } from '../tools/index.ts';
import { mcpRefusal, plainRefusal, restRefusal } from './refusals.ts';

const gates = new Map(
  routes.map((r) => {
    const op = operationNamed(r.operation);
    return [r, { heavy: op.heavy === 'always', searches: op.searchSlot === true }];
  }),
);

type Door = { kind: 'rest'; heavy: boolean; searches: boolean } | { kind: 'mcp' } | null;

/** Which door a request is for, and whether its operation is heavy whatever its input or takes a search lane; null: not gated. */
function doorOf(method: string, path: string): Door {
  if (path.startsWith('/v1/')) {
    for (const route of routes) {
      if (route.method === method && matchPath(route.path, path))
        return { kind: 'rest', heavy: false, searches: false, ...gates.get(route) };
    }
    return null;
  }
  if (method === 'POST' && (path === '/mcp' || path.startsWith('/mcp/') || path.startsWith('/apps/'))) return { kind: 'mcp' };
  return null;
}

export function earlyShed(admission: Admission): MiddlewareHandler<RestEnv> {
  return async (c, next) => {
    const door = doorOf(c.req.method, new URL(c.req.url).pathname);
    if (!door) return next();
    let arrived;
    try {
      arrived = door.kind === 'rest' ? admission.arrive(door.heavy, door.searches) : admission.arrive(false);
    } catch (error) {
      if (!(error instanceof SvcError)) throw error;
      return door.kind === 'rest' ? restRefusal(error) : mcpRefusal(c.req.raw, error);
    }
    try {
      await next();
    } finally {
      arrived.release();
    }
  };
}

/**
 * The same refusal for a REST operation route, decided from Node's `request` event before the request
 * becomes a Fetch `Request` and passes Hono's router and middleware: in a burst the refused requests
 * outnumber the admitted ones, and every one of them waits for the event loop, so what a refusal costs is
 * what every other refusal waits (docs/load.md). null: let the request through to the app, whose
 * `earlyShed` counts it in. MCP requests always go through (their refusal names the JSON-RPC id).
 */
export function refusalBeforeApp(
  admission: Admission,
  method: string | undefined,
  url: string | undefined,
): { status: number; headers: Record<string, string>; body: string } | null {
  if (!method || !url?.startsWith('/v1/')) return null;
  const query = url.indexOf('?');
  const door = doorOf(method, query < 0 ? url : url.slice(0, query));
  if (door?.kind !== 'rest') return null;
  const refusal = admission.refusal(door.heavy, door.searches);
  return refusal ? plainRefusal(refusal) : null;
}

/**
 * Node's `createServer` with `refusalBeforeApp` in front of the app's listener. `admission` is the gate of
 * the app answering here now (undefined: none, or requests are forwarded to another process).
 */
export function createServerShedding(admission: () => Admission | undefined): typeof createServer {
  const shedding = (options: ServerOptions, listener: RequestListener): Server =>
    createServer(options, (req, res) => {
      const gate = admission();
      const refused = gate ? refusalBeforeApp(gate, req.method, req.url) : null;
      if (!refused) {
        listener(req, res);
        return;
      }
      res.writeHead(refused.status, refused.headers);
      res.end(refused.body);
    });
  // @hono/node-server calls it as createServer(options, listener), the one form this supports.
  return shedding as typeof createServer;
}
