// Which server answers for a tenant, as last read from etcd, and what this server does with a request for
// it. Pure (no etcd, no clock of its own) so the rules are tested without a cluster; etcd-placement.ts
// feeds it.
import { z } from 'zod';

/** etcd keys: `/placement/<tenant>` holds a PlacementRecord as JSON. */
export const PLACEMENT_PREFIX = '/placement/';
/** `/keys/<sha256 hex of an API key>` holds the key's tenant: the proxy's map is built from these. */
export const KEYS_PREFIX = '/keys/';
/** `/spaces/<svc: space>` holds the space's first writer, published by the server that committed it. */
export const SPACES_PREFIX = '/spaces/';
/** `/servers/<id>` holds `{"url": ...}`, each server's advertised base URL under a lease: a dead server's
 * entry disappears within the lease's TTL. `memory-ledger move` finds servers here. */
export const SERVERS_PREFIX = '/servers/';
export const SERVER_LEASE_S = 10;

export const PlacementRecordSchema = z
  .object({
    server: z.string().min(1),
    epoch: z.number().int().nonnegative(),
    state: z.enum(['active', 'frozen']),
  })
  .strict();
export type PlacementRecord = z.infer<typeof PlacementRecordSchema>;

/** A stored value that is not a placement: its tenant is refused until an operator fixes it. */
export interface BrokenRecord {
  broken: string;
}

export function parsePlacement(text: string): PlacementRecord | BrokenRecord {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return { broken: 'not JSON' };
  }
  const parsed = PlacementRecordSchema.safeParse(json);
  return parsed.success
    ? parsed.data
    : { broken: parsed.error.issues.map((i) => `${i.path.join('.') || 'value'}: ${i.message}`).join('; ') };
}

export type Admission =
  /** Placed here and active, or placed nowhere (`epoch` null): the proxy's consistent hash sent it here. */
  | { kind: 'serve'; epoch: number | null }
  | { kind: 'elsewhere'; server: string; epoch: number }
  | { kind: 'frozen'; epoch: number }
  | { kind: 'unavailable'; why: string };

export class PlacementTable {
  readonly #self: string;
  readonly #staleMs: number;
  readonly #records = new Map<string, PlacementRecord | BrokenRecord>();
  readonly #spaces = new Map<string, string>();
  /** The highest etcd revision applied: a full read older than an applied watch event is not replayed over it. */
  #revision = 0;
  #loaded = false;
  /** When etcd was first found unreachable in the current outage; null while it answers. */
  #lostAt: number | null = null;

  constructor(self: string, staleMs: number) {
    this.#self = self;
    this.#staleMs = staleMs;
  }

  get revision(): number {
    return this.#revision;
  }

  /** A full read of both prefixes at `revision`; ignored when a newer watch event has been applied. */
  replaceAll(revision: number, placements: Iterable<[string, string]>, spaces: Iterable<[string, string]>): boolean {
    if (revision < this.#revision) return false;
    this.#records.clear();
    for (const [tenant, text] of placements) this.#records.set(tenant, parsePlacement(text));
    this.#spaces.clear();
    for (const [space, tenant] of spaces) this.#spaces.set(space, tenant);
    this.#revision = revision;
    this.#loaded = true;
    return true;
  }

  /** One watched change: `text` null for a deletion. */
  setPlacement(revision: number, tenant: string, text: string | null): void {
    if (text === null) this.#records.delete(tenant);
    else this.#records.set(tenant, parsePlacement(text));
    this.#revision = Math.max(this.#revision, revision);
  }

  setSpace(revision: number, space: string, tenant: string | null): void {
    if (tenant === null) this.#spaces.delete(space);
    else this.#spaces.set(space, tenant);
    this.#revision = Math.max(this.#revision, revision);
  }

  reachable(): void {
    this.#lostAt = null;
  }

  /** Returns true on the first call of an outage (the caller logs it once). */
  unreachable(now: number): boolean {
    if (this.#lostAt !== null) return false;
    this.#lostAt = now;
    return true;
  }

  /** The moment the last known placement stops being trusted, or null while etcd answers. */
  trustedUntil(): number | null {
    return this.#lostAt === null ? null : this.#lostAt + this.#staleMs;
  }

  placementOf(tenant: string): PlacementRecord | BrokenRecord | undefined {
    return this.#records.get(tenant);
  }

  /** The tenant a `svc:` space was published under, when this server has not seen the space itself. */
  spaceTenant(space: string): string | null {
    return this.#spaces.get(space) ?? null;
  }

  admit(tenant: string, now: number): Admission {
    if (!this.#loaded) return { kind: 'unavailable', why: 'this server has not read the placements from etcd yet' };
    if (this.#lostAt !== null && now - this.#lostAt > this.#staleMs)
      return {
        kind: 'unavailable',
        why: `etcd has been unreachable for ${Math.round((now - this.#lostAt) / 1000)} s, longer than this server trusts its last known placements`,
      };
    const record = this.#records.get(tenant);
    if (record === undefined) return { kind: 'serve', epoch: null };
    if ('broken' in record) return { kind: 'unavailable', why: `the placement of tenant ${tenant} in etcd is invalid (${record.broken})` };
    if (record.server !== this.#self) return { kind: 'elsewhere', server: record.server, epoch: record.epoch };
    if (record.state === 'frozen') return { kind: 'frozen', epoch: record.epoch };
    return { kind: 'serve', epoch: record.epoch };
  }
}
