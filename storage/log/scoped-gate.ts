// Commits and read-model loads run apart only where they meet. A load of a space must see each commit
// group touching that space wholly or not at all, and every later one applied to the view it made; a
// commit touching other spaces changes nothing it reads. One gate for everything made every commit wait
// for any load: under a bulk import the search index loaded each written space for its linked words, that
// load first waited for the write journal's copy into the store (~0.2-0.9 s), and the writer queue stood
// behind it (~32 ms a 1,000-row request on average, measured; half the import's wall time).
import type { CommitGroup } from '../commit-group.ts';

/**
 * What a gated job reads or changes: each tenant's named spaces, or the whole tenant ('tenant': its
 * batches, declarations and verdicts reach every view of it), or everything ('all').
 */
export type GateScope = 'all' | ReadonlyMap<string, ReadonlySet<string> | 'tenant'>;

export const wholeTenant = (tenant: string): GateScope => new Map([[tenant, 'tenant']]);
export const spacesOf = (tenant: string, spaces: Iterable<string>): GateScope => new Map([[tenant, new Set(spaces)]]);

/**
 * The scope a commit group changes: the spaces of its rows, and the whole tenant of a batch, declaration or
 * verdict. The views `ResidentViews.apply` adds a group's rows to; a change to one is a change to both.
 */
export function groupScope(group: Readonly<CommitGroup>): GateScope {
  const scope = new Map<string, Set<string> | 'tenant'>();
  const whole = (tenant: string): void => void scope.set(tenant, 'tenant');
  const space = (tenant: string, name: string): void => {
    const held = scope.get(tenant);
    if (held === 'tenant') return;
    if (held) held.add(name);
    else scope.set(tenant, new Set([name]));
  };
  for (const rows of [group.batches, group.declarations, group.verdicts]) for (const r of rows) whole(r.tenant);
  for (const rows of [group.nodes, group.edges, group.invalidations, group.spaces]) for (const r of rows) space(r.tenant, r.space);
  for (const l of group.invalidationSpaces) space(l.row.tenant, l.space);
  return scope;
}

export function overlaps(a: GateScope, b: GateScope): boolean {
  if (a === 'all' || b === 'all') return true;
  const [few, many] = a.size <= b.size ? [a, b] : [b, a];
  for (const [tenant, mine] of few) {
    const theirs = many.get(tenant);
    if (theirs === undefined) continue;
    if (mine === 'tenant' || theirs === 'tenant') return true;
    const [small, large] = mine.size <= theirs.size ? [mine, theirs] : [theirs, mine];
    for (const s of small) if (large.has(s)) return true;
  }
  return false;
}

/**
 * Runs each job once every job given before it whose scope overlaps its own has settled (in arrival order,
 * so none waits forever behind later ones); jobs whose scopes do not overlap run side by side.
 */
export class ScopedGate {
  readonly #pending = new Set<{ scope: GateScope; settled: Promise<unknown> }>();

  run<T>(scope: GateScope, fn: () => Promise<T>): Promise<T> {
    const before: Promise<unknown>[] = [];
    for (const job of this.#pending) if (overlaps(job.scope, scope)) before.push(job.settled);
    const run = (before.length === 0 ? Promise.resolve() : Promise.all(before)).then(fn);
    const job = { scope, settled: run.catch(() => undefined) };
    this.#pending.add(job);
    void job.settled.then(() => this.#pending.delete(job));
    return run;
  }

  /** Jobs given and not yet settled. */
  get pending(): number {
    return this.#pending.size;
  }
}
