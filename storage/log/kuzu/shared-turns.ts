// Reads that callers ask for one at a time but the engine answers better together share turns of the
// graph store's reads: what is asked while a turn waits or runs joins the next one. Under load each
// caller's own turn cost the event loop's delay before each of its `await`s resumed, one caller after
// another; a turn pays it once for everyone it takes.

/** One caller's request: what it asked, and how to fail it if its turn cannot run. */
export interface TurnRequest {
  fail: (error: unknown) => void;
}

export interface SharedTurnsDeps<R extends TurnRequest> {
  /** Runs `fn` as one turn of the store's reads. */
  turn(fn: () => Promise<void>): Promise<void>;
  /** Takes the requests one turn answers off the front of `queue` (at least one, when it is not empty). */
  take(queue: R[]): R[];
  /** Answers the requests taken: a throw fails them all. */
  run(taken: readonly R[]): Promise<void>;
}

/** Turns run, requests answered, and their time so far (ms): waiting for a turn, summed over requests, and in turns. */
export interface TurnStats {
  turns: number;
  requests: number;
  waitMs: number;
  busyMs: number;
}

export class SharedTurns<R extends TurnRequest> {
  readonly #deps: SharedTurnsDeps<R>;
  readonly #queue: R[] = [];
  /** A turn is queued and has not yet taken its requests. */
  #pending = false;
  /** When each queued request was asked (performance.now()). */
  readonly #askedAt = new Map<R, number>();
  /** Turns run, requests answered, and their time: waiting for a turn (summed over requests) and in turns. */
  turns = 0;
  requests = 0;
  waitMs = 0;
  busyMs = 0;

  constructor(deps: SharedTurnsDeps<R>) {
    this.#deps = deps;
  }

  stats(): TurnStats {
    return { turns: this.turns, requests: this.requests, waitMs: Math.round(this.waitMs), busyMs: Math.round(this.busyMs) };
  }

  ask(request: R): void {
    this.#askedAt.set(request, performance.now());
    this.#queue.push(request);
    this.#schedule();
  }

  #schedule(): void {
    if (this.#pending || this.#queue.length === 0) return;
    this.#pending = true;
    let started = false;
    let taken: R[] = [];
    this.#deps
      .turn(async () => {
        // Taken when the turn starts, not when it was queued: everything asked while it waited joins it.
        started = true;
        this.#pending = false;
        taken = this.#queue.length > 0 ? this.#deps.take(this.#queue) : [];
        this.#schedule();
        if (taken.length === 0) return;
        const start = performance.now();
        for (const r of taken) {
          this.waitMs += start - (this.#askedAt.get(r) ?? start);
          this.#askedAt.delete(r);
        }
        this.turns++;
        this.requests += taken.length;
        try {
          await this.#deps.run(taken);
        } finally {
          this.busyMs += performance.now() - start;
        }
      })
      .catch((error: unknown) => {
        if (!started) {
          // The turn failed before it started (the store closing): every request queued fails with it.
          this.#pending = false;
          taken = this.#queue.splice(0);
        }
        for (const r of taken) this.#askedAt.delete(r);
        for (const r of taken) r.fail(error);
      });
  }
}
