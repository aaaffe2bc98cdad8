// Keeps a PlacementTable in step with etcd: one full read, then watches for changes within milliseconds,
// and a full re-read every few seconds that doubles as the liveness probe. When etcd stops answering the
// table keeps its last placements for SVC_ETCD_STALE_MS, then every tenant gets 503 until etcd is back
// (a server must never serve a tenant that may have been moved away while it could not see). Also
// publishes the first writer of each new `svc:` space, so the proxy and the other servers can route a
// keyless app-scoped request by its space.
import { noop } from 'cockatiel';
import { Etcd3, type IKeyValue, type Lease, type Watcher } from 'etcd3';
import type { CommitGroup } from '../../storage/commit-group.ts';
import { PLACEMENT_PREFIX, PlacementTable, SERVER_LEASE_S, SERVERS_PREFIX, SPACES_PREFIX } from './placement.ts';

const PROBE_MS = 2_000;
/** While etcd is away the probe runs faster, so every server serves again within about this of its return. */
const PROBE_LOST_MS = 250;
const CALL_MS = 1_500;

export interface EtcdPlacementOptions {
  hosts: string[];
  serverId: string;
  staleMs: number;
  log: (line: string) => void;
}

const within = <T>(ms: number, work: Promise<T>): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer from etcd within ${ms} ms`)), ms);
    work.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });

const suffix = (kv: IKeyValue, prefix: string): string => kv.key.toString('utf8').slice(prefix.length);

export class EtcdPlacement {
  readonly table: PlacementTable;
  readonly #client: Etcd3;
  readonly #opts: EtcdPlacementOptions;
  readonly #watchers: Watcher[] = [];
  /** Spaces whose first writer is still to be published (a failed put is retried on the next probe). */
  readonly #unpublished = new Map<string, string>();
  readonly #published = new Set<string>();
  #timer: NodeJS.Timeout | null = null;
  #closed = false;
  #lease: Lease | null = null;
  #registrar: Etcd3 | null = null;

  private constructor(opts: EtcdPlacementOptions) {
    this.#opts = opts;
    this.table = new PlacementTable(opts.serverId, opts.staleMs);
    this.#client = new Etcd3({
      hosts: opts.hosts,
      dialTimeout: CALL_MS,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + CALL_MS }),
      // The client's default circuit breaker fails every call for 5 s after three failures, so a server
      // kept refusing its tenants for seconds after etcd was back; the probe is the retry policy here.
      faultHandling: { host: () => noop, global: noop },
    });
  }

  /** Starts without waiting for etcd: until the first read succeeds every tenant gets 503. */
  static start(opts: EtcdPlacementOptions): EtcdPlacement {
    const placement = new EtcdPlacement(opts);
    void placement.#probe(true);
    return placement;
  }

  async #readAll(): Promise<number> {
    const [placed, spaces] = await within(
      CALL_MS,
      Promise.all([this.#client.getAll().prefix(PLACEMENT_PREFIX).exec(), this.#client.getAll().prefix(SPACES_PREFIX).exec()]),
    );
    const revision = Math.min(Number(placed.header.revision), Number(spaces.header.revision));
    this.table.replaceAll(
      revision,
      placed.kvs.map((kv) => [suffix(kv, PLACEMENT_PREFIX), kv.value.toString('utf8')]),
      spaces.kvs.map((kv) => [suffix(kv, SPACES_PREFIX), kv.value.toString('utf8')]),
    );
    return revision;
  }

  async #watch(from: number): Promise<void> {
    const start = String(from + 1);
    const placements = await this.#client.watch().prefix(PLACEMENT_PREFIX).startRevision(start).create();
    placements.on('put', (kv) => this.table.setPlacement(Number(kv.mod_revision), suffix(kv, PLACEMENT_PREFIX), kv.value.toString('utf8')));
    placements.on('delete', (kv) => this.table.setPlacement(Number(kv.mod_revision), suffix(kv, PLACEMENT_PREFIX), null));
    const spaces = await this.#client.watch().prefix(SPACES_PREFIX).startRevision(start).create();
    spaces.on('put', (kv) => this.table.setSpace(Number(kv.mod_revision), suffix(kv, SPACES_PREFIX), kv.value.toString('utf8')));
    spaces.on('delete', (kv) => this.table.setSpace(Number(kv.mod_revision), suffix(kv, SPACES_PREFIX), null));
    for (const w of [placements, spaces]) {
      // The client re-establishes the watch by itself; the probe decides reachability.
      w.on('error', () => undefined);
      w.on('disconnected', () => undefined);
      this.#watchers.push(w);
    }
  }

  async #probe(first = false): Promise<void> {
    if (this.#closed) return;
    try {
      const revision = await this.#readAll();
      if (this.table.trustedUntil() !== null || first) this.#opts.log(`placement: read from etcd at revision ${revision}`);
      this.table.reachable();
      if (this.#watchers.length === 0) await within(CALL_MS, this.#watch(revision));
      await this.#publishPending();
    } catch (error) {
      if (this.table.unreachable(Date.now()))
        this.#opts.log(
          `placement: etcd unreachable (${(error as Error).message}); keeping the last known placements for ${this.#opts.staleMs} ms, then answering 503`,
        );
    } finally {
      if (!this.#closed) this.#timer = setTimeout(() => void this.#probe(), this.table.trustedUntil() === null ? PROBE_MS : PROBE_LOST_MS);
    }
  }

  /** A commit listener: notes the `svc:` spaces this commit wrote first. */
  async noteCommit(group: Readonly<CommitGroup>, firstWriterOf: (space: string) => Promise<string | null>): Promise<void> {
    let added = false;
    for (const node of group.nodes) {
      if (!node.space.startsWith('svc:') || this.#published.has(node.space) || this.#unpublished.has(node.space)) continue;
      if ((await firstWriterOf(node.space)) !== node.tenant) continue;
      this.#unpublished.set(node.space, node.tenant);
      added = true;
    }
    if (added) void this.#publishPending().catch(() => undefined);
  }

  async #publishPending(): Promise<void> {
    for (const [space, tenant] of [...this.#unpublished]) {
      const key = `${SPACES_PREFIX}${space}`;
      // Only if absent: the first writer is the first one ever, whichever server recorded it.
      await within(CALL_MS, this.#client.if(key, 'Create', '==', 0).then(this.#client.put(key).value(tenant)).commit());
      this.#unpublished.delete(space);
      this.#published.add(space);
    }
  }

  /**
   * Publishes `/servers/<id>` = {"url"} under a lease kept alive by the client; a lost lease (etcd away
   * longer than its TTL) is granted anew once etcd answers, so the entry comes back by itself.
   */
  register(url: string): void {
    if (this.#closed) return;
    // A client of its own: the etcd client opens a circuit breaker after failed calls, and a registration
    // failing under load must not hold back the placement reads.
    this.#registrar ??= new Etcd3({
      hosts: this.#opts.hosts,
      dialTimeout: CALL_MS,
      defaultCallOptions: (context) => (context.isStream ? {} : { deadline: Date.now() + 3 * CALL_MS }),
    });
    const lease = this.#registrar.lease(SERVER_LEASE_S);
    this.#lease = lease;
    let retried = false;
    const again = (why: string): void => {
      if (retried || this.#closed) return;
      retried = true;
      this.#opts.log(`placement: registration as ${this.#opts.serverId} lost (${why}); registering again in 1 s`);
      lease.release();
      setTimeout(() => this.register(url), 1_000).unref();
    };
    lease.on('lost', (error) => again(error.message));
    lease
      .put(`${SERVERS_PREFIX}${this.#opts.serverId}`)
      .value(JSON.stringify({ url }))
      .then(() => this.#opts.log(`placement: registered as ${this.#opts.serverId} at ${url}`))
      .catch((error: unknown) => again((error as Error).message));
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearTimeout(this.#timer);
    // Revoked so a stopped server leaves the list at once rather than after the lease's TTL.
    await this.#lease?.revoke({ deadline: Date.now() + CALL_MS }).catch(() => undefined);
    this.#registrar?.close();
    await Promise.allSettled(this.#watchers.map((w) => w.cancel()));
    this.#client.close();
  }
}
