// `GET /admin/tenants/{tenant}/placement` (operator key only): what this server believes about a tenant's
// placement and how many of the tenant's requests it is still running. `memory-ledger move` polls it on
// the source after freezing a tenant: once the source reports the frozen record at the move's epoch and
// no request in flight, no write can land on the source any more (the gate refuses every new one), so
// the tail copied afterwards is the whole tenant.
import type { z } from 'zod';
import type { PlacementStatusSchema } from '../admin-schemas.ts';
import type { PlacementTable } from './placement.ts';

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

/** The route's answer (its shape is in server/admin-schemas.ts, with the other operator routes'). */
export type PlacementStatus = z.infer<typeof PlacementStatusSchema>;

/** The status of one tenant as this server sees it (the route is mounted behind the /admin guard, app.ts). */
export function placementStatus(
  tenant: string,
  deps: { serverId: string; table: PlacementTable; inFlight: InFlight },
): PlacementStatus | { broken: string } {
  const record = deps.table.placementOf(tenant);
  if (record && 'broken' in record) return { broken: `the placement of tenant ${tenant} in etcd is invalid (${record.broken})` };
  return { tenant, server: deps.serverId, placement: record ?? null, revision: deps.table.revision, in_flight: deps.inFlight.of(tenant) };
}
