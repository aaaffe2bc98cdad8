// One search: candidates from the index (filters applied inside LanceDB, before ranking), fused into
// node ids, lifted by matching neighbours over the followed edges, each shown as the version the read can
// see; then expansion over the edges known at as_of.
import type { TenantView } from '../read/tenant-view.ts';
import type { Micros } from '../time.ts';
import { loopTurns } from '../loop-turns.ts';
import { edgeVisible, walk, type Reached } from '../read/traverse.ts';
import { EDGE_FAMILIES, type EdgeFamily, type EdgeType, type NodeVersion } from '../types.ts';
import { inForceAt, knownAt } from '../visibility.ts';
import type { RowFilter } from './index-row.ts';
import { withAskingLowered } from './rank/asking.ts';
import { exchangeOf } from './rank/context.ts';
import { withCoverage } from './rank/coverage.ts';
import { entityList } from './rank/entity-reach.ts';
import { DATED_WEIGHT, ENTITY_WEIGHT, expansionScore, fuse, VECTOR_WEIGHT, withNeighbours, WORD_VECTOR_WEIGHT } from './rank/rank.ts';
import type { SearchIndex } from './search-index.ts';
import { contentWords } from './embed/text-features.ts';
import { SearchTiming, takeWait } from './timing.ts';

export interface SearchParams {
  query: string;
  asOf: Micros;
  validAt?: Micros | undefined;
  space?: string | undefined;
  kind?: string | undefined;
  category?: string | undefined;
  limit: number;
  depth: number;
  /** Families followed besides causal and temporal. */
  families: readonly EdgeFamily[];
  /** The ledger's present instant: no committed row is known later, so a read at or after it hides nothing. */
  now?: Micros | undefined;
  /** Node ids left out before ranking: superseded (current_only) or invalidated as of the read. */
  leaveOut?: readonly string[] | undefined;
  /** Ids of the invalidated nodes left out, to count the matches they would have given. */
  invalidated?: readonly string[] | undefined;
  /** Nodes expansion never enters (invalidated as of the read). */
  blocked?: ((id: string) => boolean) | undefined;
  /** The successors of a node visible to the read: a superseded hit never ranks above them. */
  supersededBy?: ((id: string) => readonly string[]) | undefined;
}

export interface SearchResult {
  node: NodeVersion;
  score: number;
  match: 'direct' | 'expansion';
  depth: number;
  path: string[];
  via: EdgeType | null;
}

export interface SearchAnswer {
  results: SearchResult[];
  masked: { node: number; edge: number };
  /** Matching nodes left out because they were invalidated as of the read (capped like hidden matches). */
  invalidated: number;
}

/**
 * Messages either side of a candidate episode in its write that lift it like linked turns (rank.ts,
 * NEIGHBOUR_WEIGHTS). LoCoMo 1-5, messages mode (recall_any@10 / recall_all@10 / MRR): none 0.816 / 0.691 /
 * 0.544, one either side 0.829 / 0.704 / 0.564.
 */
const EXCHANGE_LIFT: readonly [number, number] = [1, 1];

/** Candidates fetched from each list per direct hit wanted: fusion needs more than the final cut. */
const POOL_FACTOR = 4;
const MIN_POOL = 40;
/** Hidden matches counted at most: the count is a signal, not worth a full scan. */
const HIDDEN_CAP = 100;

// Ranking phases give the event loop a turn once a search has scored for STRETCH_MS (loop-turns.ts), so one
// search's scoring is several short stretches and lists, gets and writes that arrived meanwhile are answered
// in between. Safe mid-search: every check below reads the view at as_of, and a row committed meanwhile is
// known later than that. A space's search scores in well under a stretch and never waits for a turn.

/** The version of `id` the read shows among those the filters admit: the latest valid_from. */
export function shownVersion(view: TenantView, id: string, f: RowFilter): NodeVersion | null {
  let best: NodeVersion | null = null;
  for (const v of view.versionsOf(id)) {
    if (!knownAt(v, f.asOf) || !inForceAt(v, f.validAt)) continue;
    if ((f.space !== undefined && v.space !== f.space) || (f.kind !== undefined && v.kind !== f.kind)) continue;
    if (f.category !== undefined && v.category !== f.category) continue;
    if (best === null || v.valid_from > best.valid_from) best = v;
  }
  return best;
}

export function followedTypes(families: readonly EdgeFamily[]): Set<EdgeType> {
  const types = new Set<EdgeType>();
  for (const f of new Set<EdgeFamily>(['causal', 'temporal', ...families])) for (const t of EDGE_FAMILIES[f]) types.add(t);
  return types;
}

/**
 * What a search fetched from the index: its candidates, the hidden and retracted matches it counts, and
 * its timing. They depend on the tenant's rows only through the parameters (the ids left out) and the
 * tenant's latest block instant, so a search run again over more rows (search without a space, answered
 * from the spaces holding what it reads) reuses them.
 */
