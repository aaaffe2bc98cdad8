// `serve`'s door when another local process may hold the folder: in-process on the serve's own app while
// it holds, else each request admitted here (its key resolved to a tenant by this serve's own settings)
// and sent to the holder with that tenant. The holder trusts the tenant header only on its own door, so
// a client of this port can never set it: the header is replaced here, never passed through.
import type { Hono } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import { tenantResolver, unauthorized } from '../auth.ts';
import type { Config } from '../config.ts';
import { TENANT_HEADER, TOKEN_HEADER } from './door-headers.ts';
import type { Holding, LocalLink } from './link.ts';

/** Routes that carry no tenant data and need no key (see the app). */
const OPEN_PATHS = new Set(['/v1/version']);
const DROPPED = new Set(['host', 'authorization', 'content-length', 'connection', TENANT_HEADER, TOKEN_HEADER]);

export function linkedFetch(
  link: LocalLink,
  config: Config,
  appOf: (h: Holding) => Hono<RestEnv>,
): (request: Request) => Promise<Response> {
  const tenantOf = tenantResolver(config);
  return async (request) => {
    const holding = link.holding;
    if (holding) return appOf(holding).fetch(request);
    const url = new URL(request.url);
    const tenant = tenantOf(request.headers.get('authorization'));
    if (tenant === null && !OPEN_PATHS.has(url.pathname)) return Response.json(unauthorized, { status: 401 });
    const body = request.method === 'GET' || request.method === 'HEAD' ? null : Buffer.from(await request.arrayBuffer());
    const headers: Record<string, string> = {};
    request.headers.forEach((value, key) => {
      if (!DROPPED.has(key)) headers[key] = value;
    });
    if (tenant !== null) headers[TENANT_HEADER] = tenant;
    // After a takeover the request is answered here, by this serve's own app, with its own admission.
    const replay = (h: Holding): Promise<Response> =>
      Promise.resolve(appOf(h).fetch(new Request(request.url, { method: request.method, headers: request.headers, body })));
    return link.fetch({ method: request.method, path: `${url.pathname}${url.search}`, headers, body }, replay);
  };
}
