// The one check both doors pass through on a server of a cluster: every request that acts for a tenant
// (REST under /v1 but the open version route; MCP at /mcp, /mcp/<app>/<space>, /apps/<app>/<space>/mcp)
// is admitted here only while its tenant is placed on this server, else 421 naming the server it is
// placed on, or 503 with Retry-After while it is frozen or placements cannot be trusted. A request whose
// tenant cannot be told (no key, a wrong key, an unknown space) goes on to its door, which answers as
// on one machine.
import type { MiddlewareHandler } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import { errorDetail } from '../../tools/error-body.ts';
import { tenantResolver } from '../auth.ts';
import type { Config } from '../config.ts';
import { scopeOf } from '../mcp/scope.ts';
import type { Admission, PlacementTable } from './placement.ts';
import { InFlight } from './placement-route.ts';

export const EPOCH_HEADER = 'x-ledger-epoch';

/** Seconds a client waits before retrying a frozen tenant (a move's tail copy takes about that long). */
const FROZEN_RETRY_S = 1;
const UNAVAILABLE_RETRY_S = 5;

const isTenantPath = (path: string): boolean =>
  (path.startsWith('/v1/') && path !== '/v1/version') || path === '/mcp' || path.startsWith('/mcp/') || path.startsWith('/apps/');

export interface GateDeps {
  config: Config;
  table: PlacementTable;
  /** The first writer of a space as this server's ledger knows it. */
  firstWriterOf: (space: string) => Promise<string | null>;
  now?: () => number;
  /** Counts the requests admitted and not yet answered, per tenant (the move waits for none on the source). */
  inFlight?: InFlight;
}

/** The answer for a request that may not be served here, or null to serve it. */
export function refusal(tenant: string, admission: Admission): Response | null {
  switch (admission.kind) {
    case 'serve':
      return null;
    case 'elsewhere':
      return Response.json(
        {
          detail: {
            error: 'misdirected',
            why: `tenant ${tenant} is placed on server ${admission.server} (epoch ${admission.epoch}), not on this one: send requests through the cluster's proxy, which routes them there`,
            server: admission.server,
            epoch: admission.epoch,
          },
        },
        { status: 421 },
      );
    case 'frozen':
      return Response.json(errorDetail('unavailable', `tenant ${tenant} is frozen for a move; retry after ${FROZEN_RETRY_S} s`), {
        status: 503,
        headers: { 'retry-after': String(FROZEN_RETRY_S) },
      });
    case 'unavailable':
      return Response.json(errorDetail('unavailable', `${admission.why}; retry after ${UNAVAILABLE_RETRY_S} s`), {
        status: 503,
        headers: { 'retry-after': String(UNAVAILABLE_RETRY_S) },
      });
  }
}

export function placementGate(deps: GateDeps): MiddlewareHandler<RestEnv> {
  const tenantOfKey = tenantResolver(deps.config);
  const now = deps.now ?? Date.now;
  // Same rule as the MCP door: with a key the key decides; without one, an app-scoped path's space does.
  const tenantOf = async (path: string, authorization: string | undefined): Promise<string | null> => {
    if (authorization === undefined && deps.config.apiKeys !== null) {
      const scope = path.startsWith('/mcp/') || path.startsWith('/apps/') ? scopeOf(path) : null;
      if (!scope?.space.startsWith('svc:')) return null;
      return (await deps.firstWriterOf(scope.space)) ?? deps.table.spaceTenant(scope.space);
    }
    return tenantOfKey(authorization);
  };
  const inFlight = deps.inFlight ?? new InFlight();
  return async (c, next) => {
    const path = new URL(c.req.url).pathname;
    if (!isTenantPath(path)) return next();
    const tenant = await tenantOf(path, c.req.header('authorization'));
    if (tenant === null) return next();
    const admission = deps.table.admit(tenant, now());
    const refused = refusal(tenant, admission);
    if (refused) return refused;
    // Counted from the admission on, with no await between: a freeze seen after this point cannot miss it.
    // Both doors answer once the work is done (MCP in JSON-response mode), so the answer ends it.
    inFlight.enter(tenant);
    try {
      await next();
    } finally {
      inFlight.leave(tenant);
    }
    if (admission.kind === 'serve' && admission.epoch !== null) {
      c.res = new Response(c.res.body, c.res);
      c.res.headers.set(EPOCH_HEADER, String(admission.epoch));
    }
  };
}
