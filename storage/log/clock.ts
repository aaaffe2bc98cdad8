// One clock per process: capture instants are `max(now, last + 1)`, so they strictly increase even
// within one microsecond and across a backward jump of the wall clock. The last instant is seeded on
// start-up from the store (the largest captured_at written), which carries it across restarts.
import { nowMicros, type Micros } from '../time.ts';

export class CaptureClock {
  #last: Micros;

  constructor(
    lastWritten: Micros,
    private readonly now: () => Micros = nowMicros,
  ) {
    this.#last = lastWritten;
  }

  /** A new capture instant, later than every earlier one. */
  next(): Micros {
    this.#last = Math.max(this.now(), this.#last + 1);
    return this.#last;
  }

  /** Moves the clock to at least `instant` (rows imported from another server carry their instants). */
  advance(instant: Micros): void {
    if (instant > this.#last) this.#last = instant;
  }

  /** The latest instant handed out (or advanced to): no row stored or being committed carries a later one. */
  latest(): Micros {
    return this.#last;
  }

  /** The server's present instant for answers (`tx_as_of`): never before an instant already handed out. */
  peek(): Micros {
    return Math.max(this.now(), this.#last);
  }
}
