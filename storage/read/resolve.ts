// Fact resolution as pure functions: which rows are candidates, how each policy ranks them, and which
// reason explains a refusal. The handler only gathers the rows and the declaration and records the verdict.
//
// Decisions this module makes (SPEC.md leaves them open):
// - A candidate is one node VERSION carrying the key, not a node id. An id may hold several versions with
//   non-overlapping validity (the value over time); each is a separate value with its own interval, so
//   each competes on its own. Collapsing an id to one version would silently pick before the policy does.
// - Without `valid_at` nothing restricts candidates by validity: every version known at `as_of` competes,
//   including ones whose interval has closed. Defaulting to "in force now" would make the same request
//   (same as_of) answer differently as the wall clock moves, and a ledger's answers must replay exactly.
//   A caller asking "what holds at t" passes `valid_at: t`.
// - A tie is decided on the policy's whole ordering key: when the top two candidates are equal under it,
//   the answer is `unresolved_conflict`, even if their values happen to be equal (which one the verdict
//   points at would be a silent pick).
import type { Micros } from '../time.ts';
import type { Declaration, NodeVersion, Policy } from '../types.ts';
import { inForceAt, knownAt } from '../visibility.ts';

export type Reason = 'undeclared_fact' | 'no_data' | 'not_yet' | 'no_value_at' | 'unresolved_conflict';

/** The reasons in the order they are checked: the first that holds is the answer. */
export const REASONS: readonly Reason[] = ['undeclared_fact', 'no_data', 'not_yet', 'no_value_at', 'unresolved_conflict'];

export interface ResolveQuery {
  asOf: Micros;
  validAt?: Micros | undefined;
}

export interface Decision {
  /** Versions known at as_of (the candidates attached to the answer), in commit order. */
  candidates: NodeVersion[];
  /** Candidates in force at valid_at (all candidates when valid_at is absent). */
  eligible: NodeVersion[];
  chosen: NodeVersion | null;
  reason: Reason | null;
  /** Rows carrying the key that as_of hid. */
  masked: number;
}

/** A candidate's source for `source_priority`: its `payload.source` when that is a non-empty string, else its space. */
export function sourceOf(row: Pick<NodeVersion, 'payload' | 'space'>): string {
  try {
    const p = JSON.parse(row.payload) as unknown;
    if (p && typeof p === 'object' && !Array.isArray(p)) {
      const s = (p as Record<string, unknown>).source;
      if (typeof s === 'string' && s !== '') return s;
    }
  } catch {
    // payload is always JSON text written by the ledger; a bad one just has no source
  }
  return row.space;
}

/**
 * Orders two candidates under a policy: negative when `a` ranks before (is preferred to) `b`, zero when
 * the policy cannot tell them apart. `strict` never tells candidates apart.
 */
export function comparePolicy(policy: Policy, sourceOrder: readonly string[] | null, a: NodeVersion, b: NodeVersion): number {
  switch (policy) {
    case 'latest_valid':
      return b.valid_from - a.valid_from;
    case 'latest_observed':
      // Observation is when the statement was made (a message's observed_at becomes asserted_at).
      return b.asserted_at - a.asserted_at;
    case 'source_priority': {
      const order = sourceOrder ?? [];
      const sa = sourceOf(a),
        sb = sourceOf(b);
      const ra = order.indexOf(sa),
        rb = order.indexOf(sb);
      // Listed sources rank by their place; unlisted ones rank after every listed one and cannot be
      // ordered among themselves (the caller never said which to trust).
      if (sa !== sb) {
        if (ra === -1 && rb === -1) return 0;
        if (ra === -1) return 1;
        if (rb === -1) return -1;
        return ra - rb;
      }
      // Within one source its values differ over time: the later validity start is its current word.
      return b.valid_from - a.valid_from;
    }
    case 'strict':
      return 0;
  }
}

/** The candidate the policy chooses, or null when the top two tie (or, for strict, when there are two). */
export function choose(policy: Policy, sourceOrder: readonly string[] | null, eligible: readonly NodeVersion[]): NodeVersion | null {
  if (eligible.length === 0) return null;
  if (policy === 'strict') return eligible.length === 1 ? (eligible[0] ?? null) : null;
  let best: NodeVersion | null = null;
  for (const c of eligible) if (best === null || comparePolicy(policy, sourceOrder, c, best) < 0) best = c;
  // Answer only when the pick beats every other candidate strictly. Unlisted sources make the ordering
  // non-transitive (a ~ c, b ~ c, a < b), so this is checked against all, not just the runner-up.
  if (best === null) return null;
  for (const c of eligible) if (c !== best && comparePolicy(policy, sourceOrder, best, c) >= 0) return null;
  return best;
}

/**
 * Decides one resolve. `rows` are every version carrying the key in scope (tenant, and space when
 * narrowed), whenever learned; `declaration` is the one in force at the rules instant, or null.
 */
export function decide(declaration: Declaration | null, rows: readonly NodeVersion[], q: ResolveQuery): Decision {
  const candidates = rows.filter((r) => knownAt(r, q.asOf));
  const eligible = q.validAt === undefined ? candidates : candidates.filter((r) => inForceAt(r, q.validAt));
  const masked = rows.length - candidates.length;
  const out = (reason: Reason | null, chosen: NodeVersion | null = null): Decision => ({ candidates, eligible, chosen, reason, masked });
  if (declaration === null) return out('undeclared_fact');
  if (rows.length === 0) return out('no_data');
  if (candidates.length === 0) return out('not_yet');
  if (eligible.length === 0) return out('no_value_at');
  const chosen = choose(declaration.policy, declaration.source_order, eligible);
  return chosen ? out(null, chosen) : out('unresolved_conflict');
}
