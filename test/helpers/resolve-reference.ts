// An independent reference for fact resolution, used by the unit and end-to-end property tests: it
// sorts by the policy's key and refuses when the top two keys are equal, where storage/read/resolve.ts scans
// with a pairwise comparison.
import type { Reason } from '../../storage/read/resolve.ts';
import type { Declaration, NodeVersion } from '../../storage/types.ts';

export type Row = Pick<NodeVersion, 'id' | 'fact_value' | 'known_at' | 'asserted_at' | 'valid_from' | 'valid_to' | 'payload' | 'space'>;

/** Sort-based reference: rank by the policy's key, refuse when the top two keys are equal. */
export function reference(
  declaration: Pick<Declaration, 'policy' | 'source_order'> | null,
  rows: Row[],
  asOf: number,
  validAt: number | undefined,
): { reason: Reason | null; id: string | null; value: string | null } {
  const no = (reason: Reason) => ({ reason, id: null, value: null });
  if (!declaration) return no('undeclared_fact');
  if (rows.length === 0) return no('no_data');
  const known = rows.filter((r) => r.known_at <= asOf);
  if (known.length === 0) return no('not_yet');
  const live =
    validAt === undefined ? known : known.filter((r) => r.asserted_at <= validAt && r.valid_from <= validAt && validAt < r.valid_to);
  if (live.length === 0) return no('no_value_at');
  const ok = (r: Row) => ({ reason: null, id: r.id, value: r.fact_value });
  if (declaration.policy === 'strict') return live.length === 1 && live[0] ? ok(live[0]) : no('unresolved_conflict');
  let pool = live;
  if (declaration.policy === 'source_priority') {
    const order = declaration.source_order ?? [];
    const rank = (r: Row) => {
      const i = order.indexOf(sourceOf(r));
      return i === -1 ? order.length : i;
    };
    const top = Math.min(...pool.map(rank));
    pool = pool.filter((r) => rank(r) === top);
    if (new Set(pool.map(sourceOf)).size > 1) return no('unresolved_conflict');
  }
  const key = (r: Row) => (declaration.policy === 'latest_observed' ? r.asserted_at : r.valid_from);
  const sorted = [...pool].sort((a, b) => key(b) - key(a));
  const [first, second] = sorted;
  if (!first || (second && key(second) === key(first))) return no('unresolved_conflict');
  return ok(first);
}

/** CONTRACT.md: a candidate's source is its payload.source when present, else its space. */
function sourceOf(r: Row): string {
  const source = (JSON.parse(r.payload) as { source?: unknown }).source;
  return typeof source === 'string' && source !== '' ? source : r.space;
}
