// The HTTP application: authentication, the open version route, the REST door, and (mounted by the MCP
// wiring) the agent door. Built in-process so tests call `app.request()` without a port.
import { Hono, type MiddlewareHandler } from 'hono';
import type { Ledger } from '../storage/log/ledger.ts';
import type { Context, Services } from '../tools/context.ts';
import { mountDocs } from '../bridge/docs.ts';
import { mountRest, type RestEnv } from '../bridge/rest.ts';
import { mountUi } from '../bridge/ui/routes.ts';
import { errorDetail } from '../tools/error-body.ts';
import { mountAdmin } from './admin.ts';
import { tenantResolver, unauthorized } from './auth.ts';
import type { PlacementStatus } from './cluster/placement-route.ts';
import { serverHeader } from './cluster/server-header.ts';
import { runChecks, type CheckProvider, coreChecks } from './checks.ts';
import type { Config } from './config.ts';
import { mountDiscovery } from './discovery.ts';
import { earlyShed } from './early-shed.ts';
import { BUNDLE_VERSION, SERVICE_NAME, SERVICE_VERSION } from './version.ts';
import { formatInstant } from '../storage/time.ts';

export interface AppDeps {
  config: Config;
  ledger: Ledger;
  services: Services;
  checks?: CheckProvider[];
  /** Mounts further doors (the MCP endpoints) that run their own authentication. */
  mount?: (app: Hono<RestEnv>, deps: AppDeps) => void;
  /** In a cluster: the placement check every tenant request passes before either door (server/cluster/gate.ts). */
  gate?: MiddlewareHandler<RestEnv>;
  /** In a cluster: whether this server serves the tenant now (its rows may not be deleted by /admin). */
  servesTenant?: (tenant: string) => boolean;
  /** In a cluster: GET /admin/tenants/{tenant}/placement, this server's view of a placement (cluster/placement-route.ts). */
  placementStatus?: (tenant: string) => PlacementStatus | { broken: string };
}

/** RFC 9110: a 401 names the scheme it wants. One middleware, so every door (REST and MCP) sends it. */
const bearerChallenge: MiddlewareHandler<RestEnv> = async (c, next) => {
  await next();
  if (c.res.status === 401 && !c.res.headers.has('www-authenticate')) {
    c.res = new Response(c.res.body, c.res);
    c.res.headers.set('www-authenticate', 'Bearer');
  }
};

export function createApp(deps: AppDeps): Hono<RestEnv> {
  const app = new Hono<RestEnv>();
  app.use('*', bearerChallenge);
  if (deps.config.serverId !== null) app.use('*', serverHeader(deps.config.serverId));
  if (deps.gate) app.use('*', deps.gate);
  // Overload is answered before a request's body is read (server/early-shed.ts).
  if (deps.services.admission) app.use('*', earlyShed(deps.services.admission));
  const tenantOf = tenantResolver(deps.config);
  const checks = [...coreChecks(deps.config, deps.ledger), ...(deps.checks ?? [])];

  // `now` lets a client (an agent that may believe it is still last year) learn the server's clock before it reads.
  app.get('/v1/version', (c) =>
    c.json({
      name: SERVICE_NAME,
      version: SERVICE_VERSION,
      api: 'v1',
      bundle_version: BUNDLE_VERSION,
      now: formatInstant(deps.ledger.now()),
    }),
  );
  mountUi(app); // the ledger browser at /ui: open static files, reads go through /v1 with the key

  // The root leads somewhere: a browser to the page, anything else to a short index of the doors. Open,
  // and free of tenant data like /v1/version.
  app.get('/', (c) => {
    if ((c.req.header('accept') ?? '').includes('text/html')) return c.redirect('/ui', 302);
    return c.json({
      name: SERVICE_NAME,
      version: SERVICE_VERSION,
      links: {
        ui: '/ui',
        docs: '/docs',
        openapi: '/v1/openapi.json',
        mcp: '/mcp',
        version: '/v1/version',
        rest: '/v1',
      },
    });
  });

  mountDocs(app, SERVICE_VERSION);
  mountDiscovery(app, deps.config); // open: who this server is and where its MCP door is, no tenant data
  deps.mount?.(app, deps);

  mountAdmin(app, {
    ledger: deps.ledger,
    operatorKey: deps.config.operatorKey,
    isTenantKey: (authorization) => deps.config.apiKeys !== null && tenantOf(authorization) !== null,
    maxBodyBytes: deps.config.maxBodyBytes,
    servesTenant: deps.servesTenant ?? null,
  });
  const status = deps.placementStatus;
  if (status)
    app.get('/admin/tenants/:tenant/placement', (c) => {
      const answer = status(c.req.param('tenant'));
      return 'broken' in answer ? c.json(errorDetail('unavailable', answer.broken), 503) : c.json(answer);
    });

  app.use('/v1/*', async (c, next) => {
    const tenant = tenantOf(c.req.header('authorization'));
    if (tenant === null) return c.json(unauthorized, 401);
    // The request's signal aborts when its client goes away: queued or running reads then stop early.
    const ctx: Context = { ledger: deps.ledger, tenant, services: deps.services, signal: c.req.raw.signal };
    c.set('ctx', ctx);
    return next();
  });

  app.get('/v1/check_install', async (c) => c.json(await runChecks(checks)));
  mountRest(app, deps.config.maxBodyBytes);

  app.notFound((c) => c.json(errorDetail('not_found', `no route ${c.req.method} ${new URL(c.req.url).pathname}`), 404));
  app.onError((error, c) => {
    console.error('unhandled error:', error);
    return c.json(errorDetail('internal', 'the server failed to answer'), 500);
  });
  return app;
}
