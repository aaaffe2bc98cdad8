// The ledger: the graph store (source of truth), the in-memory views derived from it for the tenants in
// use (loaded on first use, evicted under SVC_MEMORY_MB: resident-views.ts), one capture clock, and one
// writer queue; `at(tenant, lens)` opens every read as a Snapshot. Writers are grouped: every request
// waiting when the store becomes free is planned in order and committed in one transaction, and each is acknowledged only after that commit. Kuzu's
// commit costs a fixed ~20-80 ms however many rows it carries, so grouping is what lets concurrent
// writers share it.
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import { CaptureClock } from './clock.ts';
import { envWholeNumber } from '../env-megabytes.ts';
import { KuzuGraph, type GraphStore, type KuzuGraphOptions, type ReadTurnStats } from './kuzu/kuzu-graph.ts';
import { TenantDropping, TenantDrops } from './tenant-drops.ts';
import { emptyGroup, identKey, type CommitGroup } from '../commit-group.ts';
import { planInvalidation, type InvalidateInput, type InvalidateOutcome } from './invalidation-plan.ts';
import { resolveLens, type LensInput, type LensInstant } from '../read/lens.ts';
import { Snapshot, type ListParams } from '../read/snapshot.ts';
import { listByPages, type JudgeView, type PagedList } from '../read/list-by-pages.ts';
import { memoryBudgetMb, ResidentViews } from '../read/resident-views.ts';
import { groupScope, ScopedGate, wholeTenant, type GateScope } from './scoped-gate.ts';
import type { TenantView } from '../read/tenant-view.ts';
import { UnionView, type PlanView } from '../read/union-view.ts';
import { answerFromSpaces, MAX_READ_SPACES, type SpaceSource } from '../read/read-by-id.ts';
import { pagesSource, viewSource, type BundleSource, type StorePages } from '../bundle/bundle-source.ts';
import { SpacesSearchView } from '../read/spaces-search-view.ts';
import { TenantLists } from '../read/tenant-lists.ts';
import { RecentHolds, StaleLookup } from './recent-holds.ts';
import { HeldKeys } from './held-keys.ts';
import { IdPlaces, idPlacesMb } from './id-places.ts';
import { HELD_KEYS_FILE, saveHeldKeys, takeHeldKeys } from './held-keys-file.ts';
import { ID_PLACES_FILE, saveIdPlaces, takeIdPlaces } from './id-places-file.ts';
import type { StoreMark } from './saved-beside-store.ts';
import { KnownSpaces } from './known-spaces.ts';
import { LruMap } from '../lru-map.ts';
import type { Micros } from '../time.ts';
import type { BatchRow, Declaration, EdgeRecord, Invalidation, NodeVersion, SpaceCounts, SpaceRow, Verdict } from '../types.ts';

const tablesSize = (g: CommitGroup): number =>
  g.batches.length + g.nodes.length + g.edges.length + g.declarations.length + g.verdicts.length + g.invalidations.length + g.spaces.length;
import { derivedNodeId, nodeContentHash, Overlay, planWrite, StagedRows, type WriteInput, type WriteOutcome } from './write-plan.ts';

/** What one queued job stages into its commit group. */
export interface Stage {
  readonly capturedAt: Micros;
  /** The tenant's staged rows over `view`, or over the tenant's view (which must then be resident). */
  overlay(tenant: string, view?: PlanView): Overlay;
  nextSeq(): number;
  addBatch(row: BatchRow): void;
  addNodes(rows: NodeVersion[]): void;
  addEdges(rows: EdgeRecord[]): void;
  addDeclaration(row: Declaration): void;
  addVerdict(row: Verdict): void;
  addInvalidation(row: Invalidation): void;
  addInvalidationSpaces(links: CommitGroup['invalidationSpaces']): void;
  /** Node rows (by seq) of a write whose ids no row of the tenant held before it (CommitGroup.firstVersions). */
  noteFirstVersions(seqs: readonly number[]): void;
  /**
   * Rows copied verbatim from another server (a tenant copy): they keep their tseq and instants, take
   * this server's seq numbers in the order given, and move the sequence and the clock past them.
   */
  addImported(rows: CommitGroup): void;
}

interface Job<T> {
  run: (stage: Stage) => T;
  size: number;
  resolve: (value: T) => void;
  reject: (error: unknown) => void;
}

export type CommitListener = (group: Readonly<CommitGroup>) => void | Promise<void>;
export type DropListener = (tenant: string) => void | Promise<void>;

/** The latest instant a row carries, as the clock is seeded on open (lastWritten). */
function latestInstant(rows: CommitGroup): Micros {
  let top = 0;
  for (const b of rows.batches) top = Math.max(top, b.captured_at);
  for (const r of rows.nodes) top = Math.max(top, r.captured_at);
  for (const r of rows.edges) top = Math.max(top, r.captured_at);
  for (const r of rows.declarations) top = Math.max(top, r.declared_at);
  for (const r of rows.verdicts) top = Math.max(top, r.decided_at);
  for (const r of rows.invalidations) top = Math.max(top, r.invalidated_at);
  return top;
}

/** The earliest instant from which a read could see any of the rows. */
function earliestKnown(rows: CommitGroup): Micros {
  let low = Number.POSITIVE_INFINITY;
  for (const b of rows.batches) low = Math.min(low, b.declared_captured_at);
  for (const r of rows.nodes) low = Math.min(low, r.known_at);
  for (const r of rows.edges) low = Math.min(low, r.known_at);
  for (const r of rows.declarations) low = Math.min(low, r.declared_at);
  for (const r of rows.verdicts) low = Math.min(low, r.known_at);
  for (const r of rows.invalidations) low = Math.min(low, r.known_at);
  return low;
}

/** The highest seq of the rows (0: none). */
function maxSeq(rows: CommitGroup): number {
  let top = 0;
  for (const t of [rows.nodes, rows.edges, rows.declarations, rows.verdicts, rows.invalidations])
    for (const r of t) top = Math.max(top, r.seq);
  return top;
}

/** The highest tseq of the rows (0: none). A loop, not a spread: an import page can hold ~130k rows, past V8's argument limit. */
function maxTseq(rows: CommitGroup): number {
  let top = 0;
  for (const t of [rows.batches, rows.nodes, rows.edges, rows.declarations, rows.verdicts, rows.invalidations, rows.spaces])
    for (const r of t) top = Math.max(top, r.tseq);
  return top;
}

const MAX_GROUP_ROWS = 50_000;
/** Rows per page an export reads from the store: ~10-20 MB decoded at the bundle's usual row sizes. */
const EXPORT_PAGE_ROWS = 20_000;
/** Lookups of a write's spaces made again after a commit moved one of its ids, before the tenant is loaded instead. */
const LOOKUP_ATTEMPTS = 3;

/** The committed rows a write is planned against when its tenant is not resident, and the check it makes first. */
interface SpacePlan {
  view: PlanView;
  /** Throws StaleLookup when a commit since the lookup put a named id in a space outside the view. */
  check(): void;
}
/**
 * Tenants whose lists (TenantLists: invalidations, SUPERSEDES edges, entity versions) are kept for searches
 * across their spaces; the least recently searched beyond it are read from the store again when searched.
 */
const KEPT_TENANT_LISTS = 32;
/** A write naming at most this many ids keeps those the filter of held ids called absent among the known ids. */
const REMEMBER_ABSENT_MAX = 64;
/** Fact keys whose spaces are remembered after a lookup; beyond it the least recently used is looked up again. */
const FACT_LOOKUPS = 10_000;
/** Spaces whose first writer is remembered after a lookup; beyond it the least recently used is asked again. */
const SPACE_LOOKUPS = 10_000;

/**
 * How far sequence numbers jump on every open. After a SIGKILL during a commit, Kuzu 0.11.3 can keep the
 * primary keys of the lost transaction in its index (the crash test hit "duplicated primary key" on the
 * first write after a restart), so numbers above the last committed row are never reused. Larger than
 * any commit group; 2^53 leaves room for billions of restarts.
 */
const SEQ_GAP = 1_000_000;

/**
 * Rows of a dropped tenant deleted per transaction (SVC_DROP_PART_ROWS). Each part holds the writer's
 * turn while it runs (0.1-0.25 s here at 2,000 rows, 0.5-1 s at 5,000, under load); other tenants' commits go in between parts.
 */
