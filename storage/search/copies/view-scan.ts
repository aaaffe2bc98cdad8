// State derived from a tenant's block rows and kept with its read model. The view's row list only grows,
// in commit order, so each call scans just the rows added since the last one; an evicted view takes its
// state with it.
import type { TenantView } from '../../read/tenant-view.ts';
import type { NodeVersion } from '../../types.ts';

/** A reader of the state `add` builds from every row of a view, kept per view and grown as rows arrive. */
export function grownPerView<S>(make: () => S, add: (state: S, row: NodeVersion) => void): (view: Pick<TenantView, 'nodesIn'>) => S {
  const kept = new WeakMap<object, { scanned: number; state: S }>();
  return (view) => {
    let k = kept.get(view);
    if (!k) {
      k = { scanned: 0, state: make() };
      kept.set(view, k);
    }
    const rows = view.nodesIn();
    for (let i = k.scanned; i < rows.length; i++) add(k.state, rows[i]!);
    k.scanned = rows.length;
    return k.state;
  };
}
