// Lookups of the Ident index (which spaces hold an id) share turns of the graph store's reads. Each caller
// made its own turn, one lookup after another: under load a lookup (~1-1.5 ms in the engine alone) took
// ~47 ms, nearly all of it the event loop's delay before each `await` resumed, so 16 gets by id waiting
// at once took ~0.75 s to be answered (the 300k-row load bench: 184 lookups in 10 s, 8.7 s of them in
// lookups). Now the ids asked while a turn waits or runs are looked up together in the next one, in one
// query of the engine (one wait for the loop, not one per id).
import { identKey } from '../../commit-group.ts';
import { SharedTurns, type TurnRequest, type TurnStats } from './shared-turns.ts';

/**
 * Ids a turn takes before leaving the rest to the next (~20 ms at 1.5 ms each): a batch of lookups (the
 * search index's catch-up, 8,192 ids) hands in this many at a time, so a get asked meanwhile waits for one
 * turn, not for the batch.
 */
export const IDENT_LOOKUPS_PER_TURN = 16;
export interface IdentTurnsDeps {
  /** Runs `fn` as one turn of reads (beside a copy's statements, or in the writer's turn). */
  turn(fn: () => Promise<void>): Promise<void>;
  /** The spaces (their names) the engine's committed rows place each Ident key in, in one query; a key held nowhere may be missing. */
  stored(keys: readonly string[]): Promise<ReadonlyMap<string, readonly string[]>>;
  /** The journal's Ident pairs among `keys`, each as its key and its TenantSpace key (read in the same turn). */
  journaled(keys: ReadonlySet<string>, pair: (key: string, spaceKey: string) => void): void;
}

interface Request extends TurnRequest {
  tenant: string;
  keys: readonly string[];
  done: (found: ReadonlyMap<string, ReadonlySet<string>>) => void;
}

export class IdentTurns {
  readonly #deps: IdentTurnsDeps;
  readonly #turns: SharedTurns<Request>;
  /** Lookups made, for tests and benchmarks. */
  lookups = 0;

  constructor(deps: IdentTurnsDeps) {
    this.#deps = deps;
    this.#turns = new SharedTurns<Request>({ turn: deps.turn, take: takeKeys, run: (taken) => this.#run(taken) });
  }

  /** Turns run, for tests and benchmarks. */
  get turns(): number {
    return this.#turns.turns;
  }

  stats(): TurnStats & { keys: number } {
    return { ...this.#turns.stats(), keys: this.lookups };
  }

  /**
   * The spaces holding each of the tenant's Ident `keys` (identKey(tenant, id)), stored or journaled,
   * answered in a turn shared with the keys other callers asked meanwhile. At most IDENT_LOOKUPS_PER_TURN
   * keys a call: a caller with more asks again after each answer.
   */
  spaces(tenant: string, keys: readonly string[]): Promise<ReadonlyMap<string, ReadonlySet<string>>> {
    if (keys.length > IDENT_LOOKUPS_PER_TURN) throw new RangeError(`at most ${IDENT_LOOKUPS_PER_TURN} keys a call, not ${keys.length}`);
    return new Promise((done, fail) => this.#turns.ask({ tenant, keys, done, fail }));
  }

  async #run(taken: readonly Request[]): Promise<void> {
    // A key's tenant prefix, to cut the journal's TenantSpace keys down to their spaces.
    const prefix = new Map<string, number>();
    for (const r of taken) for (const key of r.keys) prefix.set(key, identKey(r.tenant, '').length);
    const found = new Map<string, Set<string>>([...prefix.keys()].map((key) => [key, new Set<string>()]));
    const keys = [...prefix.keys()];
    this.lookups += keys.length;
    for (const [key, spaces] of await this.#deps.stored(keys)) for (const space of spaces) found.get(key)?.add(space);
    this.#deps.journaled(new Set(keys), (key, spaceKey) => found.get(key)?.add(spaceKey.slice(prefix.get(key))));
    for (const r of taken) r.done(found);
  }
}

/** The requests whose keys fit one turn, in arrival order (the first whatever its size). */
function takeKeys(queue: Request[]): Request[] {
  const taken: Request[] = [];
  let keys = 0;
  while (queue.length > 0 && (taken.length === 0 || keys + queue[0]!.keys.length <= IDENT_LOOKUPS_PER_TURN)) {
    const r = queue.shift()!;
    keys += r.keys.length;
    taken.push(r);
  }
  return taken;
}
