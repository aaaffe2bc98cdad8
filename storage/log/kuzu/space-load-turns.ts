// Loads of spaces share turns of the graph store's reads. Under the one-application load (2,000 users ×
// 150 rows, 64 connections) every list, write or search in a user not in memory loaded that user's space
// in a turn of its own: three queries of the engine, one after another, each load behind the last. The
// spaces of one tenant asked while a turn waits or runs are now read together in the next one, by the
// same three queries (loadSpaces reads 30 spaces in ~84-140 ms against 229-708 ms one by one).
import { SharedTurns, type TurnRequest, type TurnStats } from './shared-turns.ts';

/** Distinct spaces a turn reads before leaving the rest to the next: one query per table reads this many. */
export const SPACE_LOADS_PER_TURN = 64;

export interface SpaceLoadTurnsDeps<Rows> {
  /** Runs `fn` as one turn of reads (beside a copy's statements, or in the writer's turn). */
  turn(fn: () => Promise<void>): Promise<void>;
  /** The rows of each of a tenant's `spaces` (distinct), read in the turn. */
  read(tenant: string, spaces: readonly string[]): Promise<ReadonlyMap<string, Rows>>;
}

interface Request<Rows> extends TurnRequest {
  tenant: string;
  spaces: readonly string[];
  done: (rows: ReadonlyMap<string, Rows>) => void;
}

export class SpaceLoadTurns<Rows> {
  readonly #turns: SharedTurns<Request<Rows>>;
  /** Spaces read, for tests and benchmarks. */
  spaces = 0;

  constructor(deps: SpaceLoadTurnsDeps<Rows>) {
    this.#turns = new SharedTurns<Request<Rows>>({
      turn: deps.turn,
      take: (queue) => takeOneTenant(queue),
      run: async (taken) => {
        const names = [...new Set(taken.flatMap((r) => r.spaces))];
        this.spaces += names.length;
        const rows = await deps.read(taken[0]!.tenant, names);
        for (const r of taken) r.done(rows);
      },
    });
  }

  /** Turns run, for tests and benchmarks. */
  get turns(): number {
    return this.#turns.turns;
  }

  stats(): TurnStats & { spaces: number } {
    return { ...this.#turns.stats(), spaces: this.spaces };
  }

  /** The rows of each of the tenant's `spaces`, read in a turn shared with the loads other callers asked meanwhile. */
  load(tenant: string, spaces: readonly string[]): Promise<Map<string, Rows>> {
    return new Promise((resolve, fail) =>
      this.#turns.ask({
        tenant,
        spaces,
        // Each caller gets a map of its own spaces: the rows are shared, as one load's are.
        done: (rows) => resolve(new Map(spaces.map((s) => [s, rows.get(s)!]))),
        fail,
      }),
    );
  }
}

/**
 * The first request whatever its size, then later requests of its tenant while their spaces fit the turn;
 * other tenants' requests keep their places, so the oldest is always taken next.
 */
function takeOneTenant<Rows>(queue: Request<Rows>[]): Request<Rows>[] {
  const first = queue.shift()!;
  const taken = [first];
  const names = new Set(first.spaces);
  for (let i = 0; i < queue.length;) {
    const r = queue[i]!;
    const added = r.spaces.filter((s) => !names.has(s)).length;
    if (r.tenant !== first.tenant || names.size + added > SPACE_LOADS_PER_TURN) {
      i++;
      continue;
    }
    for (const s of r.spaces) names.add(s);
    taken.push(r);
    queue.splice(i, 1);
  }
  return taken;
}
