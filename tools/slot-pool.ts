// A bounded number of slots and a bounded queue for them, one queue per tenant served round-robin, so one
// key's flood takes turns with everybody else instead of standing in front of them. Beyond the queue, past
// a tenant's share of it, or when the wait would outlast the bound, a request is refused at once: an
// SvcError with a retry-after (tools/admission.ts holds one pool for heavy operations and one for searches).
import { SvcError } from './errors.ts';

export interface PoolLimits {
  slots: number;
  /** Waiting, all tenants together. */
  queue: number;
  /** Of the queue, what one tenant may hold waiting. */
  perKeyQueue: number;
  /** The longest expected wait a request is queued for; longer: refused at once. */
  maxWaitMs: number;
}

interface Waiter {
  tenant: string;
  start: () => void;
}

export class SlotPool {
  #running = 0;
  #queued = 0;
  /** Per tenant, its waiting requests in arrival order; Map order is the round-robin order. */
  readonly #queues = new Map<string, Waiter[]>();
  /** Mean time a request holds its slot, for the retry-after and the wait estimate. */
  #serviceMs = 50;

  /**
   * `what`: the requests the pool's refusals name ("expensive requests", "searches"); `onChange`: told
   * after every start, end, wait and departure from the queue, when what `crowded` says may have changed,
   * with the tenant whose queue changed (its `shareFor` too).
   */
  constructor(
    readonly limits: PoolLimits,
    readonly what: string,
    readonly onChange: (tenant?: string) => void = () => {},
  ) {}

  get running(): number {
    return this.#running;
  }

  get queued(): number {
    return this.#queued;
  }

  /** How long until `ahead` queued requests have run, in whole seconds (at least 1). */
  retryAfter(ahead = this.#queued): number {
    return Math.max(1, Math.ceil(((ahead + 1) * this.#serviceMs) / this.limits.slots / 1000));
  }

  /** Whether a request arriving now starts at once. */
  free(): boolean {
    return this.#running < this.limits.slots && this.#queued === 0;
  }

  /** The Retry-After (s) any request arriving now is refused with, whoever sent it (a full queue, no share for anyone, too long a wait); 0: none. */
  crowdedFor(): number {
    const crowded = !this.free() && (this.#queueFull() || this.limits.perKeyQueue === 0 || this.#waitTooLong(this.#expectedWaitMs()));
    return crowded ? this.retryAfter() : 0;
  }

  /** The Retry-After (s) a request of `tenant` is refused with for its share of the queue being full; 0: it is not. */
  shareFor(tenant: string): number {
    const mine = this.#waiting(tenant);
    return mine > 0 && this.#shareFull(mine) ? this.retryAfter(mine) : 0;
  }

  /** The tenants with requests waiting. */
  waitingTenants(): IterableIterator<string> {
    return this.#queues.keys();
  }

  // The three reasons a pool that is not free refuses, shared by `refusal` and the states the search gate reads.
  #queueFull(): boolean {
    return this.#queued >= this.limits.queue;
  }

  #waiting(tenant: string): number {
    return this.#queues.get(tenant)?.length ?? 0;
  }

  #shareFull(mine: number): boolean {
    return mine >= this.limits.perKeyQueue;
  }

  #expectedWaitMs(): number {
    return ((this.#queued + 1) * this.#serviceMs) / this.limits.slots;
  }

  #waitTooLong(expectedWaitMs: number): boolean {
    return expectedWaitMs > this.limits.maxWaitMs;
  }

  /** Why a request of `tenant` arriving now would not be queued (a full queue, the key's share, too long a wait); null: it would. */
  refusal(tenant?: string): SvcError | null {
    if (this.free()) return null;
    if (this.#queueFull()) return overloaded(`${this.#queued} ${this.what} are already waiting`, this.retryAfter());
    const mine = tenant === undefined ? 0 : this.#waiting(tenant);
    if (tenant !== undefined && this.#shareFull(mine)) {
      return new SvcError(
        'over_share',
        `this key already has ${mine} ${this.what} waiting, its share of the queue; retry after ${this.retryAfter(mine)} s`,
        [],
        this.retryAfter(mine),
      );
    }
    // A wait longer than the bound is refused now rather than served late.
    const expectedWaitMs = this.#expectedWaitMs();
    if (this.#waitTooLong(expectedWaitMs)) {
      return overloaded(
        `the expected wait for a turn (${Math.round(expectedWaitMs)} ms) is longer than this server queues for`,
        this.retryAfter(),
      );
    }
    return null;
  }

  /** Takes a slot now; call the returned release exactly once when the work has stopped. */
  start(): () => void {
    this.#running++;
    this.onChange();
    const t0 = performance.now();
    return once(() => {
      this.#running--;
      this.#serviceMs = this.#serviceMs * 0.9 + (performance.now() - t0) * 0.1;
      this.#next();
      this.onChange();
    });
  }

  /** Queues for a slot (after `refusal` said null): `start` runs when it is this request's turn; the returned function takes it out of the queue unstarted (false: it had started). */
  enqueue(tenant: string, start: () => void): () => boolean {
    const waiter: Waiter = { tenant, start };
    this.#queued++;
    const queue = this.#queues.get(tenant);
    if (queue) queue.push(waiter);
    else this.#queues.set(tenant, [waiter]);
    this.onChange(tenant);
    return () => {
      const mine = this.#queues.get(tenant);
      const at = mine?.indexOf(waiter) ?? -1;
      if (!mine || at < 0) return false;
      mine.splice(at, 1);
      if (mine.length === 0) this.#queues.delete(tenant);
      this.#queued--;
      this.onChange(tenant);
      return true;
    };
  }

  /** Starts the first waiter of the next tenant in turn; that tenant goes to the back of the round. */
  #next(): void {
    while (this.#running < this.limits.slots && this.#queued > 0) {
      const first = this.#queues.entries().next();
      if (first.done) return;
      const [tenant, queue] = first.value;
      const waiter = queue.shift();
      this.#queues.delete(tenant);
      if (queue.length > 0) this.#queues.set(tenant, queue);
      if (!waiter) continue;
      this.#queued--;
      this.onChange(tenant);
      waiter.start();
    }
  }
}

export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}

export function overloaded(why: string, retryAfter: number): SvcError {
  return new SvcError('overloaded', `the server is busy (${why}); retry after ${retryAfter} s`, [], retryAfter);
}
