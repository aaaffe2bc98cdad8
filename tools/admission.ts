// Admission control for both doors, decided in one place (runOperation calls `admit`). Each request goes
// by one of three lanes. Expensive operations (each operation's `heavy`, tools/operation.ts) run a bounded
// number at a time; searches that are not expensive (a space's copy in memory or in its file) take a slot
// of their own pool, bounded too; each pool has a bounded queue, one queue per tenant served round-robin
// (tools/slot-pool.ts). Beyond the queue, past a tenant's share of it, or when the wait would outlast the
// request's deadline, the answer is immediate: an SvcError carrying a retry-after, which each door maps
// once (REST: 503/429 + Retry-After; MCP: an isError result that says when to retry). Light operations
// (lists, gets, small writes) never queue; they only count against SVC_MAX_REQUESTS, a ceiling on
// everything in flight that keeps memory per server bounded.
import { availableParallelism } from 'node:os';
import { SvcError } from './errors.ts';
import { searchRefusal, type LaneState } from './search-gate.ts';
import { once, overloaded, SlotPool } from './slot-pool.ts';

export interface AdmissionLimits {
  /** Expensive operations running at once (SVC_MAX_HEAVY). */
  maxHeavy: number;
  /** Searches that are not expensive, scoring at once (SVC_MAX_SEARCHES); they queue as heavy ones do. */
  maxSearches: number;
  /** Expensive operations waiting, all tenants together (SVC_HEAVY_QUEUE). */
  heavyQueue: number;
  /** Of the queue, what one tenant may hold waiting (SVC_HEAVY_QUEUE_PER_KEY). */
  perKeyQueue: number;
  /** Operations of any kind in flight at once (SVC_MAX_REQUESTS). */
  maxRequests: number;
  /** Queue wait plus work, per request (SVC_REQUEST_TIMEOUT_MS). */
  requestTimeoutMs: number;
  /** The longest expected wait for a turn a heavy request is queued for; longer: refused at once (SVC_HEAVY_MAX_WAIT_MS). */
  maxWaitMs: number;
}

