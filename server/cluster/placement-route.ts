// `GET /admin/tenants/{tenant}/placement` (operator key only): what this server believes about a tenant's
// placement and how many of the tenant's requests it is still running. `memory-ledger move` polls it on
// the source after freezing a tenant: once the source reports the frozen record at the move's epoch and
// no request in flight, no write can land on the source any more (the gate refuses every new one), so
// the tail copied afterwards is the whole tenant.
import { timingSafeEqual, createHash } from 'node:crypto';
import type { Context } from 'hono';
import type { RestEnv } from '../../bridge/rest.ts';
import { errorDetail } from '../../tools/error-body.ts';
import { bearerToken } from '../auth.ts';
import type { Config } from '../config.ts';
import type { PlacementRecord, PlacementTable } from './placement.ts';

const ROUTE = /^\/admin\/tenants\/([^/]+)\/placement$/;

/** Requests admitted per tenant and not yet answered. */
export class InFlight {
  readonly #counts = new Map<string, number>();
  enter(tenant: string): void {
    this.#counts.set(tenant, (this.#counts.get(tenant) ?? 0) + 1);
  }
  leave(tenant: string): void {
    const n = (this.#counts.get(tenant) ?? 1) - 1;
    if (n <= 0) this.#counts.delete(tenant);
    else this.#counts.set(tenant, n);
  }
  of(tenant: string): number {
    return this.#counts.get(tenant) ?? 0;
  }
}

const sha = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** 404 without an operator key configured (the route does not exist), 401 without a key, 403 for any other key. */
export function operatorRefusal(config: Config, authorization: string | undefined): { status: 401 | 403 | 404; body: unknown } | null {
  if (config.operatorKey === null)
    return { status: 404, body: errorDetail('not_found', 'no operator routes: SVC_OPERATOR_KEY is not set') };
  const token = bearerToken(authorization);
  if (token === null) return { status: 401, body: errorDetail('SVC_UNAUTHORIZED', 'send Authorization: Bearer <SVC_OPERATOR_KEY>') };
  if (!timingSafeEqual(sha(token), sha(config.operatorKey)))
    return {
      status: 403,
      body: { detail: { error: 'forbidden', why: 'operator routes need the operator key (SVC_OPERATOR_KEY), not a tenant key' } },
    };
  return null;
}

export interface PlacementStatus {
  tenant: string;
  server: string;
  /** The record as this server last read it from etcd; null when the tenant is not placed. */
  placement: PlacementRecord | null;
  /** The etcd revision this server's view is at. */
  revision: number;
  in_flight: number;
}

/** Answers the route when the request is for it, else null. */
export function placementStatus(
  c: Context<RestEnv>,
  path: string,
  deps: { config: Config; table: PlacementTable; inFlight: InFlight },
): Response | null {
  const m = ROUTE.exec(path);
  if (!m || c.req.method !== 'GET') return null;
  const refused = operatorRefusal(deps.config, c.req.header('authorization'));
  if (refused) return Response.json(refused.body, { status: refused.status });
  const tenant = decodeURIComponent(m[1] ?? '');
  const record = deps.table.placementOf(tenant);
  if (record && 'broken' in record)
    return Response.json(errorDetail('unavailable', `the placement of tenant ${tenant} in etcd is invalid (${record.broken})`), {
      status: 503,
    });
  const status: PlacementStatus = {
    tenant,
    server: deps.config.serverId ?? '',
    placement: record ?? null,
    revision: deps.table.revision,
    in_flight: deps.inFlight.of(tenant),
  };
  return Response.json(status);
}
