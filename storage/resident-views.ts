// Which tenants' read models are in memory. A tenant's view is built from the graph store the first time
// the tenant is used (not at start-up), kept while in use, and evicted least-recently-used when the views
// held exceed the memory budget, so memory and start-up follow the working set instead of the whole
// ledger. The graph store stays the source of truth: an evicted tenant is simply loaded again.
import { envMegabytes } from './env-megabytes.ts';
import type { CommitGroup, LoadedLedger } from './kuzu-graph.ts';
import { TenantView } from './tenant-view.ts';

/**
 * Heap a row costs in a view, measured: 100k nodes and 100k edges of bench rows held ~150 MB (objects,
 * their strings and the view's indexes), about 750 bytes a row.
 */
export const ROW_BYTES = 750;

/** Read-model budget when SVC_MEMORY_MB is unset. */
export const MEMORY_MB_DEFAULT = 256;

export function memoryBudgetMb(env: NodeJS.ProcessEnv = process.env): number {
  return envMegabytes(env, 'SVC_MEMORY_MB', MEMORY_MB_DEFAULT, 1);
}

export function fill(view: TenantView, rows: LoadedLedger): void {
  for (const b of rows.batches) view.addBatch(b);
  for (const n of rows.nodes) view.addNode(n);
  for (const e of rows.edges) view.addEdge(e);
  for (const d of rows.declarations) view.addDeclaration(d);
  for (const v of rows.verdicts) view.addVerdict(v);
  for (const i of rows.invalidations) view.addInvalidation(i);
}

const bytesOf = (v: TenantView): number => {
  const s = v.size();
  return (s.nodes + s.edges + s.verdicts + s.invalidations) * ROW_BYTES;
};

/**
 * A tenant loaded again within this long of its eviction counts as a reload: the tenants in use do not
 * fit the budget, and every write to one of them waits for a load. The log says so once per window.
 */
export const RELOAD_WINDOW_MS = 60_000;

export class ResidentViews {
  /** Resident views, least recently used first (a Map keeps insertion order; a use re-inserts). */
  readonly #views = new Map<string, TenantView>();
  readonly #loading = new Map<string, Promise<TenantView>>();
  readonly #pins = new Map<string, number>();
  #evictions = 0;
  /** When each tenant was last evicted, for as long as a load soon after would count as a reload. */
  readonly #evictedAt = new Map<string, number>();
  #reloads = 0;
  #warnedAt = -Infinity;

  /**
   * `load` reads a tenant's rows; `exclusive` runs it apart from commits, so a load sees each commit
   * group wholly or not at all and every later group is applied to the view it made.
   */
  constructor(
    private readonly load: (tenant: string) => Promise<LoadedLedger>,
    private readonly budgetBytes: number,
    private readonly exclusive: <T>(fn: () => Promise<T>) => Promise<T>,
    private readonly warn: (message: string) => void = (m) => console.error(m),
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The tenant's view; it must be resident (loaded by `ensure`, and pinned while it is used). */
  get(tenant: string): TenantView {
    const v = this.#views.get(tenant);
    if (!v) throw new Error(`the read model of tenant ${JSON.stringify(tenant)} is not loaded`);
    return v;
  }

  /** Loads the tenant's view unless it is resident; marks it as just used. */
  async ensure(tenant: string): Promise<TenantView> {
    const resident = this.#views.get(tenant);
    if (resident) {
      this.#views.delete(tenant);
      this.#views.set(tenant, resident);
      this.#evict(tenant);
      return resident;
    }
    let loading = this.#loading.get(tenant);
    if (!loading) {
      this.#noteReload(tenant);
      loading = this.exclusive(async () => {
        const view = new TenantView(tenant);
        fill(view, await this.load(tenant));
        // Resident before the gate opens: every commit after this load is applied to it.
        this.#views.set(tenant, view);
        return view;
      }).finally(() => this.#loading.delete(tenant));
      this.#loading.set(tenant, loading);
    }
    const view = await loading;
    this.#evict(tenant);
    return view;
  }

  /** Keeps the tenant from eviction until the returned function is called. */
  pin(tenant: string): () => void {
    this.#pins.set(tenant, (this.#pins.get(tenant) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#pins.get(tenant) ?? 1) - 1;
      if (n <= 0) this.#pins.delete(tenant);
      else this.#pins.set(tenant, n);
    };
  }

  /** A committed group's rows into the resident views; a tenant not resident reads them from the store later. */
  apply(group: Readonly<CommitGroup>): void {
    const at = (tenant: string): TenantView | undefined => this.#views.get(tenant);
    for (const b of group.batches) at(b.tenant)?.addBatch(b);
    for (const n of group.nodes) at(n.tenant)?.addNode(n);
    for (const e of group.edges) at(e.tenant)?.addEdge(e);
    for (const d of group.declarations) at(d.tenant)?.addDeclaration(d);
    for (const v of group.verdicts) at(v.tenant)?.addVerdict(v);
    for (const i of group.invalidations) at(i.tenant)?.addInvalidation(i);
    this.#evict('');
  }

  /** Forgets the tenant's view (its rows were deleted); a later use loads it from the store again. */
  drop(tenant: string): void {
    this.#views.delete(tenant);
  }

  tenants(): string[] {
    return [...this.#views.keys()];
  }

  stats(): { tenants: number; bytes: number; budget: number; evictions: number; reloads: number } {
    let bytes = 0;
    for (const v of this.#views.values()) bytes += bytesOf(v);
    return { tenants: this.#views.size, bytes, budget: this.budgetBytes, evictions: this.#evictions, reloads: this.#reloads };
  }

  #noteReload(tenant: string): void {
    const now = this.clock();
    for (const [t, at] of this.#evictedAt) if (now - at > RELOAD_WINDOW_MS) this.#evictedAt.delete(t);
    const evicted = this.#evictedAt.get(tenant);
    if (evicted === undefined) return;
    this.#evictedAt.delete(tenant);
    this.#reloads++;
    if (now - this.#warnedAt < RELOAD_WINDOW_MS) return;
    this.#warnedAt = now;
    const { tenants, bytes, budget } = this.stats();
    const mb = (b: number): number => Math.round(b / 1048576);
    this.warn(
      `read models: tenant ${JSON.stringify(tenant)} is loaded again ${((now - evicted) / 1000).toFixed(1)} s after its eviction ` +
        `(${this.#reloads} such reloads so far). The tenants in use do not fit SVC_MEMORY_MB=${mb(budget)} ` +
        `(${tenants} resident, ~${mb(bytes)} MB): each use of an evicted one waits for a load. Raise SVC_MEMORY_MB.`,
    );
  }

  /** Drops least recently used views, never a pinned one nor `keep`, until the rest fit the budget. */
  #evict(keep: string): void {
    let bytes = 0;
    for (const v of this.#views.values()) bytes += bytesOf(v);
    for (const [tenant, view] of this.#views) {
      if (bytes <= this.budgetBytes) return;
      if (tenant === keep || this.#pins.has(tenant)) continue;
      this.#views.delete(tenant);
      this.#evictions++;
      this.#evictedAt.set(tenant, this.clock());
      bytes -= bytesOf(view);
    }
  }
}