function whole(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name}: expected a whole number from ${min} to ${max}, got "${raw}"`);
  return n;
}

export function admissionLimits(env: NodeJS.ProcessEnv = process.env): AdmissionLimits {
  // Searches are CPU-bound on this process's threads: more at once than cores only lengthens each one.
  const maxHeavy = whole(env, 'SVC_MAX_HEAVY', Math.max(2, availableParallelism()), 1, 1024);
  const heavyQueue = whole(env, 'SVC_HEAVY_QUEUE', 16 * maxHeavy, 0, 100_000);
  const perKeyQueue = whole(env, 'SVC_HEAVY_QUEUE_PER_KEY', Math.max(1, Math.ceil(heavyQueue / 2)), 0, 100_000);
  if (perKeyQueue > heavyQueue)
    throw new Error(`SVC_HEAVY_QUEUE_PER_KEY: ${perKeyQueue} is more than the whole queue (SVC_HEAVY_QUEUE=${heavyQueue})`);
  // Counted from arrival (before the body is read). One event loop answers a few thousand light requests a
  // second, so 256 in flight is ~50–150 ms of queue: 256 writers are all answered (p99 153 ms on a quiet
  // machine, where 128 refused 43% of them), and a burst of 1,024 connections timed out no more than at 128
  // (433 against 443; docs/load.md). 512 let admitted requests outlast the client's 10 s.
  const maxRequests = whole(env, 'SVC_MAX_REQUESTS', 256, 1, 1_000_000);
  if (maxRequests < maxHeavy) throw new Error(`SVC_MAX_REQUESTS: ${maxRequests} is less than SVC_MAX_HEAVY (${maxHeavy})`);
  // Below the 10 s most HTTP clients give up after, so a client hears why rather than timing out.
  const requestTimeoutMs = whole(env, 'SVC_REQUEST_TIMEOUT_MS', 8000, 100, 3_600_000);
  const maxWaitMs = whole(env, 'SVC_HEAVY_MAX_WAIT_MS', Math.min(1000, requestTimeoutMs), 0, 3_600_000);
  // Sixteen searches interleaved on the one event loop, each giving a turn every 2 ms, held every list, get
  // and write behind their stretches; four at a time, the rest waiting their turn, answered 1,762–1,834
  // against 1,374–1,388 requests a second, every p99 but the searches' lower; two at a time took the
  // searches' p99 past 150 ms (docs/load.md#searches-take-turns-2026-11-28).
  const maxSearches = whole(env, 'SVC_MAX_SEARCHES', 2 * Math.max(2, availableParallelism()), 1, 1024);
  return { maxHeavy, maxSearches, heavyQueue, perKeyQueue, maxRequests, requestTimeoutMs, maxWaitMs };
}

/** The start-up line; `heavy` names the operations that can take a heavy slot (the registry's, passed in: importing it here would be a cycle). */
export function describeLimits(l: AdmissionLimits, heavy: readonly string[]): string {
  return (
    `admission: ${l.maxHeavy} heavy operations at once (${heavy.join(', ')}), ${l.maxSearches} other searches at once, ` +
    `queue ${l.heavyQueue} (${l.perKeyQueue} per key, expected wait ≤ ${l.maxWaitMs} ms), ${l.maxRequests} requests in flight, ` +
    `deadline ${l.requestTimeoutMs} ms`
  );
}

/** How a request is admitted: never queued (`light`), or for a slot of the searches' or the heavy pool. */
export type Lane = 'light' | 'search' | 'heavy';

/** Told each search lane's state as it changes (Admission.watchSearchGate): Retry-After seconds, 0 for none. */
export interface SearchGateWatch {
  crowded(lane: 'heavy' | 'searches', retryAfterS: number): void;
  share(lane: 'heavy' | 'searches', tenant: string, retryAfterS: number): void;
}

/** What `admit` gives back: call `release` exactly once when the work has stopped. */
export interface Admitted {
  release(): void;
}

export interface AdmissionStats {
  /** Requests a door has taken in and not yet answered, counted from before their body is read. */
  arrived: number;
  inFlight: number;
  heavyRunning: number;
  heavyQueued: number;
  searchesRunning: number;
  searchesQueued: number;
  shed: number;
  timedOut: number;
  /** How long the oldest request still inside (counted from arrival, before its body is read) has been there; 0 when none is. */
  oldestArrivedMs: number;
}

export class Admission {
  #arrived = 0;
  /** When each request counted in #arrived came in, oldest first (a Set keeps insertion order). */
  readonly #arrivals = new Set<{ at: number }>();
  #inFlight = 0;
  readonly #heavy: SlotPool;
  readonly #searches: SlotPool;
  #shed = 0;
  #timedOut = 0;

  constructor(readonly limits: AdmissionLimits) {
    const waits = { perKeyQueue: limits.perKeyQueue, maxWaitMs: Math.min(limits.maxWaitMs, limits.requestTimeoutMs) };
    const changed = (lane: 'heavy' | 'searches') => (tenant?: string) => this.#tell(lane, tenant);
    this.#heavy = new SlotPool(
      { slots: limits.maxHeavy, queue: limits.heavyQueue, ...waits },
      'searches or other expensive requests',
      changed('heavy'),
    );
    // The searches' queue holds what a heavy one may (each waiting search is a few KB of input); it is the
    // expected wait that bounds it in practice.
    this.#searches = new SlotPool({ slots: limits.maxSearches, queue: limits.heavyQueue, ...waits }, 'searches', changed('searches'));
  }

  #gate: SearchGateWatch | null = null;

  #pool(lane: 'heavy' | 'searches'): SlotPool {
    return lane === 'heavy' ? this.#heavy : this.#searches;
  }

  #tell(lane: 'heavy' | 'searches', tenant?: string): void {
    if (!this.#gate) return;
    const pool = this.#pool(lane);
    this.#gate.crowded(lane, pool.crowdedFor());
    if (tenant !== undefined) this.#gate.share(lane, tenant, pool.shareFor(tenant));
  }

  /**
   * Tells `gate` the search lanes' states now and after every change, so that an HTTP thread refuses a
   * search before reading it as `refusal` does here (tools/search-gate.ts).
   */
  watchSearchGate(gate: SearchGateWatch): void {
    this.#gate = gate;
    for (const lane of ['heavy', 'searches'] as const) {
      const pool = this.#pool(lane);
      gate.crowded(lane, pool.crowdedFor());
      for (const tenant of pool.waitingTenants()) gate.share(lane, tenant, pool.shareFor(tenant));
    }
  }

  /** A search of `tenant` arriving now, refused unread when both lanes would refuse it (tools/search-gate.ts). */
  #searchRefusal(tenant?: string): SvcError | null {
    const state = (pool: SlotPool): LaneState => ({ crowded: pool.crowdedFor(), share: tenant === undefined ? 0 : pool.shareFor(tenant) });
    return searchRefusal(state(this.#heavy), state(this.#searches));
  }

  stats(): AdmissionStats {
    return {
      arrived: this.#arrived,
      inFlight: this.#inFlight,
      heavyRunning: this.#heavy.running,
      heavyQueued: this.#heavy.queued,
      searchesRunning: this.#searches.running,
      searchesQueued: this.#searches.queued,
      shed: this.#shed,
      timedOut: this.#timedOut,
      oldestArrivedMs: Math.round(performance.now() - (this.#arrivals.values().next().value?.at ?? performance.now())),
    };
  }

  /** How long until `ahead` queued heavy operations have run, in whole seconds (at least 1). */
  retryAfter(ahead?: number): number {
    return this.#heavy.retryAfter(ahead);
  }

  /**
   * A request has reached a door, before its body is read or parsed: refused at once (counted as shed)
   * when the server already holds SVC_MAX_REQUESTS, or, for an operation that is heavy whatever its input,
   * when the heavy queue would refuse it anyway. Reading, parsing and validating a request that is then
   * refused is work an overloaded server cannot spare, and waiting for it is what made refusals slow.
   * Call `release` when the answer has been handed back. `admit` still decides (per key, input-dependent
   * heavy operations): passing here promises nothing.
   */
  arrive(heavy: boolean, searches = false, tenant?: string): Admitted {
    const refusal = this.refusal(heavy, searches, tenant);
    if (refusal) throw refusal;
    this.#arrived++;
    const arrival = { at: performance.now() };
    this.#arrivals.add(arrival);
    return {
      release: once(() => {
        this.#arrived--;
        this.#arrivals.delete(arrival);
      }),
    };
  }

  /**
   * What `arrive` would refuse a request arriving now with, counted as shed; null when it would take it
   * (and nothing is taken: a request let through still calls `arrive`). Lets the HTTP listener answer a
   * refusal before the request reaches the app (server/early-shed.ts). `searches`: the operation takes a
   * search lane (a search), refused when both would refuse it, for `tenant`'s share too when it is known.
   */
  refusal(heavy: boolean, searches = false, tenant?: string): SvcError | null {
    const refusal =
      this.#arrived >= this.limits.maxRequests
        ? overloaded(`${this.#arrived} requests are in flight, the most this server takes at once`, this.retryAfter(0))
        : heavy
          ? this.#heavy.refusal()
          : searches
            ? this.#searchRefusal(tenant)
            : null;
    if (refusal) this.#shed++;
    return refusal;
  }

  /**
   * Waits for a slot (the heavy and search lanes) or takes a place at once (the light one). Throws
   * `overloaded` (503), `over_share` (429) or `deadline_exceeded` (504, when `signal` aborts while waiting).
   */
  async admit(tenant: string, lane: Lane, signal?: AbortSignal): Promise<Admitted> {
    if (this.#inFlight >= this.limits.maxRequests) {
      this.#shed++;
      throw overloaded(`${this.#inFlight} requests are in flight, the most this server takes at once`, this.retryAfter(0));
    }
    if (lane === 'light') {
      this.#inFlight++;
      return { release: once(() => this.#inFlight--) };
    }
    const pool = lane === 'heavy' ? this.#heavy : this.#searches;
    if (pool.free()) return this.#start(pool);
    const refusal = pool.refusal(tenant);
    if (refusal) {
      this.#shed++;
      throw refusal;
    }
    if (signal?.aborted) throw deadlineExceeded('before it could start');
    this.#inFlight++;
    return new Promise<Admitted>((resolve, reject) => {
      const leave = pool.enqueue(tenant, () => {
        signal?.removeEventListener('abort', onAbort);
        this.#inFlight--; // #start counts it again
        resolve(this.#start(pool));
      });
      const onAbort = (): void => {
        if (!leave()) return;
        this.#inFlight--;
        this.#timedOut++;
        reject(deadlineExceeded('while it waited for a turn'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  #start(pool: SlotPool): Admitted {
    this.#inFlight++;
    const release = pool.start();
    return {
      release: once(() => {
        this.#inFlight--;
        release();
      }),
    };
  }
}

export function deadlineExceeded(when: string): SvcError {
  return new SvcError(
    'deadline_exceeded',
    `the request ran past its deadline ${when} and was cancelled; nothing was written by it; retry after 1 s, with a narrower request if it is large`,
    [],
    1,
  );
}