export const DROP_PART_ROWS = 2_000;

/** A tenant's deletion under way: rows deleted so far by this run, and its end. */
interface RunningDrop {
  deleted: Record<string, number>;
  parts: number;
  finished: Promise<Record<string, number>>;
}

/** How far a deletion has come: rows deleted (over every table) by the run under way, and its parts. */
export interface DropProgress {
  deleted: number;
  parts: number;
}

export class Ledger {
  readonly #graph: GraphStore;
  readonly #residents: ResidentViews;
  /**
   * Spaces this process wrote a Space row for, with the tenant it names: new spaces since the store
   * opened (the row may still be in the write journal, which a lookup in the store does not see). A row
   * for a space the store already held is skipped by the copy, and the older one stays its first writer.
   */
  readonly #spacesStaged = new Map<string, string>();
  /** First writers looked up in the store (null: none yet), least recently used first, at most SPACE_LOOKUPS. */
  readonly #spacesLooked = new LruMap<string, string | null>(SPACE_LOOKUPS);
  readonly #queue: Job<unknown>[] = [];
  readonly #listeners: CommitListener[] = [];
  readonly #dropListeners: DropListener[] = [];
  /** Node and edge rows of imported groups: their spaces' first writers come with them, never staged here. */
  readonly #imported = new WeakSet<object>();
  /** Per tenant, a number that changes whenever rows other than an import's are staged, committed or dropped. */
  readonly #marks = new Map<string, number>();
  /** The spaces the latest commits brought ids into (see #spacePlanned). */
  readonly #recent = new RecentHolds();
  /** The spaces of ids looked up or written lately, kept exact by every commit. */
  readonly #known = new KnownSpaces();
  /** Per tenant, a filter of the ids and spaces the store holds: an id or a space it has not is looked up nowhere. */
  readonly #held: HeldKeys | null;
  /** Per tenant, the space holding each id, for reads by id: answered without asking the store. */
  readonly #places: IdPlaces | null;
  /** How writes and invalidations were planned: against spaces' views, the tenant's, and lookups made again. */
  readonly #plans = { spaces: 0, tenant: 0, stale: 0, widened: 0, lookedUp: 0, absent: 0, newSpaces: 0 };
  /** Reads by id without a space (see readById): answered from spaces' views, or from the tenant's. */
  readonly #byId = { spaces: 0, tenant: 0 };
  /** Resolves without a space (see readByFact): answered from spaces' views, or from the tenant's. */
  readonly #byFact = { spaces: 0, tenant: 0 };
  /** Per tenant and fact key, the spaces holding a row carrying it, current at a mark of #recent; least recently used first. */
  readonly #factSpaces = new LruMap<string, { spaces: Set<string>; since: number }>(FACT_LOOKUPS);
  /** Per tenant, what a search across its spaces reads of the whole tenant, least recently used first. */
  readonly #lists = new LruMap<string, TenantLists>(KEPT_TENANT_LISTS);
  readonly #listsLoading = new Map<string, Promise<TenantLists>>();
  /** Reads across spaces without a space (see readAcrossSpaces): answered from spaces' views, or from the tenant's. */
  readonly #across = { spaces: 0, tenant: 0 };
  /** Per tenant, the turn of the last write called (see #turn). */
  readonly #turns = new Map<string, Promise<void>>();
  #draining = false;
  #seq: number;
  #inflight: { minKnownAt: Micros; done: Promise<void> } | null = null;
  /** Commits, read-model loads and deletions run apart where their scopes meet (see ScopedGate). */
  readonly #gate = new ScopedGate();
  #closed = false;
  /** Tenants being deleted here (durably marked: a deletion cut short resumes on open). */
  readonly #drops: TenantDrops;
  readonly #running = new Map<string, RunningDrop>();
  /** Tenants whose deletion ended while nothing listened (resumed on open): a later listener is told. */
  readonly #unheard = new Set<string>();
  readonly #dropPartRows: number;
  /** Rows per page an export reads from the store. */
  readonly #exportPageRows: number;
  /** Exports staged from the tenant's resident view, and from the store page by page. */
  readonly #exports = { view: 0, pages: 0 };
  /** The highest sequence number of a commit acknowledged by this process; null before its first (then read from the store). */
  #committedSeq: number | null = null;
  readonly clock: CaptureClock;
  readonly dataDir: string;

