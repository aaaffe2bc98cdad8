// list_memories without a space when the tenant's view is not resident: answered from the store page by
// page instead of loading the tenant. Candidate node rows come in tseq order with the list's filters
// applied in the engine; whether a read leaves one out (invalidated, superseded) is judged on the views of
// the spaces holding the candidates' ids, which hold every invalidation of those ids and every edge
// touching them (an invalidation is held by each space whose rows name its node), so they judge as the
// tenant's view does. A read at a past as_of also reports masked and invalidated counts over the whole
// tenant: those are aggregations in the engine. The answer is listNodes's over the tenant's view, byte for
// byte (test/list-by-pages.test.ts).
import type { ListCounts, ListCountsQuery, NodePageQuery } from '../log/kuzu/node-page-query.ts';
import type { ReadLens } from './lens.ts';
import type { ListResult } from './reads.ts';
import { Snapshot, type ListParams } from './snapshot.ts';
import { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import type { EdgeRecord, Invalidation, NodeVersion } from '../types.ts';

/** What a view must answer to judge a node: its invalidations and the edges pointing at it. */
export type JudgeView = Pick<TenantView, 'invalidationsOf' | 'edgesTo'>;

/** The store of one tenant as a paged list reads it. */
export interface PagedSource {
  nodePage(q: NodePageQuery): Promise<NodeVersion[]>;
  listCounts(q: ListCountsQuery): Promise<ListCounts>;
  /** A view holding every invalidation of these ids and every edge touching them. */
  viewOfIds(ids: readonly string[]): Promise<JudgeView>;
}

/** A page with the snapshot its rows are shown through (superseded_by, invalidation) and certified by. */
export interface PagedList extends ListResult {
  snapshot: Snapshot;
}

/** Candidates read per store page at most: a page of a list asks for limit + 1, then more while rows are left out. */
const MAX_BATCH = 4_096;

/**
 * The rows of the tenant a read's snapshot needs to judge and show `ids`: their invalidations, the
 * SUPERSEDES edges pointing at them and the invalidations of those edges' sources (a retracted successor
 * replaces nothing). Kept once each in `into`.
 */
function addJudged(into: TenantView, seen: Set<number>, from: JudgeView, ids: Iterable<string>): void {
  const invalidation = (i: Invalidation): void => {
    if (seen.has(i.seq)) return;
    seen.add(i.seq);
    into.addInvalidation(i);
  };
  const edge = (e: EdgeRecord): void => {
    if (seen.has(e.seq)) return;
    seen.add(e.seq);
    into.addEdge(e);
  };
  for (const id of ids) {
    for (const i of from.invalidationsOf(id)) invalidation(i);
    for (const e of from.edgesTo(id)) {
      if (e.edge_type !== 'SUPERSEDES') continue;
      edge(e);
      for (const i of from.invalidationsOf(e.source_id)) invalidation(i);
    }
  }
}

/**
 * One page of the tenant's node versions as listNodes answers it over the tenant's view. A read hiding
 * nothing (as_of at or after the tenant's latest knowledge) stops at the end of its page and counts the
 * invalidated rows it passed on the way, as listNodes does; a read at an earlier as_of takes its counts
 * from the engine over the whole tenant.
 */
export async function listByPages(
  source: PagedSource,
  tenant: string,
  lens: ReadLens,
  txAsOf: Micros,
  p: ListParams,
  latestIssued: Micros,
  signal?: AbortSignal,
): Promise<PagedList> {
  const { asOf, validAt } = lens;
  // No row is known after the latest instant the clock handed out, so only a read before it can hide
  // anything (a read as of `now` is at it, or after it); any other asks the engine.
  const counts =
    asOf >= latestIssued
      ? null
      : await source.listCounts({
          asOf,
          validAt,
          kind: p.kind,
          category: p.category,
          countInvalidated: !lens.includeInvalidated || lens.currentOnly,
        });
  const hidesNothing = counts === null || asOf >= counts.latestKnownAt;
  const judged = new TenantView(tenant);
  const seen = new Set<number>();
  const snapshot = new Snapshot(judged, lens, txAsOf);
  const items: NodeVersion[] = [];
  let invalidated = 0;
  let nextSeq: number | null = null;
  let after = p.afterSeq ?? 0;
  let batch = p.limit + 1;
  for (;;) {
    // A read whose rows are mostly left out may page through much of the tenant: past its deadline, stop.
    signal?.throwIfAborted();
    const rows = await source.nodePage({
      after,
      limit: batch,
      kind: p.kind,
      category: p.category,
      validAt,
      knownBy: hidesNothing ? undefined : asOf,
    });
    if (rows.length === 0) break;
    const ids = [...new Set(rows.map((r) => r.id))];
    addJudged(judged, seen, await source.viewOfIds(ids), ids);
    for (const n of rows) {
      const out = snapshot.leaveOut(n.id);
      if (out !== null) {
        if (out === 'invalidated') invalidated++;
        continue;
      }
      if (items.length === p.limit) {
        nextSeq = items[items.length - 1]?.tseq ?? null;
        break;
      }
      items.push(n);
    }
    if (nextSeq !== null || rows.length < batch) break;
    after = rows[rows.length - 1]?.tseq ?? after;
    batch = Math.min(MAX_BATCH, batch * 2);
  }
  if (hidesNothing) return { items, nextSeq, masked: { node: 0, edge: 0, verdict: 0 }, invalidated, snapshot };
  return { items, nextSeq, masked: counts.masked, invalidated: counts.invalidated, snapshot };
}
