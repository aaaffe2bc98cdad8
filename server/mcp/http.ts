// The agent door over streamable HTTP: `/mcp` (the key's whole tenant) and `/mcp/<app_label>/<space>`
// (confined to one space; also at `/apps/<app_label>/<space>/mcp`). Stateless: each request gets a fresh
// server from the registry, built for the tenant and space this request was admitted to, so no session
// can outlive or widen its admission.
import { localhostAllowedOrigins, originValidationResponse, type AuthInfo } from '@modelcontextprotocol/server';
import type { Context as HonoContext, Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import type { Context } from '../../tools/context.ts';
import type { AppDeps } from '../app.ts';
import { tenantResolver, unauthorized } from '../auth.ts';
import { statelessMcpHandler } from './handler.ts';
import { isLocalBind, scopeOf, SECRET_SPACE, type Scope } from './scope.ts';
import { callOperation, createLedgerMcpServer } from './tools.ts';
import { operations } from '../../tools/index.ts';

const operationByName = new Map(operations.map((op) => [op.name, op]));

export function mountMcp(app: Hono<RestEnv>, deps: AppDeps): void {
  const tenantOf = tenantResolver(deps.config);
  const hosted = deps.config.apiKeys !== null;
  const admitted = (authInfo: AuthInfo | undefined): Context => {
    const ctx = authInfo?.extra?.ctx as Context | undefined;
    if (!ctx) throw new Error('MCP request reached the server factory without an admitted context');
    return ctx;
  };
  const handler = statelessMcpHandler(
    (authInfo) => createLedgerMcpServer(admitted(authInfo)),
    deps.config.maxBodyBytes,
    // A tool call is answered by the operation directly, in this request's own context; an unknown tool
    // name goes to the SDK, which answers it as it answers any other request.
    (name, args, authInfo) => {
      const op = operationByName.get(name);
      return op ? callOperation(op, args, admitted(authInfo)) : undefined;
    },
  );

  const serve = async (c: HonoContext<RestEnv>, scope: Scope | null): Promise<Response> => {
    // An open local server has no key to stop a web page from driving it: refuse foreign browser origins.
    if (!hosted && isLocalBind(deps.config.host)) {
      const rejected = originValidationResponse(c.req.raw, localhostAllowedOrigins());
      if (rejected) return rejected;
    }
    const authorization = c.req.header('authorization');
    let tenant: string | null;
    if (hosted && authorization === undefined && scope && SECRET_SPACE.test(scope.space)) {
      tenant = await deps.ledger.firstWriterOf(scope.space);
      if (tenant === null) return c.json({ detail: { error: 'not_found', why: 'no such space' } }, 404);
    } else {
      tenant = tenantOf(authorization);
    }
    if (tenant === null) return c.json(unauthorized, 401);
    const ctx: Context = { ledger: deps.ledger, tenant, confinedSpace: scope?.space, services: deps.services, signal: c.req.raw.signal };
    const authInfo: AuthInfo = { token: '', clientId: tenant, scopes: [], extra: { ctx } };
    return handler.fetch(c.req.raw, authInfo);
  };

  app.all('/mcp', (c) => serve(c, null));
  app.all('/mcp/*', (c) => {
    const scope = scopeOf(new URL(c.req.url).pathname);
    if (!scope) return c.json({ detail: { error: 'not_found', why: 'an app-scoped MCP address is /mcp/<app_label>/<space>' } }, 404);
    return serve(c, scope);
  });
  // The same app-scoped door, addressed so that the path ends in /mcp; anything else under /apps is not ours.
  app.all('/apps/*', (c, next) => {
    const scope = scopeOf(new URL(c.req.url).pathname);
    return scope ? serve(c, scope) : next();
  });
}
