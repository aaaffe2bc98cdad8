// A snapshot: one tenant's ledger seen through one lens (as_of, valid_at, space, current_only,
// include_invalidated). Every read answers from a snapshot (the server's and the offline bundle
// reader's alike), so what counts as superseded, invalidated or left out is decided here, once.
import { buildCertificate, type Certificate, type MaskedCounts } from './certificate.ts';
import { rowsWithKey } from './facts.ts';
import type { ReadLens } from './lens.ts';
import { getNode, listNodes, type GetResult, type LeftOut, type ListResult } from './reads.ts';
import { nodeRow, type NodeRow } from './rows-out.ts';
import { fetchCandidates, rankCandidates, type Candidates, type SearchAnswer, type SearchParams } from '../search/search.ts';
import type { SearchIndex } from '../search/search-index.ts';
import type { TenantView } from './tenant-view.ts';
import type { Micros } from '../time.ts';
import type { EdgeRecord, Invalidation, NodeVersion, SpaceCounts } from '../types.ts';
import { spaceSummaries, type SpaceSummary } from './space-summary.ts';
import { inForceAt, knownAt } from '../visibility.ts';
import { evidenceChain, type WhyResult } from './why.ts';

export interface ListParams {
  kind?: string | undefined;
  category?: string | undefined;
  limit: number;
  afterSeq?: number | undefined;
}

export type SnapshotSearch = Pick<SearchParams, 'query' | 'kind' | 'category' | 'limit' | 'depth' | 'families'>;

/** A search's parameters as a snapshot's lens sets them, and what the index gave for them (null: no word to search for). */
export interface PreparedSearch {
  params: SearchParams;
  candidates: Candidates | null;
}

const NO_ANSWER = (): SearchAnswer => ({ results: [], masked: { node: 0, edge: 0 }, invalidated: 0 });

export class Snapshot {
  readonly #blocked = (id: string): boolean => this.invalidation(id) !== undefined;

  constructor(
    readonly view: TenantView,
    readonly lens: ReadLens,
    readonly txAsOf: Micros,
  ) {}

  /** The invalidation of node `id` this read sees: the first one known at as_of, or undefined. */
  invalidation(id: string): Invalidation | undefined {
    let first: Invalidation | undefined;
    for (const i of this.view.invalidationsOf(id)) {
      if (i.known_at <= this.lens.asOf && (first === undefined || i.known_at < first.known_at)) first = i;
    }
    return first;
  }

