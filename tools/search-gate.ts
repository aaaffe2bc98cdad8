// A search refused before its body is read. Its lane (heavy, or the searches' own) depends on its input
// and on what is in memory, so it can be refused unread only when both lanes would refuse it: each lane
// either refuses everybody now (crowded: its queue full, or the wait past the bound) or this key (its
// share of the queue full). The ledger thread decides from its admission (tools/admission.ts); an HTTP
// thread from the same states, kept in shared memory by the ledger thread (server/fronts/), so both
// decide alike.
import { SvcError } from './errors.ts';
import { overloaded } from './slot-pool.ts';

/** A lane as a search arriving now meets it: the Retry-After (s) it refuses everybody with, and this key; 0: it does not. */
export interface LaneState {
  readonly crowded: number;
  readonly share: number;
}

export function searchRefusal(heavy: LaneState, searches: LaneState): SvcError | null {
  const h = heavy.crowded || heavy.share;
  const s = searches.crowded || searches.share;
  if (h === 0 || s === 0) return null;
  if (heavy.crowded && searches.crowded)
    return overloaded('searches and other expensive requests wait as many or as long as this server queues', Math.max(h, s));
  const retry = Math.max(h, s);
  return new SvcError(
    'over_share',
    `this key already has as many searches waiting as its share of the queue; retry after ${retry} s`,
    [],
    retry,
  );
}

/**
 * The lanes' states in shared memory: each lane's `crowded`, then for each tenant (in the order the
 * ledger thread gave) each lane's `share`.
 */
export const GATE_SLOTS = { heavyCrowded: 0, searchesCrowded: 1, tenants: 2 } as const;

export const gateLength = (tenants: number): number => GATE_SLOTS.tenants + 2 * tenants;

/** The slot of `tenant`'s share in `lane` (0 heavy, 1 searches). */
export const shareSlot = (tenant: number, lane: 0 | 1): number => GATE_SLOTS.tenants + 2 * tenant + lane;

/** Both lanes' states for the tenant at `tenant` (undefined: a tenant the gate does not list, judged by `crowded` alone). */
export function gateStates(gate: Int32Array, tenant: number | undefined): [LaneState, LaneState] {
  const share = (lane: 0 | 1): number => (tenant === undefined ? 0 : Atomics.load(gate, shareSlot(tenant, lane)));
  return [
    { crowded: Atomics.load(gate, GATE_SLOTS.heavyCrowded), share: share(0) },
    { crowded: Atomics.load(gate, GATE_SLOTS.searchesCrowded), share: share(1) },
  ];
}
