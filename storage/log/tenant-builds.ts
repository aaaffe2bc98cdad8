// Structures built per tenant from one read of the store and then kept exact by every commit (the filter of
// held ids, the places of ids): their common life. A build is registered before its read starts, so a
// commit applied from then on is held back as pending and added once the read ends, and a commit applied
// before was in the store when the read ran (a commit is applied only after the store holds it). Start-up
// reads nothing: a tenant's structure is built the first time it is asked for, or taken back from what the
// last close saved, read while the server starts answering (`take`). The least recently used tenants'
// structures are forgotten past a budget in bytes, and built again when needed.

/** What a build makes: it knows its size, and takes the items commits bring, growing by the bytes returned. */
export interface TenantBuilt<Item> {
  readonly bytes: number;
  add(item: Item): number;
}

/** `pending`: the items commits brought while the read ran; `retryAt`: when a failed build may be tried again. */
type State<B, Item> = { kind: 'building'; pending: Item[] } | { kind: 'ready'; built: B } | { kind: 'failed'; retryAt: number };

/** After a build failed (the store refused the read), it is tried again no sooner than this. */
const RETRY_AFTER_MS = 10_000;
/**
 * A structure larger than the whole budget is not kept, and not built again for this long: built and
 * forgotten at once, it would be read from the store again on every use.
 */
export const TOO_LARGE_RETRY_MS = 10 * 60_000;

/** Saved structures being read: what commits brought meanwhile for tenants with none here, and the tenants dropped. */
type Taking<Item> = { pending: Map<string, Item[]>; dropped: Set<string>; wanted: Set<string>; done: Promise<void> };

export class TenantBuilds<Item, B extends TenantBuilt<Item>> {
  /** Per tenant, least recently used first. */
  readonly #tenants = new Map<string, State<B, Item>>();
  #taking: Taking<Item> | null = null;
  #bytes = 0;
  /** The tenant last moved to the end of the order of use. */
  #lastUsed: string | null = null;
  /** Structures built from the store, and taken back whole (tests and benchmarks). */
  builds = 0;
  adopted = 0;
  /** Time from the start of each build to its structure being ready, summed (ms). */
  buildMs = 0;

  /** `read` builds a tenant's structure from the store; `what` names it in the log line of a failed read. */
  constructor(
    private readonly what: string,
    private readonly read: (tenant: string) => Promise<B>,
    private readonly budget: number,
  ) {}

  get bytes(): number {
    return this.#bytes;
  }