  /**
   * A SUPERSEDES edge this read counts: known at as_of, in force at valid_at, in the lens's space, from a
   * successor not retracted (a retracted successor replaces nothing; its edges are not walked either).
   */
  #replaces(e: EdgeRecord): boolean {
    if (!knownAt(e, this.lens.asOf) || !inForceAt(e, this.lens.validAt)) return false;
    if (this.lens.space !== undefined && e.space !== this.lens.space) return false;
    return !this.invalidation(e.source_id);
  }

  /** Ids of the nodes whose SUPERSEDES edge, visible to this read, points at `id`; sorted. */
  supersededBy(id: string): string[] {
    const edges = this.view.supersedingEdges(id);
    if (edges.length === 0) return [];
    const ids = new Set<string>();
    for (const e of edges) if (this.#replaces(e)) ids.add(e.source_id);
    return [...ids].sort();
  }

  /** Why a read through this lens leaves node `id` out, or null when it shows it. */
  leaveOut(id: string): LeftOut | null {
    if (this.invalidation(id) && (!this.lens.includeInvalidated || this.lens.currentOnly)) return 'invalidated';
    if (this.lens.currentOnly && this.supersededBy(id).length > 0) return 'superseded';
    return null;
  }

  /** A node row as this read shows it: with superseded_by, and its invalidation when kept. */
  row(v: NodeVersion): NodeRow {
    return nodeRow(v, this.supersededBy(v.id), this.lens.includeInvalidated ? this.invalidation(v.id) : undefined);
  }

  certificate(
    input: { masked?: MaskedCounts; shownBatches?: Iterable<string | null>; invalidated?: number; rulesAsOf?: Micros; fact?: string } = {},
  ): Certificate {
    return buildCertificate({ asOf: this.lens.asOf, txAsOf: this.txAsOf, ...input });
  }

  #leavesNothing(): boolean {
    return !this.lens.currentOnly && this.view.invalidations().length === 0;
  }

  list(p: ListParams): ListResult {
    const { asOf, validAt, space } = this.lens;
    return listNodes(this.view, {
      asOf,
      validAt,
      space,
      kind: p.kind,
      category: p.category,
      limit: p.limit,
      afterSeq: p.afterSeq,
      leaveOut: this.#leavesNothing() ? undefined : (id) => this.leaveOut(id),
    });
  }

  get(id: string): GetResult & { invalidation?: Invalidation } {
    const { asOf, validAt, space } = this.lens;
    const r = getNode(this.view, id, { asOf, validAt, space });
    const invalidation = r.versions.length > 0 ? this.invalidation(id) : undefined;
    if (!invalidation) return r;
    if (this.lens.includeInvalidated) return { ...r, invalidation };
    return { ...r, item: null, reason: 'invalidated', invalidation };
  }

  why(id: string, depth: number): WhyResult {
    const { asOf, validAt, space } = this.lens;
    return evidenceChain(this.view, id, { asOf, validAt, depth, space, blocked: this.#blocked });
  }

  /** Every version carrying `fact` that may compete (whenever learned), and how many were left out as invalidated. */
  factCandidates(fact: string): { rows: NodeVersion[]; invalidated: number } {
    const all = rowsWithKey(this.view, fact, this.lens.space);
    const rows = all.filter((r) => !(knownAt(r, this.lens.asOf) && this.invalidation(r.id)));
    return { rows, invalidated: all.length - rows.length };
  }

  /** Ids of the nodes invalidated as of this read. */
  invalidatedIds(): string[] {
    const ids = new Set<string>();
    for (const i of this.view.invalidations()) if (i.known_at <= this.lens.asOf) ids.add(i.target_id);
    return [...ids];
  }

  /** Ids of the nodes a visible SUPERSEDES edge points at (superseded as of this read). */
  supersededIds(): string[] {
    const ids = new Set<string>();
    for (const e of this.view.supersedesEdges()) if (!ids.has(e.target_id) && this.#replaces(e)) ids.add(e.target_id);
    return [...ids];
  }

  async search(index: SearchIndex, q: SnapshotSearch): Promise<SearchAnswer> {
    const prepared = await this.prepareSearch(index, q);
    const answer = await this.rankSearch(index, prepared);
    prepared.candidates?.report();
    return answer;
  }

  /**
   * The part of a search that reads the tenant's lists (invalidated and superseded ids, the latest block
   * instant) and the index, never a row by id: a search without a space runs it once, then ranks
   * (rankSearch) over the views of more spaces each round.
   */
  async prepareSearch(index: SearchIndex, q: SnapshotSearch): Promise<PreparedSearch> {
    const invalidated = this.invalidatedIds();
    const leaveOut = [
      ...(this.lens.includeInvalidated && !this.lens.currentOnly ? [] : invalidated),
      ...(this.lens.currentOnly ? this.supersededIds() : []),
    ];
    const params: SearchParams = {
      ...q,
      asOf: this.lens.asOf,
      validAt: this.lens.validAt,
      space: this.lens.space,
      now: this.txAsOf,
      leaveOut,
      invalidated: this.lens.includeInvalidated ? [] : invalidated,
      blocked: this.#blocked,
      supersededBy: (id) => this.supersededBy(id),
    };
    return { params, candidates: await fetchCandidates(index, this.view.tenant, this.view.latestBlockKnownAt(), params) };
  }

  /**
   * Ranks and expands a prepared search over this snapshot's view. `blocked` and `supersededBy` stay the
   * preparing snapshot's: they read invalidations and SUPERSEDES edges, which every view of one read
   * gives alike (a view of some spaces takes them from the tenant's lists).
   */
  rankSearch(index: SearchIndex, prepared: PreparedSearch): Promise<SearchAnswer> {
    if (!prepared.candidates) return Promise.resolve(NO_ANSWER());
    return rankCandidates(index, this.view, prepared.params, prepared.candidates);
  }

  /** Spaces with the rows visible at as_of, sorted by name; only the lens's space when it names one. */
  /** The read's spaces (its own, or every one in its view) holding rows known at as_of, counted here. */
  spaces(): SpaceSummary[] {
    const names = this.lens.space === undefined ? this.view.spaceNames() : [this.lens.space];
    const counts: SpaceCounts[] = [];
    for (const space of names) {
      const c: SpaceCounts = { space, nodes: 0, edges: 0, firstKnownAt: Number.POSITIVE_INFINITY, lastKnownAt: Number.NEGATIVE_INFINITY };
      const note = (k: Micros): void => {
        if (k < c.firstKnownAt) c.firstKnownAt = k;
        if (k > c.lastKnownAt) c.lastKnownAt = k;
      };
      for (const n of this.view.nodesIn(space))
        if (knownAt(n, this.lens.asOf)) {
          c.nodes++;
          note(n.known_at);
        }
      for (const e of this.view.edgesOfSpace(space))
        if (knownAt(e, this.lens.asOf)) {
          c.edges++;
          note(e.known_at);
        }
      counts.push(c);
    }
    return spaceSummaries(counts);
  }
}