export interface Candidates {
  readonly filter: RowFilter;
  readonly found: Awaited<ReturnType<SearchIndex['candidates']>>;
  readonly hidden: readonly { id: string }[];
  readonly retracted: number;
  readonly pool: number;
  readonly timing: SearchTiming;
  /** Prints the search's timing line (SVC_SEARCH_TIMING=1), once its answer is final. */
  report(): void;
}

export async function search(index: SearchIndex, view: TenantView, p: SearchParams): Promise<SearchAnswer> {
  const c = await fetchCandidates(index, view.tenant, view.latestBlockKnownAt(), p);
  if (!c) return { results: [], masked: { node: 0, edge: 0 }, invalidated: 0 };
  const answer = await rankCandidates(index, view, p, c);
  c.report();
  return answer;
}

/**
 * The index's part of a search: its candidates and counts, or null when the query has no word to search
 * for. `latestBlockKnownAt`: the tenant's latest knowledge instant of a node or edge.
 */
export async function fetchCandidates(
  index: SearchIndex,
  tenant: string,
  latestBlockKnownAt: Micros,
  p: SearchParams,
): Promise<Candidates | null> {
  // Nothing indexed for this tenant is known after as_of (the tenant holds every indexed row, and more): the
  // read needs neither the known_at prefilter nor the hidden-match count. A client's "now" is a little
  // before the server's, so the ledger's present instant alone rarely says so.
  const present = (p.now !== undefined && p.asOf >= p.now) || p.asOf >= latestBlockKnownAt;
  const filter: RowFilter = {
    asOf: p.asOf,
    validAt: p.validAt,
    space: p.space,
    kind: p.kind,
    category: p.category,
    allKnown: present,
    excludeIds: p.leaveOut,
  };
  const terms = contentWords(p.query);
  if (terms.length === 0) return null;
  const pool = Math.max(MIN_POOL, p.limit * POOL_FACTOR);
  const invalidatedIds = p.invalidated ?? [];
  const timing = new SearchTiming();
  const wait = takeWait();
  const [found, hidden, retracted] = await Promise.all([
    timing.time('candidates', index.candidates(tenant, terms, p.query, filter, pool, timing)),
    present ? Promise.resolve([]) : timing.time('hidden', index.hiddenMatches(tenant, terms, filter, HIDDEN_CAP)),
    invalidatedIds.length === 0
      ? Promise.resolve([])
      : timing.time(
          'retracted',
          index.textMatches(tenant, terms, { ...filter, excludeIds: undefined, onlyIds: invalidatedIds }, HIDDEN_CAP),
        ),
  ]);
  return {
    filter,
    found,
    hidden,
    retracted: retracted.length,
    pool,
    timing,
    report: () => timing.report({ wait, present: present ? 1 : 0, pool }),
  };
}

/**
 * The ranking and expansion of a search over `view`, from what the index gave (`c`, fetched for the same
 * parameters). Reads the view by id only (versions and edges of the ids it ranks and reaches) besides the
 * lists `SearchParams` carries and the names of entities (TenantView.entitySource).
 */
