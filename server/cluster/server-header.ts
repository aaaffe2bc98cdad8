// `x-ledger-server` on every response (SVC_SERVER_ID), so a client behind the cluster's proxy, and the
// cluster test, can tell which server answered.
import type { MiddlewareHandler } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';

export const SERVER_HEADER = 'x-ledger-server';

export function serverHeader(serverId: string): MiddlewareHandler<RestEnv> {
  return async (c, next) => {
    await next();
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set(SERVER_HEADER, serverId);
  };
}
