// Declared facts over a tenant's view: the declaration in force at an instant, and the node versions
// carrying a fact key. Declarations are append-only rows; a later one for the same key applies from its
// own declared_at on, and reads at earlier instants keep the earlier one.
import type { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import type { Declaration, NodeVersion, Policy } from '../types.ts';

/** The declaration of `factKey` in force at `at`: the latest declared at or before it (commit order breaks ties). */
export function declarationInForce(view: TenantView, factKey: string, at: Micros): Declaration | null {
  let best: Declaration | null = null;
  for (const d of view.declarations()) {
    if (d.fact_key !== factKey || d.declared_at > at) continue;
    if (best === null || d.declared_at > best.declared_at || (d.declared_at === best.declared_at && d.seq > best.seq)) best = d;
  }
  return best;
}

/** The latest declaration of `factKey` whenever made, or null. */
export function latestDeclaration(view: TenantView, factKey: string): Declaration | null {
  return declarationInForce(view, factKey, Number.POSITIVE_INFINITY);
}

export interface DeclarationContent {
  key_fields: readonly string[];
  policy: Policy;
  source_order: readonly string[] | null;
}

/** Same rules: re-declaring them changes nothing, so nothing is written. */
export function sameRules(a: DeclarationContent, b: DeclarationContent): boolean {
  const eq = (x: readonly string[] | null, y: readonly string[] | null): boolean =>
    x === null || y === null ? x === y : x.length === y.length && x.every((v, i) => v === y[i]);
  return a.policy === b.policy && eq(a.key_fields, b.key_fields) && eq(a.source_order, b.source_order);
}

/** Every node version carrying `factKey` (whenever learned), in commit order, optionally in one space. */
export function rowsWithKey(view: TenantView, factKey: string, space?: string): NodeVersion[] {
  const rows = view.factRows(factKey);
  return space === undefined ? [...rows] : rows.filter((r) => r.space === space);
}
