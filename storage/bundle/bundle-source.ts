// Where a bundle's rows come from: the tenant's view when it is in memory, or the store read a page at a
// time (never the whole tenant in memory). Both hand each table over in commit (seq) order, cut where the
// tenant stood when the source was opened; the writer (writer.ts) filters every row itself, so a source
// may hand over more than the scope, never less.
import type { ExportPageQuery, ExportRowsOf, ExportTable } from '../log/kuzu/export-page-query.ts';
import type { TenantView } from '../read/tenant-view.ts';
import type { Micros } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, Verdict } from '../types.ts';

export interface BundleSource {
  readonly tenant: string;
  /** Node versions, in commit order: at least those in the export's scope. */
  nodes(): AsyncIterable<readonly NodeVersion[]>;
  /** Edges, in commit order: at least those known at as_of joining two ids in scope. */
  edges(): AsyncIterable<readonly EdgeRecord[]>;
  /** Verdicts, in commit order: at least those known at as_of. */
  verdicts(): AsyncIterable<readonly Verdict[]>;
  /** Invalidations, in commit order: at least those known at as_of. */
  invalidations(): AsyncIterable<readonly Invalidation[]>;
  /** The tenant's batches of these ids (an id without one is left out). */
  batches(ids: readonly string[]): Promise<BatchRow[]>;
  /** Every fact declaration of the tenant, in commit order. */
  declarations(): Promise<readonly Declaration[]>;
}

/** Rows handed over per chunk from a view (slices: the writer yields to the event loop between them). */
const VIEW_CHUNK = 10_000;

async function* slices<T>(rows: readonly T[], end: number): AsyncGenerator<readonly T[]> {
  for (let i = 0; i < end; i += VIEW_CHUNK) yield rows.slice(i, Math.min(end, i + VIEW_CHUNK));
}

/** The rows of a resident view (it must stay pinned while the bundle is staged), up to its length now. */
export function viewSource(view: TenantView, space: string | undefined): BundleSource {
  const nodes = view.nodesIn(space),
    edges = view.edgesOfSpace(),
    verdicts = view.verdicts(),
    invalidations = view.invalidations();
  const ends = { nodes: nodes.length, edges: edges.length, verdicts: verdicts.length, invalidations: invalidations.length };
  return {
    tenant: view.tenant,
    nodes: () => slices(nodes, ends.nodes),
    edges: () => slices(edges, ends.edges),
    verdicts: () => slices(verdicts, ends.verdicts),
    invalidations: () => slices(invalidations, ends.invalidations),
    batches: (ids) => Promise.resolve(ids.map((id) => view.batch(id)).filter((b) => b !== undefined)),
    declarations: () => Promise.resolve(view.declarations()),
  };
}

/** What the page source reads of the store (the ledger's graph store, bound to one tenant). */
export interface StorePages {
  page<K extends ExportTable>(table: K, q: ExportPageQuery): Promise<ExportRowsOf[K][]>;
  batches(ids: readonly string[]): Promise<BatchRow[]>;
  declarations(): Promise<Declaration[]>;
}

export interface PagesScope {
  asOf: Micros;
  space?: string | undefined;
  category?: string | undefined;
  /** The highest sequence number committed when the export started: rows above it are left out. */
  upTo: number;
  /** Rows per page read from the store. */
  pageRows: number;
  /** Checked before each page (an export may be abandoned). */
  signal?: AbortSignal | undefined;
}

/**
 * The tenant's rows read from the store a page at a time (only one page decoded at once), narrowed in the
 * engine to rows known at as_of, and to the scope's nodes (a space's through its Holds rows) and, with a
 * space, to edges joining two of its ids.
 */
export function pagesSource(tenant: string, store: StorePages, scope: PagesScope): BundleSource {
  async function* pages<K extends ExportTable>(table: K, narrowed: boolean): AsyncGenerator<readonly ExportRowsOf[K][]> {
    let after = 0;
    for (;;) {
      scope.signal?.throwIfAborted();
      const rows = await store.page(table, {
        after,
        upTo: scope.upTo,
        limit: scope.pageRows,
        knownBy: scope.asOf,
        ...(narrowed ? { space: scope.space, category: scope.category } : {}),
      });
      if (rows.length > 0) yield rows;
      const last = rows.at(-1);
      if (last === undefined || rows.length < scope.pageRows) return;
      after = last.seq;
    }
  }
  return {
    tenant,
    nodes: () => pages('nodes', true),
    edges: () => pages('edges', scope.space !== undefined),
    verdicts: () => pages('verdicts', false),
    invalidations: () => pages('invalidations', false),
    batches: (ids) => store.batches(ids),
    declarations: () => store.declarations(),
  };
}