export async function rankCandidates(index: SearchIndex, view: TenantView, p: SearchParams, c: Candidates): Promise<SearchAnswer> {
  const { filter, found, hidden, pool, timing } = c;
  const leftOut = new Set(p.leaveOut);
  const rankStart = timing.since();
  const types = followedTypes(p.families);
  const walkOpts = { asOf: p.asOf, validAt: p.validAt, depth: p.depth, types, space: p.space, blocked: p.blocked };
  const lists = [
    { hits: found.text, weight: 1 },
    { hits: found.vector, weight: VECTOR_WEIGHT },
  ];
  if (found.words.length > 0) lists.push({ hits: found.words, weight: WORD_VECTOR_WEIGHT });
  if (found.dated.length > 0) lists.push({ hits: found.dated, weight: DATED_WEIGHT });
  // The version each candidate is shown as, looked up once: the entity list, the lift, the asking rule,
  // coverage and the cut all ask for it. A row committed while ranking yields (turn) is known after as_of,
  // so what was looked up stays what the read shows.
  const shownMemo = new Map<string, NodeVersion | null>();
  const shownAt = (id: string): NodeVersion | null => {
    let v = shownMemo.get(id);
    if (v === undefined) shownMemo.set(id, (v = shownVersion(view, id, filter)));
    return v;
  };
  const yieldIfLong = loopTurns();
  let fused = fuse(lists);
  const named = entityList(view, p.query, fused, (id) => !leftOut.has(id) && shownAt(id) !== null, filter, pool);
  if (named.length > 0) fused = fuse([...lists, { hits: named, weight: ENTITY_WEIGHT }]);
  await yieldIfLong();
  const lifted = withNeighbours(fused, (id, visit) => {
    for (const e of view.edgesFrom(id)) if (edgeVisible(e, walkOpts)) visit(e.target_id);
    for (const e of view.edgesTo(id)) if (edgeVisible(e, walkOpts)) visit(e.source_id);
    // Messages of one exchange lift each other as linked turns do (a shown episode's write is readable with it).
    const shown = shownAt(id);
    if (shown) for (const m of exchangeOf(view, shown, EXCHANGE_LIFT)) visit(m.id);
  });
  await yieldIfLong();
  const wordWeight = (w: string): number => index.words?.weight(w) ?? 1;
  const ranked = withCoverage(withAskingLowered(lifted, shownAt), view, shownAt, p.query, wordWeight, pool, index.words, p.limit);
  const direct: SearchResult[] = [];
  for (const { id, score } of ranked) {
    if (direct.length >= p.limit) break;
    const node = shownAt(id);
    if (node) direct.push({ node, score, match: 'direct', depth: 0, path: [id], via: null });
  }
  if (p.supersededBy) successorsFirst(direct, p.supersededBy);
  timing.add('rank', timing.since() - rankStart);
  await yieldIfLong();
  const expandStart = timing.since();
  const scores = new Map(direct.map((d) => [d.node.id, d.score]));
  const expanded: SearchResult[] = [];
  const reached: Reached[] =
    p.depth > 0
      ? walk(
          view,
          direct.map((d) => d.node.id),
          walkOpts,
        )
      : [];
  for (const r of reached) {
    if (r.depth === 0 || !r.edge) continue;
    const from = r.path.at(-2) ?? r.path[0] ?? '';
    const score = expansionScore(scores.get(from) ?? 0, r.edge.edge_type);
    scores.set(r.id, score);
    const node = shownVersion(view, r.id, { asOf: p.asOf, validAt: p.validAt, space: p.space });
    if (leftOut.has(r.id)) continue;
    if (node) expanded.push({ node, score, match: 'expansion', depth: r.depth, path: r.path, via: r.edge.edge_type });
  }
  const results = [...direct, ...expanded].sort((a, b) => b.score - a.score);
  const masked = { node: new Set(hidden.map((h) => h.id)).size, edge: hiddenEdges(view, results, types, p.asOf) };
  timing.add('expand', timing.since() - expandStart);
  return { results, masked, invalidated: c.retracted };
}

/**
 * A superseded block never outranks a direct hit that supersedes it: its score is capped just below its
 * successor's, so a stale belief that matches the words better still comes after the current one. Passes
 * repeat so a chain (C replaces B replaces A) settles; each pass can only lower scores. SUPERSEDES edges
 * between hits on one cycle (p replaces q replaces p) are left out: no order satisfies them, and chasing
 * them would lower the cycle's scores on every pass, past a cap already given to a block they replace
 * (CONTRACT: the rule holds for every pair not on a cycle). What remains has no cycle, so one pass per
 * hit settles it.
 */
export function successorsFirst(direct: SearchResult[], supersededBy: (id: string) => readonly string[]): void {
  const byId = new Map(direct.map((d) => [d.node.id, d]));
  const successors = new Map(direct.map((d) => [d.node.id, supersededBy(d.node.id).filter((s) => byId.has(s))]));
  /** Hits reachable from `from` by following supersession among the hits. */
  const reach = (from: string): Set<string> => {
    const seen = new Set<string>();
    const stack = [...(successors.get(from) ?? [])];
    for (let id = stack.pop(); id !== undefined; id = stack.pop()) {
      if (seen.has(id)) continue;
      seen.add(id);
      stack.push(...(successors.get(id) ?? []));
    }
    return seen;
  };
  const reachable = new Map(direct.map((d) => [d.node.id, reach(d.node.id)]));
  const onOneCycle = (a: string, b: string): boolean => (reachable.get(b)?.has(a) ?? false) && (reachable.get(a)?.has(b) ?? false);
  for (let pass = 0; pass < direct.length; pass++) {
    let changed = false;
    for (const d of direct) {
      for (const s of successors.get(d.node.id) ?? []) {
        const successor = byId.get(s);
        if (successor && !onOneCycle(d.node.id, s) && d.score >= successor.score) {
          d.score = successor.score * (1 - 1e-6) - 1e-9;
          changed = true;
        }
      }
    }
    if (!changed) break;
  }
  direct.sort((a, b) => b.score - a.score);
}

/** Edges of the followed types touching a shown block that the read could not see: learned after as_of. */
function hiddenEdges(view: TenantView, results: readonly SearchResult[], types: ReadonlySet<EdgeType>, asOf: Micros): number {
  const seen = new Set<number>();
  for (const r of results) {
    for (const e of [...view.edgesFrom(r.node.id), ...view.edgesTo(r.node.id)]) {
      if (types.has(e.edge_type) && !knownAt(e, asOf)) seen.add(e.seq);
    }
  }
  return seen.size;
}