  /** The tenant's structure when built, else null; `build` starts its build when none runs (or the last failed long enough ago). */
  ready(tenant: string, build = true): B | null {
    const state = this.#tenants.get(tenant);
    if (state?.kind === 'ready') {
      // Moved to the end of the order of use once per run of calls for one tenant, not per key (a Map's
      // delete and set for each of a bulk request's ids was a tenth of its planning in a profile).
      if (this.#lastUsed !== tenant) {
        this.#tenants.delete(tenant);
        this.#tenants.set(tenant, state);
        this.#lastUsed = tenant;
      }
      return state.built;
    }
    // While saved structures are read, a tenant's may be among them: its build (a read of the store) waits
    // for them, and starts if it was not.
    if (build && this.#taking && !state) this.#taking.wanted.add(tenant);
    else if (build && (!state || (state.kind === 'failed' && Date.now() >= state.retryAt))) this.#build(tenant);
    return null;
  }

  isReady(tenant: string): boolean {
    return this.#tenants.get(tenant)?.kind === 'ready';
  }

  /** Resolves once the tenant's structure is built or its build failed (tests). */
  async settled(tenant: string): Promise<void> {
    await this.taken();
    while (this.#tenants.get(tenant)?.kind === 'building') await new Promise((r) => setTimeout(r, 5));
  }

  /** The structures built, the least recently used first. */
  *built(): Iterable<[string, B]> {
    for (const [tenant, state] of this.#tenants) if (state.kind === 'ready') yield [tenant, state.built];
  }

  /**
   * Takes structures made elsewhere (saved ones, read from a file) as their tenants', each unless one is
   * here already, once `reading` gives them. Until then no tenant's build starts, and what commits bring for
   * tenants without a structure is kept and added to the one taken: a structure saved before those commits
   * stays exact. The store is asked meanwhile, as while a build reads. A failed read is logged, and
   * structures are built from the store when needed.
   */
  take(reading: Promise<Iterable<[string, B]> | null>): void {
    const taking: Taking<Item> = { pending: new Map(), dropped: new Set(), wanted: new Set(), done: Promise.resolve() };
    const ended = (): void => {
      if (this.#taking === taking) this.#taking = null;
      for (const tenant of taking.wanted) if (!this.#tenants.has(tenant)) this.#build(tenant);
    };
    taking.done = reading.then(
      (saved) => {
        for (const [tenant, built] of saved ?? []) {
          if (this.#tenants.has(tenant) || taking.dropped.has(tenant)) continue;
          for (const item of taking.pending.get(tenant) ?? []) built.add(item);
          this.#tenants.set(tenant, { kind: 'ready', built });
          this.#bytes += built.bytes;
          this.adopted++;
        }
        ended();
        this.#evict();
      },
      (error: unknown) => {
        console.error(`${this.what}: reading those saved by the last close failed; they are built from the store when needed:`, error);
        ended();
      },
    );
    this.#taking = taking;
  }

  /** Resolves once the saved structures given to `take` are taken (or their read failed). */
  async taken(): Promise<void> {
    await this.#taking?.done;
  }

  #build(tenant: string): void {
    const state: State<B, Item> = { kind: 'building', pending: [] };
    this.#tenants.set(tenant, state);
    this.builds++;
    const started = performance.now();
    void this.read(tenant).then(
      (built) => {
        // Dropped (or forgotten) while it read: the answer is not kept.
        if (this.#tenants.get(tenant) !== state) return;
        for (const item of state.pending) built.add(item);
        this.buildMs += performance.now() - started;
        if (built.bytes > this.budget) return this.#tooLarge(tenant, built.bytes);
        this.#tenants.set(tenant, { kind: 'ready', built });
        this.#bytes += built.bytes;
        this.#evict(tenant);
      },
      (error: unknown) => {
        if (this.#tenants.get(tenant) !== state) return;
        this.#tenants.set(tenant, { kind: 'failed', retryAt: Date.now() + RETRY_AFTER_MS });
        console.error(`${this.what} of tenant ${tenant}: reading them failed, the store is asked meanwhile:`, error);
      },
    );
  }

  /**
   * A committer for one group: `add(tenant, item)` gives each item to the tenant's structure (or to its
   * pending items while it is built); `done()` forgets structures past the budget. A group's items are
   * mostly one tenant's, so its state is looked up once per run of them.
   */
  committer(): { add(tenant: string, item: Item): void; done(): void } | null {
    const taking = this.#taking;
    if (this.#tenants.size === 0 && !taking) return null;
    let at: string | null = null;
    let state: State<B, Item> | undefined;
    let held: Item[] | undefined;
    return {
      add: (tenant, item) => {
        if (tenant !== at) {
          at = tenant;
          state = this.#tenants.get(tenant);
          held = undefined;
          if (!state && taking) {
            held = taking.pending.get(tenant) ?? [];
            taking.pending.set(tenant, held);
          }
        }
        if (state?.kind === 'building') state.pending.push(item);
        else if (state?.kind === 'ready') this.#bytes += state.built.add(item);
        else held?.push(item);
      },
      done: () => {
        if (this.#bytes > this.budget) this.#evict();
      },
    };
  }

  drop(tenant: string): void {
    this.#taking?.dropped.add(tenant);
    this.#taking?.pending.delete(tenant);
    this.#taking?.wanted.delete(tenant);
    if (this.#lastUsed === tenant) this.#lastUsed = null;
    const state = this.#tenants.get(tenant);
    if (state?.kind === 'ready') this.#bytes -= state.built.bytes;
    this.#tenants.delete(tenant);
  }

  /** Forgets the least recently used structures (never `keep`) while over budget; one past the budget alone is not built again for a while. */
  #evict(keep?: string): void {
    for (const [tenant, state] of this.#tenants) {
      if (this.#bytes <= this.budget) return;
      if (tenant === keep || state.kind !== 'ready') continue;
      this.drop(tenant);
      if (state.built.bytes > this.budget) this.#tooLarge(tenant, state.built.bytes);
    }
  }

  #tooLarge(tenant: string, bytes: number): void {
    this.#tenants.set(tenant, { kind: 'failed', retryAt: Date.now() + TOO_LARGE_RETRY_MS });
    const mb = (n: number): string => (n / 1048576).toFixed(1);
    console.error(
      `${this.what} of tenant ${tenant}: ${mb(bytes)} MB, past the budget of ${mb(this.budget)} MB for all tenants: ` +
        `not kept, the store is asked instead, and not built again for ${TOO_LARGE_RETRY_MS / 60_000} minutes`,
    );
  }
}