  private constructor(
    graph: GraphStore,
    dataDir: string,
    lastCaptured: Micros,
    lastSeq: number,
    budgetMb: number,
    dropPartRows: number,
    idFilter: boolean,
    exportPageRows: number,
    idPlacesMb: number,
    idPlacesAfterMs: number | undefined,
  ) {
    this.#graph = graph;
    this.#held = idFilter ? new HeldKeys((tenant, sink) => graph.tenantKeys(tenant, sink)) : null;
    this.#places =
      idPlacesMb > 0
        ? new IdPlaces((tenant, sink) => graph.tenantPlacements(tenant, sink), idPlacesMb * 1024 * 1024, idPlacesAfterMs)
        : null;
    this.dataDir = dataDir;
    this.#drops = new TenantDrops(dataDir);
    this.#dropPartRows = dropPartRows;
    this.#exportPageRows = exportPageRows;
    this.clock = new CaptureClock(lastCaptured);
    this.#seq = lastSeq;
    this.#residents = new ResidentViews(
      (tenant) => graph.loadTenant(tenant),
      budgetMb * 1024 * 1024,
      (scope, fn) => this.#exclusive(scope, fn),
      undefined,
      undefined,
      {
        // A space the tenant's filter says the store holds no row of loads empty without reading the store
        // (whose read would wait for the journal's copy in progress): loads run apart from commits, and
        // every commit is in the filter before the gate opens.
        space: (tenant, space) => {
          if (!this.#held?.spaceAbsent(tenant, space)) return graph.loadSpace(tenant, space);
          this.#plans.newSpaces++;
          return Promise.resolve({ nodes: [], edges: [], invalidations: [] });
        },
        spaces: async (tenant, spaces) => {
          const out = new Map<string, Awaited<ReturnType<GraphStore['loadSpace']>>>();
          const stored: string[] = [];
          for (const space of spaces) {
            if (!this.#held?.spaceAbsent(tenant, space)) stored.push(space);
            else {
              this.#plans.newSpaces++;
              out.set(space, { nodes: [], edges: [], invalidations: [] });
            }
          }
          if (stored.length > 0) for (const [space, rows] of await graph.loadSpaces(tenant, stored)) out.set(space, rows);
          return out;
        },
        tenantWide: (tenant) => graph.loadTenantWide(tenant),
      },
    );
  }

  /**
   * Opens the ledger in `dataDir`. Nothing is loaded but the clock and the sequence: each tenant's rows
   * are read when the tenant is first used, a space's first writer when it is asked for.
   */
  static async open(
    dataDir: string,
    opts: {
      memoryMb?: number;
      graph?: KuzuGraphOptions;
      dropPartRows?: number;
      /** Writes skip the lookup of ids the tenant's filter says the store lacks (default); false: every id is looked up (tests of lookups). */
      idFilter?: boolean;
      /** Rows per page an export reads from the store (default EXPORT_PAGE_ROWS; tests page through few). */
      exportPageRows?: number;
      /** MB for the tables in which reads by id find ids' spaces (default SVC_ID_PLACES_MB); 0: in the store (tests of lookups). */
      idPlacesMb?: number;
      /** Time a tenant's reads spend asking the store before its table is built, ms (default BUILD_AFTER_LOOKUP_MS; tests 0). */
      idPlacesAfterMs?: number;
    } = {},
  ): Promise<Ledger> {
    mkdirSync(dataDir, { recursive: true });
    // Options for the store are tests' seams, which a recovery in a child process would not run through.
    const graph = await KuzuGraph.open(join(dataDir, 'graph'), opts.graph ?? { recoverApart: true });
    const last = await graph.lastWritten();
    // Above every tseq too: rows imported from another server may carry numbers above this server's seq.
    const ledger = new Ledger(
      graph,
      dataDir,
      last.instant,
      Math.max(last.seq, last.tseq) + SEQ_GAP,
      opts.memoryMb ?? memoryBudgetMb(),
      opts.dropPartRows ?? dropPartRows(),
      opts.idFilter ?? true,
      opts.exportPageRows ?? EXPORT_PAGE_ROWS,
      opts.idPlacesMb ?? idPlacesMb(),
      opts.idPlacesAfterMs,
    );
    // Filters of held ids saved by the last close, taken back if nothing was written before this open, and
    // the tables of ids' places under the same rule. Read while the server starts (their size grows with the
    // ledger: 60 MB at 3M rows, a quarter of a second before the first answer): the commits meanwhile are
    // added to them, and until then the store is asked, as before they are built.
    ledger.#held?.restore(takeHeldKeys(join(dataDir, HELD_KEYS_FILE), last));
    ledger.#places?.restore(takeIdPlaces(join(dataDir, ID_PLACES_FILE), last));
    // A deletion a crash or a kill cut short goes on; the tenant is refused until it ends.
    for (const tenant of ledger.#drops.list())
      ledger
        .dropTenant(tenant)
        .catch((error: unknown) => console.error(`deleting tenant ${tenant}'s rows (resumed on open) failed:`, error));
    return ledger;
  }

  #exclusive<T>(scope: GateScope, fn: () => Promise<T>): Promise<T> {
    return this.#gate.run(scope, fn);
  }

  async #lookUpWriter(space: string): Promise<string | null> {
    const looked = this.#spacesLooked.get(space);
    if (looked !== undefined && (looked !== null || !this.#spacesStaged.has(space))) return looked;
    const stored = await this.#graph.spaceWriter(space);
    // None stored: the row this process staged, still in the journal, will be the first.
    const tenant = stored ?? this.#spacesStaged.get(space) ?? null;
    if (stored !== null || !this.#spacesStaged.has(space)) {
      this.#spacesLooked.set(space, stored);
    }
    return tenant;
  }

  /**
   * Space rows for the spaces `group` writes that this process has not seen written: without a lookup
   * (it would wait for the copy in progress), as the copy skips a row whose space the store holds. The
   * first tenant to write a space in commit order is its writer. Returns the spaces staged, to be
   * forgotten if the group is refused.
   */
  #stageSpaces(group: CommitGroup): string[] {
    const added: string[] = [];
    for (const s of group.spaces) {
      if (this.#spacesStaged.has(s.space)) continue;
      this.#spacesStaged.set(s.space, s.tenant);
      added.push(s.space);
    }
    for (const r of [...group.nodes, ...group.edges]) {
      if (this.#imported.has(r)) continue;
      if (this.#spacesStaged.has(r.space) || typeof this.#spacesLooked.peek(r.space) === 'string') continue;
      group.spaces.push({ space: r.space, tenant: r.tenant, first_captured_at: r.captured_at, tseq: r.tseq });
      this.#spacesStaged.set(r.space, r.tenant);
      added.push(r.space);
    }
    return added;
  }

  /** The tenant's committed rows; the tenant must be resident (`load`, or inside an operation). */
  view(tenant: string): TenantView {
    return this.#residents.get(tenant);
  }

  /** Makes the tenant's read model resident, loading it from the graph store on first use. */
  load(tenant: string): Promise<TenantView> {
    if (this.#drops.has(tenant)) return Promise.reject(new TenantDropping(tenant));
    return this.#residents.ensure(tenant);
  }

  /** Whether the tenant's rows here are being deleted (every read and write of it is refused meanwhile). */
  isDropping(tenant: string): boolean {
    return this.#drops.has(tenant);
  }

  /** Whether a committed node or edge was stored by importRows (copied from another server), not written here. */
  isImported(row: NodeVersion | EdgeRecord): boolean {
    return this.#imported.has(row);
  }

  /** Keeps the tenant resident until the returned function is called (an operation holds it while it runs). */
  pin(tenant: string): () => void {
    return this.#residents.pin(tenant);
  }

  /**
   * The read model a read of `space` (or, without one, of the whole tenant) answers from: one space's rows
   * plus the tenant's batches, declarations, verdicts and the invalidations of its nodes, or the tenant's
   * every row. Loaded on first use.
   */
  viewOf(tenant: string, space?: string): Promise<TenantView> {
    if (this.#drops.has(tenant)) return Promise.reject(new TenantDropping(tenant));
    return space === undefined ? this.load(tenant) : this.#residents.ensureSpace(tenant, space);
  }

  /** Runs `fn` with the view of `space` (or of the tenant) resident and pinned, so every commit reaches it. */
  async withView<T>(tenant: string, space: string | undefined, fn: (view: TenantView) => Promise<T>): Promise<T> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    const release = space === undefined ? this.pin(tenant) : this.#residents.pinSpace(tenant, space);
    try {
      return await fn(await this.viewOf(tenant, space));
    } finally {
      release();
    }
  }

  /**
   * What the search index reads for the words of the blocks linked to `nodes` (one tenant's): the tenant's
   * view when it is resident, else the views of the spaces holding the nodes' ids (so every edge touching
   * them) and the ids those edges link them to. Best effort, as of the call: not pinned after it returns.
   * `placed` gives the spaces holding some of those ids (the first versions of a commit's linked ids: only
   * their commit names them), which are then not looked up: past 40 ids a lookup scans the tenant's ids.
   */
  async linksView(
    tenant: string,
    nodes: readonly NodeVersion[],
    placed: ReadonlyMap<string, readonly string[]> = new Map(),
  ): Promise<TenantView | UnionView> {
    if (this.#residents.has(tenant)) return this.load(tenant);
    const spaces = new Set(nodes.map((n) => n.space));
    const ids = new Set(nodes.map((n) => n.id));
    const views = new Map<string, TenantView>();
    const union = new UnionView([]);
    const widen = async (of: Iterable<string>): Promise<void> => {
      const lookUp: string[] = [];
      for (const id of of) {
        const known = placed.get(id);
        if (known) for (const s of known) spaces.add(s);
        else lookUp.push(id);
      }
      if (lookUp.length > 0) for (const set of (await this.#spacesOf(tenant, lookUp, true)).values()) for (const s of set) spaces.add(s);
      const missing = [...spaces].filter((s) => !views.has(s));
      const loaded = await this.#residents.ensureSpaces(tenant, missing);
      missing.forEach((s, i) => {
        views.set(s, loaded[i]!);
        union.add(loaded[i]!);
      });
    };
    await widen(ids);
    const linked = new Set<string>();
    for (const id of ids) {
      for (const e of union.edgesFrom(id)) if (!ids.has(e.target_id)) linked.add(e.target_id);
      for (const e of union.edgesTo(id)) if (!ids.has(e.source_id)) linked.add(e.source_id);
    }
    if (linked.size > 0) await widen(linked);
    return union;
  }

  /** The node rows of the space's own read model if it is in memory now (admission: a small space's search is light). */
  residentSpaceNodes(tenant: string, space: string): number | undefined {
    return this.#residents.residentSpace(tenant, space)?.size().nodes;
  }

  /** Spaces whose own read model is in memory now, as [tenant, space]. */
  residentSpaces(): [string, string][] {
    return this.#residents.spaces();
  }

  /** Tenants whose read models are in memory now. */
  tenants(): string[] {
    return this.#residents.tenants();
  }

  /**
   * Writes and invalidations planned so far against the views of the spaces their ids live in, against the
   * tenant's view, those whose plan added a resident space's view, lookups made again (StaleLookup), and
   * ids looked up in the store (not known here).
   */
  planStats(): { spaces: number; tenant: number; stale: number; widened: number; lookedUp: number; absent: number; newSpaces: number } {
    return { ...this.#plans };
  }

  /** Resolves once the tenant's table of ids' places is built, or its build failed (tests). */
  async placesSettled(tenant: string): Promise<void> {
    await this.#places?.settled(tenant);
  }

  /** Resolves once the tenant's filter of held ids is built, or its build failed (tests). */
  async heldKeysSettled(tenant: string): Promise<boolean> {
    await this.#held?.settled(tenant);
    return this.#held?.ready(tenant) ?? false;
  }

  residentStats(): ReturnType<ResidentViews['stats']> {
    return this.#residents.stats();
  }

  /** The store's shared read turns so far (lookups by id, space loads). */
  readTurnStats(): ReadTurnStats {
    return this.#graph.readTurnStats();
  }

  /** Rows acknowledged and not yet copied into the engine (the write journal's, held in memory). */
  journalRows(): number {
    return this.#graph.journalRows();
  }

  /** The tenant that first wrote to `space`, or null when none has: a lookup in the store's index once. */
  firstWriterOf(space: string): Promise<string | null> {
    return this.#lookUpWriter(space);
  }

  /**
   * Rows above this sequence number were renumbered when the store recovered its write journal on open:
   * a derived index that recorded them under their old numbers re-reads everything above it.
   */
  renumberedAbove(): number | null {
    return this.#graph.renumberedAbove();
  }

  /**
   * Node rows of every tenant with `after` < seq <= `upTo`, in seq order, at most `limit`, from the store
   * (a search index catching up page by page).
   */
  nodesBetween(after: number, upTo: number, limit: number): Promise<NodeVersion[]> {
    return this.#graph.nodesBetween(after, upTo, limit);
  }

  /** The highest sequence number the store holds (every commit acknowledged so far is in it). */
  async committedSeq(): Promise<number> {
    return (await this.#graph.lastWritten()).seq;
  }

  /** The server's present instant (`tx_as_of`, and what `now` means in a read). */
  now(): Micros {
    return this.clock.peek();
  }

  /**
   * Opens a read of `tenant` through `lens`: `now` resolved to the present instant, after every commit
   * in flight that could change the answer has landed.
   */
  async at(tenant: string, lens: LensInput): Promise<Snapshot> {
    // A read confined to a space loads that space, never the tenant.
    const view = await this.viewOf(tenant, lens.space);
    const resolved = resolveLens(lens, this.now());
    await this.settled(resolved.asOf);
    return new Snapshot(view, resolved, this.now());
  }

  /**
   * A read by id through `lens` (get_memory, why): `answer` (synchronous, without effects) runs over a
   * snapshot holding what it reads. Confined to a space, or with the tenant's view resident, that is the
   * view `at` opens; otherwise the views of the spaces holding the ids it reads, loaded round by round
   * (storage/read/read-by-id.ts), and the tenant's view only past MAX_READ_SPACES of them.
   */
  async readById<T>(tenant: string, lens: LensInput, answer: (snap: Snapshot) => T): Promise<T> {
    return this.#fromSpaces(tenant, lens, answer, this.#byId);
  }

  /**
   * A resolve through `lens` (resolve_fact): as readById, and the rows carrying a fact key are read too
   * (their spaces looked up by fact key, storage/read/read-by-id.ts), with the tenant's declarations from
   * its rules view. Without a space and with the tenant's view not resident, the tenant's view is loaded
   * only past MAX_READ_SPACES spaces. `rulesAsOf` (an instant, or `now`: the answer's tx_as_of) is settled
   * as as_of is, so a declaration being committed at it is waited for.
   */
  async readByFact<T>(tenant: string, lens: LensInput, rulesAsOf: LensInstant | undefined, answer: (snap: Snapshot) => T): Promise<T> {
    return this.#fromSpaces(tenant, lens, answer, this.#byFact, { at: rulesAsOf });
  }

  async #fromSpaces<T>(
    tenant: string,
    lens: LensInput,
    answer: (snap: Snapshot) => T,
    stats: { spaces: number; tenant: number },
    rules?: { at: LensInstant | undefined },
  ): Promise<T> {
    const settleRules = async (txAsOf: Micros): Promise<void> => {
      if (rules?.at !== undefined) await this.settled(rules.at === 'now' ? txAsOf : rules.at);
    };
    const fromTenant = async (): Promise<T> => {
      const snap = await this.at(tenant, lens);
      await settleRules(snap.txAsOf);
      return answer(snap);
    };
    if (lens.space !== undefined || this.#residents.has(tenant)) return fromTenant();
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    const resolved = resolveLens(lens, this.now());
    await this.settled(resolved.asOf);
    const txAsOf = this.now();
    await settleRules(txAsOf);
    const releases: (() => void)[] = [];
    try {
      let rulesView: TenantView | undefined;
      if (rules) {
        releases.push(this.#residents.pinRules(tenant));
        rulesView = await this.#residents.ensureRules(tenant);
      }
      const found = await answerFromSpaces(tenant, this.#spaceSource(tenant), (view) => answer(new Snapshot(view, resolved, txAsOf)), {
        rules: rulesView,
      });
      if (found) {
        stats.spaces++;
        return found.value;
      }
    } finally {
      for (const release of releases) release();
    }
    stats.tenant++;
    return fromTenant();
  }

  /**
   * The spaces holding a row carrying each fact key, and the mark of commits they are current at: from an
   * earlier lookup and what commits since brought in while the ring of recent commits still reaches back to
   * it, else from the store (a scan of the Block table's fact keys), remembered with its mark.
   */
  async #spacesWithFacts(tenant: string, facts: readonly string[]): Promise<{ held: Map<string, Set<string>>; since: number }> {
    const since = this.#recent.count;
    const held = new Map<string, Set<string>>();
    const missing: string[] = [];
    for (const fact of facts) {
      const key = identKey(tenant, fact);
      const seen = this.#factSpaces.peek(key);
      const moved = seen ? this.#recent.factSpacesSince(seen.since, tenant, [fact]) : null;
      if (!seen || !moved) {
        missing.push(fact);
        continue;
      }
      const spaces = new Set([...seen.spaces, ...moved]);
      held.set(fact, spaces);
      this.#factSpaces.set(key, { spaces, since });
    }
    if (missing.length === 0) return { held, since };
    const found = await this.#graph.spacesWithFacts(tenant, missing);
    for (const fact of missing) {
      const spaces = found.get(fact) ?? new Set<string>();
      held.set(fact, spaces);
      const key = identKey(tenant, fact);
      this.#factSpaces.set(key, { spaces, since });
    }
    // One mark for all, taken before the store was read: the caller asks what commits since brought in.
    return { held, since };
  }

  /** Resolves without a space answered so far from spaces' views, and from the tenant's (see readByFact). */
  byFactStats(): { spaces: number; tenant: number } {
    return { ...this.#byFact };
  }

  /**
   * Runs `fn` with a view holding the tenant's declarations and verdicts (its rules view: none of its
   * rows), resident and pinned so every commit reaches it: what declare_fact and a verdict without a space
   * check against, never loading the tenant.
   */
  async withRules<T>(tenant: string, fn: (view: TenantView) => Promise<T>): Promise<T> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    const release = this.#residents.pinRules(tenant);
    try {
      return await fn(await this.#residents.ensureRules(tenant));
    } finally {
      release();
    }
  }

  /**
   * Runs `fn` over the rows an export of `tenant` at `scope` reads: the tenant's view when it is resident
   * (pinned while `fn` runs), else the store a page at a time, cut at the sequence number committed now,
   * after every commit that could change the answer at `scope.asOf` landed. Never loads the tenant.
   */
  async withBundleSource<T>(
    tenant: string,
    scope: { asOf: Micros; space?: string | undefined; category?: string | undefined },
    fn: (source: BundleSource) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    await this.settled(scope.asOf);
    if (this.#residents.has(tenant)) {
      this.#exports.view++;
      return this.withView(tenant, undefined, (view) => fn(viewSource(view, scope.space)));
    }
    this.#exports.pages++;
    const graph = this.#graph;
    const store: StorePages = {
      page: (table, q) => {
        if (this.#drops.has(tenant)) return Promise.reject(new TenantDropping(tenant));
        return graph.exportPage(tenant, table, q);
      },
      batches: (ids) => graph.batchesOf(tenant, ids),
      declarations: () => graph.declarationsOf(tenant),
    };
    const upTo = this.#committedSeq ?? (await this.committedSeq());
    return fn(pagesSource(tenant, store, { ...scope, upTo, pageRows: this.#exportPageRows, signal }));
  }

  /** Exports staged so far from the tenant's resident view, and from the store page by page (withBundleSource). */
  exportStats(): { view: number; pages: number } {
    return { ...this.#exports };
  }

  /** Reads by id without a space answered so far from spaces' views, and from the tenant's (see readById). */
  byIdStats(): { spaces: number; tenant: number } {
    return { ...this.#byId };
  }

  /**
   * A read across the tenant's spaces that reads rows by id and the tenant's lists (search_memory without a
   * space): `prepare` runs once over a snapshot whose view answers the lists only (invalidations,
   * SUPERSEDES edges, entity names, the latest block instant; never a row by id), then `answer` runs over
   * snapshots holding what it reads. Confined to a space, or with the tenant's view resident, both run
   * over the snapshot `at` opens; otherwise `answer` runs over the views of the spaces holding the ids it
   * reads, loaded round by round (storage/read/read-by-id.ts), and over the tenant's view only past
   * MAX_READ_SPACES spaces or MAX_READ_ROUNDS rounds. The snapshot returned shows rows (superseded_by,
   * invalidations) and certifies the answer.
   */
  async readAcrossSpaces<P, T>(
    tenant: string,
    lens: LensInput,
    prepare: (snap: Snapshot) => Promise<P>,
    answer: (snap: Snapshot, prepared: P) => Promise<T>,
  ): Promise<{ snap: Snapshot; value: T }> {
    const whole = async (): Promise<{ snap: Snapshot; value: T }> => {
      const snap = await this.at(tenant, lens);
      return { snap, value: await answer(snap, await prepare(snap)) };
    };
    if (lens.space !== undefined || this.#residents.has(tenant)) return whole();
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    const resolved = resolveLens(lens, this.now());
    await this.settled(resolved.asOf);
    const txAsOf = this.now();
    const lists = await this.#listsOf(tenant);
    const bare = new SpacesSearchView(tenant, [], lists);
    const snap = new Snapshot(bare, resolved, txAsOf);
    const prepared = await prepare(snap);
    // What was prepared is reused every round: it must not depend on rows read by id (none is loaded here).
    if (bare.asked().size > 0) throw new Error('a read across spaces prepared its answer from rows read by id');
    const found = await answerFromSpaces(
      tenant,
      this.#spaceSource(tenant),
      (view) => answer(new Snapshot(view, resolved, txAsOf), prepared),
      { maxSpaces: MAX_READ_SPACES, join: (views) => new SpacesSearchView(tenant, views, lists) },
    );
    if (found) {
      this.#across.spaces++;
      return { snap, value: found.value };
    }
    this.#across.tenant++;
    return whole();
  }

  /** Reads across spaces without a space answered so far from spaces' views, and from the tenant's (see readAcrossSpaces). */
  acrossStats(): { spaces: number; tenant: number } {
    return { ...this.#across };
  }

  /** Ids of reads by id answered by the tables of ids' places, and asked of the store instead; the tables' bytes, builds and their time. */
  placesStats(): { answered: number; missed: number; bytes: number; builds: number; buildMs: number; restored: number } {
    const p = this.#places;
    return {
      answered: p?.answered ?? 0,
      missed: p?.missed ?? 0,
      bytes: p?.bytes ?? 0,
      builds: p?.builds.count ?? 0,
      buildMs: p?.builds.ms ?? 0,
      restored: p?.restored ?? 0,
    };
  }

  /** How a read round by round finds and holds the tenant's spaces (storage/read/read-by-id.ts). */
  #spaceSource(tenant: string): SpaceSource {
    return {
      lookUp: async (ids) => {
        const since = this.#recent.count;
        return { held: await this.#spacesOf(tenant, ids, true), since };
      },
      movedSince: (since, ids) => this.#recent.spacesSince(since, tenant, ids),
      lookUpFacts: (facts) => this.#spacesWithFacts(tenant, facts),
      factsMovedSince: (since, facts) => this.#recent.factSpacesSince(since, tenant, facts),
      hold: async (spaces) => {
        const releases = spaces.map((s) => this.#residents.pinSpace(tenant, s));
        const release = (): void => {
          for (const r of releases) r();
        };
        try {
          return { views: await this.#residents.ensureSpaces(tenant, spaces), release };
        } catch (error) {
          release();
          throw error;
        }
      },
    };
  }

  /** The tenant's lists, read from the store apart from commits (so every later commit reaches them) unless kept. */
  #listsOf(tenant: string): Promise<TenantLists> {
    const kept = this.#lists.get(tenant);
    if (kept) return Promise.resolve(kept);
    let loading = this.#listsLoading.get(tenant);
    if (!loading) {
      loading = this.#exclusive(wholeTenant(tenant), async () => {
        const lists = new TenantLists(tenant, await this.#graph.tenantLists(tenant));
        this.#lists.set(tenant, lists);
        return lists;
      }).finally(() => this.#listsLoading.delete(tenant));
      this.#listsLoading.set(tenant, loading);
    }
    return loading;
  }

  onCommit(listener: CommitListener): void {
    this.#listeners.push(listener);
  }

  /** Called after a tenant's rows were deleted (a derived index forgets the tenant). */
  onTenantDropped(listener: DropListener): void {
    this.#dropListeners.push(listener);
    // A deletion resumed on open may end before the search index starts listening.
    for (const tenant of this.#unheard)
      Promise.resolve(listener(tenant)).catch((error: unknown) => console.error(`forgetting deleted tenant ${tenant} failed:`, error));
  }

  /** One tenant's stored rows with `after` < tseq <= `upTo`, at most `limit` per table, each in tseq order. */
  tenantRows(tenant: string, after: number, upTo: number, limit: number): Promise<CommitGroup> {
    if (this.#drops.has(tenant)) return Promise.reject(new TenantDropping(tenant));
    return this.#graph.tenantRows(tenant, after, upTo, limit);
  }

  /** The tenant's highest tseq stored (0: none). */
  tenantLastTseq(tenant: string): Promise<number> {
    if (this.#drops.has(tenant)) return Promise.reject(new TenantDropping(tenant));
    return this.#graph.tenantLastTseq(tenant);
  }

  /**
   * A page of the whole tenant's node versions read from the store page by page, never loading the tenant
   * (list_memories without a space when the tenant's view is not resident: storage/read/list-by-pages.ts).
   */
  async listByPages(tenant: string, lens: LensInput, params: ListParams, signal?: AbortSignal): Promise<PagedList> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    const resolved = resolveLens(lens, this.now());
    await this.settled(resolved.asOf);
    const releases: (() => void)[] = [];
    const source = {
      nodePage: (q: Parameters<GraphStore['tenantNodePage']>[1]) => this.#graph.tenantNodePage(tenant, q),
      listCounts: (q: Parameters<GraphStore['listCounts']>[1]) => this.#graph.listCounts(tenant, q),
      // A page's spaces are pinned while that page is judged, not for the whole read, which may pass through
      // much of the tenant.
      viewOfIds: (ids: readonly string[]) => {
        for (const release of releases.splice(0)) release();
        return this.#viewOfIds(tenant, ids, releases);
      },
    };
    try {
      return await listByPages(source, tenant, resolved, this.now(), params, this.clock.latest(), signal);
    } finally {
      for (const release of releases) release();
    }
  }

  /** The tenant's view when resident, else the union of the views of the spaces holding `ids`, pinned until `releases` run. */
  async #viewOfIds(tenant: string, ids: readonly string[], releases: (() => void)[]): Promise<JudgeView> {
    if (this.#residents.has(tenant)) return this.load(tenant);
    return new UnionView(await this.#holdSpaces(tenant, await this.#spacesHolding(tenant, ids, [], true), releases));
  }

  /** The spaces holding any of `ids` (see #spacesOf), with `also`. */
  async #spacesHolding(tenant: string, ids: readonly string[], also: readonly string[] = [], forRead = false): Promise<Set<string>> {
    const spaces = new Set(also);
    if (ids.length > 0) for (const set of (await this.#spacesOf(tenant, ids, forRead)).values()) for (const s of set) spaces.add(s);
    return spaces;
  }

  /** Pins the views of `spaces` (their releases pushed to `releases`, run by the caller), then loads those not resident together. */
  async #holdSpaces(tenant: string, spaces: ReadonlySet<string>, releases: (() => void)[]): Promise<TenantView[]> {
    for (const s of spaces) releases.push(this.#residents.pinSpace(tenant, s));
    return this.#residents.ensureSpaces(tenant, [...spaces]);
  }

  /**
   * A number that changes when the tenant's rows change other than by importRows: on staging and again on
   * committing (or failing) a write of the tenant, and on dropping it. Equal on two calls: everything
   * stored for the tenant in between came through importRows, so an importer may trust what it stored.
   */
  tenantMark(tenant: string): number {
    return this.#marks.get(tenant) ?? 0;
  }

  #touch(tenant: string): void {
    this.#marks.set(tenant, (this.#marks.get(tenant) ?? 0) + 1);
  }

  /** The stored first-writer rows of these spaces. */
  spaceRows(names: readonly string[]): Promise<SpaceRow[]> {
    // A Space row in the write journal was staged by this process (the journal is copied in on open), so
    // spaces none of which were staged are read from the engine without first copying the journal in:
    // an import page naming a new space no longer waits for the copy of the pages before it.
    return this.#graph.spaceRows(
      names,
      names.every((n) => !this.#spacesStaged.has(n)),
    );
  }

  /**
   * Stores rows copied from another server through the commit path (journal or copy, durable when it
   * resolves, commit listeners told). The caller checked them against what the tenant holds.
   */
  async importRows(rows: CommitGroup): Promise<void> {
    this.#refuseDropping(rows);
    const size = tablesSize(rows);
    for (const link of await this.#importedHolds(rows)) rows.invalidationSpaces.push(link);
    return this.enqueue((stage) => stage.addImported(rows), size);
  }

  #refuseDropping(rows: CommitGroup): void {
    for (const t of [rows.batches, rows.nodes, rows.edges, rows.declarations, rows.verdicts, rows.invalidations, rows.spaces])
      for (const r of t) if (this.#drops.has(r.tenant)) throw new TenantDropping(r.tenant);
  }

  /**
   * The spaces imported invalidations are held by besides their own, as a write here places them (see
   * Overlay.spacesHolding): an invalidation by every space whose rows name its node (a version, an edge
   * touching it; stored or imported with it), and a stored one by a space an imported row brings its node
   * into. Read from the store before the commit: a tenant being copied here is not written here meanwhile
   * (its placement is elsewhere until the move ends).
   */
  async #importedHolds(rows: CommitGroup): Promise<CommitGroup['invalidationSpaces']> {
    const links: CommitGroup['invalidationSpaces'] = [];
    const tenants = new Set([
      ...rows.nodes.map((n) => n.tenant),
      ...rows.edges.map((e) => e.tenant),
      ...rows.invalidations.map((i) => i.tenant),
    ]);
    for (const tenant of tenants) {
      // Each id the page's rows name, with the spaces naming it.
      const named = new Map<string, Set<string>>();
      const name = (id: string, space: string): void => {
        let set = named.get(id);
        if (!set) named.set(id, (set = new Set()));
        set.add(space);
      };
      for (const n of rows.nodes) if (n.tenant === tenant) name(n.id, n.space);
      for (const e of rows.edges)
        if (e.tenant === tenant) {
          name(e.source_id, e.space);
          name(e.target_id, e.space);
        }
      const invalidations = rows.invalidations.filter((i) => i.tenant === tenant);
      const stored = await this.#graph.invalidationsOfIds(tenant, [...named.keys()]);
      const ids = [...new Set([...invalidations.map((i) => i.target_id), ...stored.map((i) => i.target_id)])];
      if (ids.length === 0) continue;
      const storedSpaces = await this.#graph.spacesOfIds(tenant, ids);
      for (const row of invalidations)
        for (const space of new Set([...(storedSpaces.get(row.target_id) ?? []), ...(named.get(row.target_id) ?? [])]))
          if (space !== row.space) links.push({ space, row });
      // A space whose stored rows name the id holds its stored invalidations already.
      for (const row of stored)
        for (const space of named.get(row.target_id) ?? [])
          if (space !== row.space && !storedSpaces.get(row.target_id)?.has(space)) links.push({ space, row });
    }
    return links;
  }

  /**
   * Deletes every row of `tenant` here (journal included) and forgets its read model and spaces; derived
   * indexes are told. Marked first, durably: from then on every read and write of the tenant is refused
   * (TenantDropping), and a deletion cut short resumes on the next open. The rows go in parts of
   * `dropPartRows`, each one transaction in the writer's turn, so other tenants' commits go in between
   * (a 136k-row tenant in one transaction held every commit of the server behind it). A second call while
   * one runs joins it; a call after a failed run goes on from where it stopped. Rows deleted per table.
   */
  dropTenant(tenant: string): Promise<Record<string, number>> {
    const running = this.#running.get(tenant);
    if (running) return running.finished;
    const drop: RunningDrop = { deleted: {}, parts: 0, finished: Promise.resolve({}) };
    drop.finished = this.#drop(tenant, drop).finally(() => this.#running.delete(tenant));
    this.#running.set(tenant, drop);
    return drop.finished;
  }

  /** How far the deletion of `tenant` under way has come; null when none is running. */
  dropProgress(tenant: string): DropProgress | null {
    const running = this.#running.get(tenant);
    return running ? { deleted: Object.values(running.deleted).reduce((a, b) => a + b, 0), parts: running.parts } : null;
  }

  async #drop(tenant: string, drop: RunningDrop): Promise<Record<string, number>> {
    this.#drops.begin(tenant);
    this.#touch(tenant);
    const forget = async (): Promise<void> =>
      this.#exclusive('all', async () => {
        this.#residents.drop(tenant);
        this.#lists.delete(tenant);
        this.#recent.drop(tenant);
        this.#known.drop(tenant);
        this.#held?.drop(tenant);
        this.#places?.drop(tenant);
        for (const [space, t] of this.#spacesStaged) if (t === tenant) this.#spacesStaged.delete(space);
        this.#spacesLooked.deleteWhere((_space, t) => t === tenant);
      });
    await forget();
    for (;;) {
      if (this.#closed) throw new Error(`the ledger closed while tenant ${tenant}'s rows were being deleted: it goes on at the next open`);
      // Each part asks for the writer's turn anew: a commit queued meanwhile goes first.
      const part = await this.#exclusive('all', () => this.#graph.deleteTenantPart(tenant, this.#dropPartRows));
      for (const [table, n] of Object.entries(part.deleted)) drop.deleted[table] = (drop.deleted[table] ?? 0) + n;
      drop.parts++;
      if (part.done) break;
    }
    await forget();
    if (this.#dropListeners.length === 0) this.#unheard.add(tenant);
    for (const listener of this.#dropListeners) await listener(tenant);
    this.#drops.end(tenant);
    this.#touch(tenant);
    return drop.deleted;
  }

  /**
   * Waits until no commit in flight could change an answer as of `asOf`: a read never sees a past
   * instant change under it because a write was half-way through its commit.
   */
  async settled(asOf: Micros): Promise<void> {
    while (this.#inflight && this.#inflight.minKnownAt <= asOf) await this.#inflight.done.catch(() => undefined);
  }

  /**
   * A place in the tenant's line of writes: a write reaches the queue only after those called before it
   * did, so concurrent requests are planned in call order (as when every write waited for one tenant
   * load), while their lookups and space loads overlap.
   */
  #turn(tenant: string): { ready: Promise<void>; done: () => void } {
    const ready = this.#turns.get(tenant) ?? Promise.resolve();
    let done!: () => void;
    const mine = new Promise<void>((r) => {
      done = r;
    });
    this.#turns.set(tenant, mine);
    void mine.then(() => {
      if (this.#turns.get(tenant) === mine) this.#turns.delete(tenant);
    });
    return { ready, done };
  }

  /**
   * Runs `job` against the committed rows it needs: the tenant's view when it is resident (as loaded for
   * reads without a space); otherwise the views of `space` and of every space holding one of `ids` (a
   * version of it, an edge touching it), looked up in the store's index by id, pinned until the job ends.
   * A commit between the lookup and the plan may bring one of the ids into another space: the plan then
   * adds that space's view if it is resident, or throws StaleLookup and is looked up again (after
   * LOOKUP_ATTEMPTS, the tenant is loaded). `job` must enqueue synchronously.
   */
  async #spacePlanned<T>(
    tenant: string,
    space: string | undefined,
    ids: readonly string[],
    job: (plan: SpacePlan | undefined) => Promise<T>,
  ): Promise<T> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    for (let attempt = 0; ; attempt++) {
      const turn = this.#turn(tenant);
      const releases: (() => void)[] = [];
      try {
        if (attempt >= LOOKUP_ATTEMPTS || this.#residents.has(tenant)) {
          releases.push(this.pin(tenant));
          this.#plans.tenant++;
          await this.load(tenant);
          await turn.ready;
          const queued = job(undefined);
          turn.done();
          return await queued;
        }
        this.#plans.spaces++;
        const since = this.#recent.count;
        const spaces = await this.#spacesHolding(tenant, ids, space === undefined ? [] : [space]);
        const view = new UnionView(await this.#holdSpaces(tenant, spaces, releases));
        const check = (): void => {
          const moved = this.#recent.spacesSince(since, tenant, ids);
          if (moved === null) throw new StaleLookup();
          for (const s of moved) {
            if (spaces.has(s)) continue;
            const resident = this.#residents.residentSpace(tenant, s);
            if (!resident) throw new StaleLookup();
            spaces.add(s);
            view.add(resident);
            this.#plans.widened++;
          }
        };
        await turn.ready;
        const queued = job({ view, check });
        turn.done();
        return await queued;
      } catch (error) {
        if (!(error instanceof StaleLookup)) throw error;
        this.#plans.stale++;
      } finally {
        turn.done();
        for (const release of releases) release();
      }
    }
  }

  /** Writes nodes and edges as one request: planned in the queue, acknowledged after commit. */
  write(tenant: string, input: WriteInput): Promise<WriteOutcome> {
    // The ids a plan reads: node ids (a node without one gets the id derived from its content and space,
    // worked out here too) and edge ends. Everything a plan asks is by id, so only the spaces holding these
    // ids are loaded: a write of new ids into a space whose view was evicted does not load it again.
    const ids = new Set<string>();
    for (const n of input.nodes) ids.add(n.id ?? derivedNodeId(nodeContentHash(input.space, n)));
    for (const e of input.edges) ids.add(e.source_id).add(e.target_id);
    return this.#spacePlanned(tenant, undefined, [...ids], (plan) => this.#write(tenant, input, plan));
  }

  #write(tenant: string, input: WriteInput, plan: SpacePlan | undefined): Promise<WriteOutcome> {
    return this.enqueue((stage) => {
      plan?.check();
      const planned = planWrite(tenant, input, stage.overlay(tenant, plan?.view), stage.capturedAt, stage);
      if (planned.outcome.batch) stage.addBatch(planned.outcome.batch);
      stage.addNodes(planned.nodes);
      stage.addEdges(planned.edges);
      stage.addInvalidationSpaces(planned.invalidationSpaces);
      if (planned.newIdents.length > 0) {
        const fresh = new Set(planned.newIdents);
        stage.noteFirstVersions(planned.nodes.filter((n) => fresh.has(n.id)).map((n) => n.seq));
      }
      return planned.outcome;
    }, input.nodes.length + input.edges.length);
  }

  /** Records the invalidation of a node (append-only), or answers the one already in force. */
  invalidate(tenant: string, input: InvalidateInput): Promise<InvalidateOutcome> {
    return this.#spacePlanned(tenant, input.space, [input.id], (plan) =>
      this.enqueue((stage) => {
        plan?.check();
        const overlay = stage.overlay(tenant, plan?.view);
        const planned = planInvalidation(tenant, input, overlay, stage.capturedAt, stage);
        if (planned.kind === 'written') {
          if (planned.batch) stage.addBatch(planned.batch);
          stage.addInvalidation(planned.invalidation);
          // It retracts the node's versions in every space: each space holding one, or an edge touching
          // the node, holds it too.
          const row = planned.invalidation;
          const spaces = overlay.spacesHolding(row.target_id);
          spaces.delete(row.space);
          stage.addInvalidationSpaces([...spaces].map((space) => ({ space, row })));
        }
        return planned;
      }),
    );
  }

  /**
   * Runs `run` inside the writer queue with its own capture instant and commits what it stages. The
   * function must be synchronous and decide from the committed views plus the stage's overlay; every
   * tenant it stages for must be resident and pinned until it resolves.
   */
  enqueue<T>(run: (stage: Stage) => T, size = 1): Promise<T> {
    if (this.#closed) return Promise.reject(new Error('ledger is closed'));
    return new Promise<T>((resolve, reject) => {
      this.#queue.push({ run, size, resolve, reject } as Job<unknown>);
      if (!this.#draining) void this.#drain();
    });
  }

  async #drain(): Promise<void> {
    this.#draining = true;
    try {
      while (this.#queue.length > 0) {
        const jobs: Job<unknown>[] = [];
        let rows = 0;
        while (this.#queue.length > 0 && rows < MAX_GROUP_ROWS) {
          const job = this.#queue.shift();
          if (!job) break;
          jobs.push(job);
          rows += job.size;
        }
        await this.#commitGroup(jobs);
      }
    } finally {
      this.#draining = false;
    }
  }

  async #commitGroup(jobs: Job<unknown>[]): Promise<void> {
    const group: CommitGroup = emptyGroup();
    const staged = new Map<string, StagedRows>();
    const results: { job: Job<unknown>; value: unknown }[] = [];
    let minKnownAt = Number.POSITIVE_INFINITY;
    // Tenants written here (not imported): their marks change now and again once the commit is decided.
    const written = new Set<string>();
    const touch = (tenant: string): void => {
      // A job queued before its tenant's deletion began is refused before it stages anything.
      if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
      if (written.has(tenant)) return;
      written.add(tenant);
      this.#touch(tenant);
    };
    for (const job of jobs) {
      const capturedAt = this.clock.next();
      minKnownAt = Math.min(minKnownAt, capturedAt);
      const stage: Stage = {
        capturedAt,
        overlay: (tenant, view) => {
          let rows = staged.get(tenant);
          if (!rows) staged.set(tenant, (rows = new StagedRows()));
          return new Overlay(view ?? this.view(tenant), rows);
        },
        nextSeq: () => ++this.#seq,
        addBatch: (row) => {
          touch(row.tenant);
          group.batches.push(row);
          minKnownAt = Math.min(minKnownAt, row.declared_captured_at);
        },
        addNodes: (rows) => {
          for (const r of rows) {
            touch(r.tenant);
            group.nodes.push(r);
          }
        },
        addEdges: (rows) => {
          for (const r of rows) {
            touch(r.tenant);
            group.edges.push(r);
          }
        },
        addDeclaration: (row) => {
          touch(row.tenant);
          group.declarations.push(row);
        },
        addVerdict: (row) => {
          touch(row.tenant);
          group.verdicts.push(row);
          minKnownAt = Math.min(minKnownAt, row.known_at);
        },
        addInvalidation: (row) => {
          touch(row.tenant);
          group.invalidations.push(row);
          minKnownAt = Math.min(minKnownAt, row.known_at);
        },
        addInvalidationSpaces: (links) => {
          for (const l of links) group.invalidationSpaces.push(l);
        },
        noteFirstVersions: (seqs) => {
          const set = (group.firstVersions ??= new Set<number>());
          for (const seq of seqs) set.add(seq);
        },
        addImported: (rows) => {
          // Queued before its tenant's deletion began, run after: refused whole, as a write would be.
          this.#refuseDropping(rows);
          // Local numbers in tseq order (the order given), so seq and tseq order the tenant's rows alike.
          const numbered = [...rows.nodes, ...rows.edges, ...rows.declarations, ...rows.verdicts, ...rows.invalidations];
          numbered.sort((a, b) => a.tseq - b.tseq);
          for (const r of numbered) r.seq = ++this.#seq;
          for (const r of [...rows.nodes, ...rows.edges]) this.#imported.add(r);
          // Row by row, not push(...rows): a page of ~130k rows passes V8's argument limit.
          for (const r of rows.batches) group.batches.push(r);
          for (const r of rows.nodes) group.nodes.push(r);
          for (const r of rows.edges) group.edges.push(r);
          for (const r of rows.declarations) group.declarations.push(r);
          for (const r of rows.verdicts) group.verdicts.push(r);
          for (const r of rows.invalidations) group.invalidations.push(r);
          for (const r of rows.spaces) group.spaces.push(r);
          for (const l of rows.invalidationSpaces) group.invalidationSpaces.push(l);
          minKnownAt = Math.min(minKnownAt, earliestKnown(rows));
          // Later rows of the tenant written here get tseq (= seq) and captured_at above every imported one.
          this.#seq = Math.max(this.#seq, maxTseq(rows));
          this.clock.advance(latestInstant(rows));
        },
      };
      try {
        results.push({ job, value: job.run(stage) });
      } catch (error) {
        job.reject(error);
      }
    }
    let finish!: () => void;
    const done = new Promise<void>((r) => {
      finish = r;
    });
    this.#inflight = { minKnownAt, done };
    let newSpaces: string[] = [];
    let failure: { error: unknown } | null = null;
    try {
      newSpaces = this.#stageSpaces(group);
      // Apart from loads of what it touches: a load sees this group wholly or not at all, and a view it made gets it.
      await this.#exclusive(groupScope(group), async () => {
        await this.#graph.commit(group);
        this.#apply(group);
        this.#committedSeq = Math.max(this.#committedSeq ?? 0, maxSeq(group));
      });
    } catch (error) {
      // The numbers staged here are never given out again, even though the group was refused: a commit
      // can fail after its transaction reached the engine's WAL (Kuzu 0.11.3 reports a failed forced
      // checkpoint, such as "buffer pool is full", as a failed COMMIT), so those numbers may be stored,
      // and a later journal copy retrying would skip rows reusing them as "already stored".
      // The spaces it was first to write are asked of the store again next time.
      for (const space of newSpaces) this.#spacesStaged.delete(space);
      // The filters of held ids may only ever hold too much: its rows count as held, should they be stored.
      this.#held?.commit(group);
      failure = { error };
    }
    for (const tenant of written) this.#touch(tenant);
    this.#inflight = null;
    finish();
    if (failure) {
      for (const { job } of results) job.reject(failure.error);
      return;
    }
    for (const { job, value } of results) job.resolve(value);
    // Every listener is told before the writers' continuations run (all called in this turn, then awaited
    // together): one listener's slow work, such as placement reading a space's first writer from the store,
    // must not hold back the search index from learning of an acknowledged write a search may ask for next.
    const told = this.#listeners.map(async (listener) => {
      try {
        await listener(group);
      } catch (error) {
        // A derived index failing must never undo an acknowledged write; it catches up on start-up.
        console.error('commit listener failed:', error);
      }
    });
    await Promise.all(told);
  }

  #apply(group: CommitGroup): void {
    this.#residents.apply(group);
    if (this.#lists.size > 0) for (const lists of this.#lists.values()) lists.apply(group);
    this.#recent.commit(group);
    this.#known.commit(group);
    this.#held?.commit(group);
    this.#places?.commit(group);
  }

  /**
   * The spaces holding each of the tenant's ids: from those known here, the rest from the store's index
   * (remembered with what commits brought in while the lookup ran, so the answer kept is current). For a
   * read (`forRead`), the tenant's table of ids' places answers first: it may answer too many spaces for
   * an id never written, which a read only loads in vain (see id-places.ts), and which a write's plan must not.
   */
  async #spacesOf(tenant: string, ids: readonly string[], forRead = false): Promise<Map<string, Set<string>>> {
    const out = new Map<string, Set<string>>();
    const missing: string[] = [];
    for (const id of ids) {
      // The filter first: an id it calls absent is in no space whatever the known ids say (a known id in a
      // space was committed, so the filter holds it), and it answers without making the id's key text;
      // the known ids' lookup by that text was most of a bulk request's answers here (its ids are new).
      if (this.#held?.idAbsent(tenant, id)) {
        // In no space: no commit so far named it (every commit is in the filter once applied), and one
        // landing from now on is caught by the plan's check, as after a lookup.
        out.set(id, new Set());
        // Kept for a small write's ids (answered if the tenant's filter is forgotten); a bulk request's
        // would only churn the known ids (~11 ms a 1,000-row request in a profile of imports).
        if (ids.length <= REMEMBER_ABSENT_MAX) this.#known.remember(tenant, id, new Set());
        this.#plans.absent++;
        continue;
      }
      const placed = forRead ? this.#places?.spacesOf(tenant, id) : undefined;
      if (placed) {
        out.set(id, placed);
        continue;
      }
      const known = this.#known.get(tenant, id);
      if (known) out.set(id, known);
      else missing.push(id);
    }
    if (missing.length === 0) return out;
    this.#plans.lookedUp += missing.length;
    const since = this.#recent.count;
    const asked = performance.now();
    const found = await this.#graph.spacesHolding(tenant, missing);
    if (forRead) this.#places?.lookedUp(tenant, performance.now() - asked);
    const current = this.#recent.count === since;
    for (const id of missing) {
      const spaces = found.get(id) ?? new Set<string>();
      out.set(id, spaces);
      // Kept with what commits since the lookup brought in (when the ring still reaches back), so the
      // entry is current; commits from now on update it.
      const moved = current ? new Set<string>() : this.#recent.spacesSince(since, tenant, [id]);
      if (moved) this.#known.remember(tenant, id, new Set([...spaces, ...moved]));
    }
    return out;
  }

  /**
   * The tenant's spaces holding rows known at `asOf`, counted in the graph store once commits in flight that
   * could change the counts have landed: a whole tenant's `list_spaces` never loads its rows.
   */
  async spaceCounts(tenant: string, asOf: Micros): Promise<SpaceCounts[]> {
    if (this.#drops.has(tenant)) throw new TenantDropping(tenant);
    await this.settled(asOf);
    return this.#graph.spaceCounts(tenant, asOf);
  }

  async storeCounts(): Promise<Record<string, number>> {
    return this.#graph.counts();
  }

  /** Finishes queued writes, then closes the store. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    // A deletion under way stops after its current part (and resumes at the next open).
    for (const drop of this.#running.values()) await drop.finished.catch(() => undefined);
    while (this.#draining || this.#queue.length > 0) await new Promise((r) => setTimeout(r, 5));
    await this.#saveBuilt();
    await this.#graph.close();
  }

  /**
   * Saves the filters of held ids and the tables of ids' places built, marked with the store's latest row,
   * for the next open (held-keys-file.ts, id-places-file.ts).
   */
  async #saveBuilt(): Promise<void> {
    // A file still being taken back would be removed after this saves its successor.
    await this.savedTaken();
    const filters = this.#held?.saved() ?? [];
    const places = this.#places?.saved() ?? [];
    if (filters.length === 0 && places.length === 0) return;
    // Only caches: when saving fails, the next open reads them from the store instead. Reading the mark
    // copies the journal into the store first, which may fail too (the close goes on; the journal is kept).
    let mark: StoreMark;
    try {
      mark = await this.#graph.lastWritten();
    } catch (error) {
      console.error("ids held by tenants and ids' places: not saved for the next start, the store's latest row unread:", error);
      return;
    }
    try {
      if (filters.length > 0) saveHeldKeys(join(this.dataDir, HELD_KEYS_FILE), mark, filters);
    } catch (error) {
      console.error('ids held by tenants: saving their filters for the next start failed:', error);
    }
    try {
      if (places.length > 0) saveIdPlaces(join(this.dataDir, ID_PLACES_FILE), mark, places);
    } catch (error) {
      console.error("ids' places: saving the tables for the next start failed:", error);
    }
  }

  /** Filters of held ids built from the store and taken back from the last close (tests). */
  heldKeysCounts(): { builds: number; restored: number } {
    return { builds: this.#held?.builds ?? 0, restored: this.#held?.restored ?? 0 };
  }

  /** Resolves once what the last close saved (filters of held ids, tables of ids' places) is taken back, or found stale. */
  async savedTaken(): Promise<void> {
    await Promise.all([this.#held?.restoreEnded(), this.#places?.restoreEnded()]);
  }
}

/** SVC_DROP_PART_ROWS, or DROP_PART_ROWS. */
function dropPartRows(env: NodeJS.ProcessEnv = process.env): number {
  return envWholeNumber(env, 'SVC_DROP_PART_ROWS', DROP_PART_ROWS, 1, 'rows');
}
