// Which read models are in memory: whole tenants (for reads without a space, and for writes) and single
// spaces of a tenant (for reads confined to one space). A view is built from the graph store the first
// time it is used (not at start-up), kept while in use, and evicted least-recently-used when the views
// held exceed the memory budget, so memory and start-up follow the working set instead of the whole
// ledger. A space's view holds its own rows, the invalidations of the ids they name and the tenant's batches,
// declarations and verdicts (kept once per tenant while any of its views is resident, and copied into
// each); a tenant's rules view holds only the latter (what declare_fact and a verdict without a space
// check against). The graph store stays the source of truth: an evicted view is simply loaded again.
import { envMegabytes } from '../env-megabytes.ts';
import { identKey, type CommitGroup, type LoadedLedger } from '../commit-group.ts';
import { TenantView } from './tenant-view.ts';
import { ReloadWatch } from '../reload-watch.ts';
import { spacesOf, wholeTenant, type GateScope } from '../log/scoped-gate.ts';

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

export function fill(view: TenantView, rows: Omit<LoadedLedger, 'spaces' | 'invalidationSpaces'>): void {
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

/** What loads the view of one space, and a tenant's rows every view of it carries. */
export interface SpaceLoaders {
  space(tenant: string, space: string): Promise<SpaceRows>;
  /** The rows of several spaces read together, each as `space` reads it (ensureSpaces); without it, one by one. */
  spaces?(tenant: string, spaces: readonly string[]): Promise<Map<string, SpaceRows>>;
  tenantWide(tenant: string): Promise<TenantWide>;
}

export type TenantWide = Pick<LoadedLedger, 'batches' | 'declarations' | 'verdicts'>;

/** A space's own rows in its view: its node and edge rows and the invalidations it holds. */
export type SpaceRows = Pick<LoadedLedger, 'nodes' | 'edges' | 'invalidations'>;

/** Which view of a tenant: the whole tenant's, one space's, or its rules view (no node, edge or invalidation). */
type Scope = { space: string } | 'tenant' | 'rules';

interface Entry {
  tenant: string;
  /** Undefined for the view of the whole tenant and for its rules view. */
  space: string | undefined;
  rules: boolean;
  view: TenantView;
}

/** The resident key of a tenant's view (no space), of one of its spaces, or of its rules view. */
const keyOf = (tenant: string, space?: string): string => (space === undefined ? tenant : `\u001e${identKey(tenant, space)}`);
const rulesKey = (tenant: string): string => `\u001d${tenant}`;
const keyOfScope = (tenant: string, scope: Scope): string =>
  scope === 'tenant' ? keyOf(tenant) : scope === 'rules' ? rulesKey(tenant) : keyOf(tenant, scope.space);

const describe = (e: Pick<Entry, 'tenant' | 'space' | 'rules'>): string =>
  e.rules
    ? `rules of tenant ${JSON.stringify(e.tenant)}`
    : e.space === undefined
      ? `tenant ${JSON.stringify(e.tenant)}`
      : `space ${JSON.stringify(e.space)} of tenant ${JSON.stringify(e.tenant)}`;

export class ResidentViews {
  /** Resident views, least recently used first (a Map keeps insertion order; a use re-inserts). */
  readonly #views = new Map<string, Entry>();
  /** Keys of each tenant's resident views. */
  readonly #byTenant = new Map<string, Set<string>>();
  /** Each tenant's batches, declarations and verdicts, while any view of it is resident. */
  readonly #wide = new Map<string, TenantWide>();
  readonly #loading = new Map<string, Promise<TenantView>>();
  readonly #pins = new Map<string, number>();
  #evictions = 0;
  /** Views loaded again soon after their eviction: the views in use do not fit, and each use waits for a load. */
  readonly #reloadWatch = new ReloadWatch(() => this.clock());
  #reloads = 0;
  /** The last eviction could not bring the views under the budget (pinned or kept views). */
  #overBudget = false;
  /**
   * The resident views' bytes, exact after each eviction and raised by every row a commit adds since (never
   * below the sum): a commit sums every view's size only once the views may be over the budget. Summing
   * them after each commit took 3.7% of the main thread's CPU samples (perf, 2,000 users × 150 rows, mixed load).
   */
  #bytes = 0;

  /**
   * `load` reads a tenant's rows, `loaders` one space's; `exclusive` runs a load apart from the commits
   * touching what it reads (`scope`), so it sees each such group wholly or not at all and every later one is
   * applied to the view it made.
   */
  constructor(
    private readonly load: (tenant: string) => Promise<LoadedLedger>,
    private readonly budgetBytes: number,
    private readonly exclusive: <T>(scope: GateScope, fn: () => Promise<T>) => Promise<T>,
    private readonly warn: (message: string) => void = (m) => console.error(m),
    private readonly clock: () => number = () => performance.now(),
    private readonly loaders?: SpaceLoaders,
  ) {}

  /** The tenant's view; it must be resident (loaded by `ensure`, and pinned while it is used). */
  get(tenant: string): TenantView {
    const v = this.#views.get(keyOf(tenant));
    if (!v) throw new Error(`the read model of tenant ${JSON.stringify(tenant)} is not loaded`);
    return v.view;
  }

  /** The view of one space if it is resident now (every commit since it was loaded applied to it), else undefined. */
  residentSpace(tenant: string, space: string): TenantView | undefined {
    return this.loaders ? this.#views.get(keyOf(tenant, space))?.view : undefined;
  }

  /** Whether the tenant's whole view is resident now. */
  has(tenant: string): boolean {
    return this.#views.has(keyOf(tenant));
  }

  /** Loads the tenant's view unless it is resident; marks it as just used. */
  ensure(tenant: string): Promise<TenantView> {
    return this.#ensure(tenant, 'tenant');
  }

  /**
   * Loads the tenant's rules view unless it is resident: its batches, declarations and verdicts only (one
   * query of each table, or none while another view of the tenant is resident); marks it as just used.
   * Without space loaders (a test's) it is the tenant's view.
   */
  ensureRules(tenant: string): Promise<TenantView> {
    return this.#ensure(tenant, this.loaders ? 'rules' : 'tenant');
  }

  /**
   * Loads the view of one space of the tenant unless it is resident; marks it as just used. Without space
   * loaders (a test's) it is the tenant's view.
   */
  ensureSpace(tenant: string, space: string): Promise<TenantView> {
    return this.#ensure(tenant, this.loaders ? { space } : 'tenant');
  }

  async #ensure(tenant: string, scope: Scope): Promise<TenantView> {
    const key = keyOfScope(tenant, scope);
    const space = typeof scope === 'object' ? scope.space : undefined;
    const rules = scope === 'rules';
    const resident = this.#views.get(key);
    if (resident) {
      this.#views.delete(key);
      this.#views.set(key, resident);
      // Views grow only by loads and commits, each followed by an eviction: a use needs one only when
      // the last left the views over budget (what was pinned then may be free now). Summing every
      // resident view's size on each use cost ~2% of a warm search's thread with 200 views.
      if (this.#overBudget) this.#evict(key);
      return resident.view;
    }
    let loading = this.#loading.get(key);
    if (!loading) {
      this.#noteReload(key, { tenant, space, rules });
      // A space's view reads the tenant's batches, declarations and verdicts besides its own rows: a commit
      // of one of those touches the whole tenant's scope, so it is kept apart from this load too.
      loading = this.exclusive(space === undefined ? wholeTenant(tenant) : spacesOf(tenant, [space]), async () => {
        const view = new TenantView(tenant, space);
        if (scope === 'tenant') {
          const rows = await this.load(tenant);
          fill(view, rows);
          this.#wide.set(tenant, { batches: [...rows.batches], declarations: [...rows.declarations], verdicts: [...rows.verdicts] });
        } else {
          const wide = await this.#wideOf(tenant);
          // Cut from the tenant's view when it is resident (a writer's tenant is): the same rows without a
          // read of the store, which would first wait for the write journal's copy (seconds after a bulk fill).
          const whole = this.#views.get(keyOf(tenant))?.view;
          const own =
            space === undefined
              ? { nodes: [], edges: [], invalidations: [] }
              : whole
                ? whole.rowsOfSpace(space)
                : await this.loaders!.space(tenant, space);
          this.#wide.set(tenant, wide);
          fill(view, { ...wide, ...own });
        }
        this.#resident(key, { tenant, space, rules, view });
        return view;
      }).finally(() => this.#loading.delete(key));
      this.#loading.set(key, loading);
    }
    const view = await loading;
    this.#evict(key);
    return view;
  }

  /** The tenant's batches, declarations and verdicts: kept while a view of it is resident, else read (a copy to grow). */
  async #wideOf(tenant: string): Promise<TenantWide> {
    const kept = this.#wide.get(tenant);
    if (kept) return kept;
    const wide = await this.loaders!.tenantWide(tenant);
    return { batches: [...wide.batches], declarations: [...wide.declarations], verdicts: [...wide.verdicts] };
  }

  /** Makes a loaded view resident. Called before the gate opens: every commit after its load is applied to it. */
  #resident(key: string, entry: Entry): void {
    this.#views.set(key, entry);
    this.#bytes += bytesOf(entry.view);
    let keys = this.#byTenant.get(entry.tenant);
    if (!keys) this.#byTenant.set(entry.tenant, (keys = new Set()));
    keys.add(key);
  }

  /**
   * ensureSpace for several spaces of the tenant, in their order: those resident are marked as just used,
   * those being loaded awaited, and the rest loaded together (one read of the store for all of them when
   * the loaders read several at once), each view as ensureSpace would make it. A caller keeping them all
   * pins them first: the eviction after the load keeps pinned views, as after each single load.
   */
  async ensureSpaces(tenant: string, spaces: readonly string[]): Promise<TenantView[]> {
    const loaders = this.loaders;
    if (!loaders?.spaces || spaces.length <= 1) {
      const views: TenantView[] = [];
      for (const s of spaces) views.push(await this.ensureSpace(tenant, s));
      return views;
    }
    const names = [...new Set(spaces)];
    const got = new Map<string, TenantView | Promise<TenantView>>();
    const cold: string[] = [];
    for (const space of names) {
      const key = keyOf(tenant, space);
      if (this.#views.has(key) || this.#loading.has(key)) got.set(space, this.#ensure(tenant, { space }));
      else cold.push(space);
    }
    if (cold.length === 1) got.set(cold[0]!, this.#ensure(tenant, { space: cold[0]! }));
    else if (cold.length > 1) {
      for (const space of cold) this.#noteReload(keyOf(tenant, space), { tenant, space, rules: false });
      const batch = this.exclusive(spacesOf(tenant, cold), async () => {
        const wide = await this.#wideOf(tenant);
        const whole = this.#views.get(keyOf(tenant))?.view;
        const rows = whole ? new Map(cold.map((s) => [s, whole.rowsOfSpace(s)])) : await loaders.spaces!(tenant, cold);
        this.#wide.set(tenant, wide);
        const views = new Map<string, TenantView>();
        for (const space of cold) {
          const view = new TenantView(tenant, space);
          fill(view, { ...wide, ...(rows.get(space) ?? { nodes: [], edges: [], invalidations: [] }) });
          this.#resident(keyOf(tenant, space), { tenant, space, rules: false, view });
          views.set(space, view);
        }
        return views;
      });
      for (const space of cold) {
        const key = keyOf(tenant, space);
        const one = batch.then((views) => views.get(space)!).finally(() => this.#loading.delete(key));
        // Awaited below; a rejection reaches the caller there, so this copy of it is not left unhandled.
        one.catch(() => undefined);
        this.#loading.set(key, one);
        got.set(space, one);
      }
      await batch.catch(() => undefined);
      for (const space of cold) this.#evict(keyOf(tenant, space));
    }
    const views: TenantView[] = [];
    for (const space of spaces) views.push(await got.get(space)!);
    return views;
  }

  /** Keeps the tenant's view from eviction until the returned function is called. */
  pin(tenant: string): () => void {
    return this.#pin(keyOf(tenant));
  }

  /** Keeps the view of one space from eviction until the returned function is called. */
  pinSpace(tenant: string, space: string): () => void {
    return this.#pin(keyOf(tenant, this.loaders ? space : undefined));
  }

  /** Keeps the tenant's rules view from eviction until the returned function is called. */
  pinRules(tenant: string): () => void {
    return this.#pin(this.loaders ? rulesKey(tenant) : keyOf(tenant));
  }

  #pin(key: string): () => void {
    this.#pins.set(key, (this.#pins.get(key) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const n = (this.#pins.get(key) ?? 1) - 1;
      if (n <= 0) this.#pins.delete(key);
      else this.#pins.set(key, n);
    };
  }

  /**
   * A committed group's rows into the resident views; a view not resident reads them from the store later.
   * The views reached are the group's gate scope (`groupScope` in storage/log/scoped-gate.ts).
   */
  apply(group: Readonly<CommitGroup>): void {
    // Views reached, each counted as one row more (an upper bound of what bytesOf adds).
    let reached = 0;
    const counted = (v: TenantView | undefined): TenantView | undefined => {
      if (v) reached++;
      return v;
    };
    const whole = (tenant: string): TenantView | undefined => counted(this.#views.get(keyOf(tenant))?.view);
    const ofSpace = (tenant: string, space: string): TenantView | undefined =>
      this.loaders ? counted(this.#views.get(keyOf(tenant, space))?.view) : undefined;
    // Batches and declarations are not counted in a view's bytes (bytesOf); verdicts are.
    const every = (tenant: string, add: (v: TenantView) => void, counts = false): void => {
      for (const key of this.#byTenant.get(tenant) ?? []) {
        const e = this.#views.get(key);
        if (e) add(counts ? counted(e.view)! : e.view);
      }
    };
    for (const b of group.batches) {
      every(b.tenant, (v) => v.addBatch(b));
      this.#wide.get(b.tenant)?.batches.push(b);
    }
    for (const n of group.nodes) {
      whole(n.tenant)?.addNode(n);
      ofSpace(n.tenant, n.space)?.addNode(n);
    }
    for (const e of group.edges) {
      whole(e.tenant)?.addEdge(e);
      ofSpace(e.tenant, e.space)?.addEdge(e);
    }
    for (const d of group.declarations) {
      every(d.tenant, (v) => v.addDeclaration(d));
      this.#wide.get(d.tenant)?.declarations.push(d);
    }
    for (const v of group.verdicts) {
      every(v.tenant, (view) => view.addVerdict(v), true);
      this.#wide.get(v.tenant)?.verdicts.push(v);
    }
    // An invalidation goes to its own space's view and to those of the other spaces holding its node
    // (once each); an older one newly held by a space goes to that space's view.
    const held = new Set<string>();
    const hold = (i: CommitGroup['invalidations'][number], space: string): void => {
      const k = `${identKey(i.tenant, space)}\u001f${i.seq}`;
      if (held.has(k)) return;
      held.add(k);
      ofSpace(i.tenant, space)?.addInvalidation(i);
    };
    for (const i of group.invalidations) {
      whole(i.tenant)?.addInvalidation(i);
      hold(i, i.space);
    }
    for (const l of group.invalidationSpaces) hold(l.row, l.space);
    this.#bytes += reached * ROW_BYTES;
    if (this.#overBudget || this.#bytes > this.budgetBytes) this.#evict('');
  }

  /** Forgets every view of the tenant (its rows were deleted); a later use loads it from the store again. */
  drop(tenant: string): void {
    for (const key of this.#byTenant.get(tenant) ?? []) this.#views.delete(key);
    this.#byTenant.delete(tenant);
    this.#wide.delete(tenant);
  }

  /** Tenants whose whole view is resident. */
  tenants(): string[] {
    return [...this.#views.values()].filter((e) => e.space === undefined && !e.rules).map((e) => e.tenant);
  }

  /** Spaces whose own view is resident, as [tenant, space]. */
  spaces(): [string, string][] {
    return [...this.#views.values()].filter((e) => e.space !== undefined).map((e) => [e.tenant, e.space!]);
  }

  /** Rules views are counted apart (`rules`): a tenant whose rules alone are resident has not been loaded. */
  stats(): { tenants: number; spaces: number; rules: number; bytes: number; budget: number; evictions: number; reloads: number } {
    let bytes = 0,
      spaces = 0,
      rules = 0;
    for (const e of this.#views.values()) {
      bytes += bytesOf(e.view);
      if (e.space !== undefined) spaces++;
      if (e.rules) rules++;
    }
    return {
      tenants: this.#views.size - spaces - rules,
      spaces,
      rules,
      bytes,
      budget: this.budgetBytes,
      evictions: this.#evictions,
      reloads: this.#reloads,
    };
  }

  #noteReload(key: string, what: Pick<Entry, 'tenant' | 'space' | 'rules'>): void {
    const reload = this.#reloadWatch.loaded(key);
    if (!reload) return;
    this.#reloads++;
    if (!reload.say) return;
    const { tenants, spaces, bytes, budget } = this.stats();
    const mb = (b: number): number => Math.round(b / 1048576);
    this.warn(
      `read models: ${describe(what)} is loaded again ${(reload.afterMs / 1000).toFixed(1)} s after its eviction ` +
        `(${this.#reloads} such reloads so far). The views in use do not fit SVC_MEMORY_MB=${mb(budget)} ` +
        `(${tenants} tenants and ${spaces} spaces resident, ~${mb(bytes)} MB): each use of an evicted one waits for a load. Raise SVC_MEMORY_MB.`,
    );
  }

  /** Drops least recently used views, never a pinned one nor `keep`, until the rest fit the budget. */
  #evict(keep: string): void {
    let bytes = 0;
    for (const e of this.#views.values()) bytes += bytesOf(e.view);
    this.#overBudget = bytes > this.budgetBytes;
    this.#bytes = bytes;
    for (const [key, entry] of this.#views) {
      if (bytes <= this.budgetBytes) {
        this.#overBudget = false;
        return;
      }
      if (key === keep || this.#pins.has(key)) continue;
      this.#views.delete(key);
      const keys = this.#byTenant.get(entry.tenant);
      keys?.delete(key);
      if (keys?.size === 0) {
        this.#byTenant.delete(entry.tenant);
        this.#wide.delete(entry.tenant);
      }
      this.#evictions++;
      this.#reloadWatch.evicted(key);
      bytes -= bytesOf(entry.view);
      this.#bytes = bytes;
    }
  }
}
