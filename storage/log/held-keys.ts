// Per tenant, a filter of the ids and spaces the store holds, so a write naming an id the tenant never
// wrote (most writes: new memories) asks the store nothing, and a write into a new space loads no view
// from it. A Bloom filter: it never answers "absent" for a key held (a key it wrongly holds costs a
// lookup, as before), and its size is bounded by the tenant's keys (~2.5 bytes each), not by their text.
// Built lazily, the first time a tenant's write needs a lookup, from one read of the tenant's keys in the
// store (start-up reads nothing); kept exact by every commit from the moment the build begins, so the
// rows the read misses (committed after it) are added anyway. The least recently used tenants' filters
// are forgotten past a budget in bytes, and built again when needed. A clean close saves the filters built
// (held-keys-file.ts) and the next open takes them back when nothing was written since, so a restart does
// not read a large tenant's ids again (2.4M at 3M rows, while its first writes each looked their ids up).
import { idPlacements, type CommitGroup } from '../commit-group.ts';

/**
 * Bits per key and hash functions: ~0.01% of absent keys answered "maybe held" by a full slice. An
 * absent key is tested against every slice (about ten at 2M keys), and past 40 "maybe" ids a write's
 * lookup scans the tenant's ids in the store: at 10 bits and 7 hashes (~0.8% a slice) a 1,000-id
 * request into a tenant of 1.2M ids had ~70 of them, and each such request cost a scan (~1 s there).
 */
const BITS_PER_KEY = 20;
const HASHES = 10;
/** Filters of all tenants together, in bytes, before the least recently used are forgotten. */
export const HELD_KEYS_BYTES = 64 * 1024 * 1024;
/** A filter is made with room for twice the keys read (and at least this many); past its room it adds a slice. */
const MIN_KEYS = 4_096;

const SEED_1 = 0x811c9dc5;
const SEED_2 = 0x9747b28c;

/** 32-bit FNV-1a of `prefix` (a code unit, or -1 for none) then the string's UTF-16 code units, from `seed`. */
function fnv(text: string, seed: number, prefix = -1): number {
  let h = seed;
  if (prefix >= 0) h = Math.imul(h ^ prefix, 0x01000193);
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/**
 * A key's two hashes, from which its bits in every filter are derived: worked out once per key, not once
 * per slice it is tested against (an absent id is tested against all of them; hashing it again per slice
 * was most of a bulk write's planning lookups once a tenant's filter had grown a few slices).
 */
export interface KeyHashes {
  h1: number;
  h2: number;
}

/** The hashes of `prefix` (a code unit) followed by `text`, into `out` (no string is made for the key). */
function hashInto(out: KeyHashes, text: string, prefix = -1): KeyHashes {
  out.h1 = fnv(text, SEED_1, prefix);
  out.h2 = fnv(text, SEED_2, prefix) | 1;
  return out;
}

/** A Bloom filter of a fixed number of bits, with room for `keys` keys at ~1% false answers. */
export class BloomFilter {
  readonly #bits: Uint32Array;
  readonly #size: number;
  readonly room: number;
  count = 0;

  constructor(keys: number, saved?: SavedSlice) {
    this.room = Math.max(1, Math.ceil(keys));
    this.#size = Math.max(64, this.room * BITS_PER_KEY);
    this.#bits = new Uint32Array(Math.ceil(this.#size / 32));
    if (saved) {
      if (saved.bits.length !== this.#bits.length)
        throw new Error(`a saved filter slice of room ${saved.room} has ${saved.bits.length} words, not ${this.#bits.length}`);
      this.#bits.set(saved.bits);
      this.count = saved.count;
    }
  }

  /** The slice as saved: its room, its count and its bits (a view, not a copy). */
  saved(): SavedSlice {
    return { room: this.room, count: this.count, bits: this.#bits };
  }

  get bytes(): number {
    return this.#bits.byteLength;
  }

  add(key: string): void {
    this.addHashed(hashInto(scratch, key));
  }

  mayHold(key: string): boolean {
    return this.mayHoldHashed(hashInto(scratch, key));
  }

  addHashed({ h1, h2 }: KeyHashes): void {
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const at = bit % this.#size;
      this.#bits[at >>> 5]! |= 1 << (at & 31);
    }
    this.count++;
  }

  mayHoldHashed({ h1, h2 }: KeyHashes): boolean {
    for (let i = 0; i < HASHES; i++) {
      const bit = (h1 + Math.imul(i, h2)) >>> 0;
      const at = bit % this.#size;
      if ((this.#bits[at >>> 5]! & (1 << (at & 31))) === 0) return false;
    }
    return true;
  }
}

/** Reused for every key: the filters are used on one thread, one key at a time. */
const scratch: KeyHashes = { h1: 0, h2: 0 };

/** One slice of a filter as saved: what it was made with room for, how many keys it holds, its bits. */
export interface SavedSlice {
  room: number;
  count: number;
  bits: Uint32Array;
}

/** A tenant's filter as saved, slice after slice. */
export interface SavedFilter {
  tenant: string;
  slices: SavedSlice[];
}

/** Slices of Bloom filters, each with twice the room of the one before, so the false answers stay few as keys are added. */
class GrowingFilter {
  readonly #slices: BloomFilter[];

  constructor(keys: number, saved?: readonly SavedSlice[]) {
    this.#slices =
      saved && saved.length > 0 ? saved.map((s) => new BloomFilter(s.room, s)) : [new BloomFilter(Math.max(MIN_KEYS, 2 * keys))];
  }

  saved(): SavedSlice[] {
    return this.#slices.map((s) => s.saved());
  }

  get bytes(): number {
    return this.#slices.reduce((n, s) => n + s.bytes, 0);
  }

  /** Adds the key (as its hashes); returns the bytes of the slice made for it, if one was. */
  add(key: KeyHashes): number {
    let last = this.#slices[this.#slices.length - 1]!;
    let grown = 0;
    if (last.count >= last.room) {
      this.#slices.push((last = new BloomFilter(2 * last.room)));
      grown = last.bytes;
    }
    last.addHashed(key);
    return grown;
  }

  mayHold(key: KeyHashes): boolean {
    for (const slice of this.#slices) if (slice.mayHoldHashed(key)) return true;
    return false;
  }
}

/** Keys of ids and spaces share one filter: an id is hashed after the code unit `i`, a space after `s`. */
const ID = 'i'.charCodeAt(0);
const SPACE = 's'.charCodeAt(0);

/** Where a read of a tenant's keys hands them: first how many there are, then each id and space. */
export interface TenantKeysSink {
  count(keys: number): void;
  id(id: string): void;
  space(space: string): void;
}
/** Reads every id and space the store holds for the tenant. */
export type ReadTenantKeys = (tenant: string, sink: TenantKeysSink) => Promise<void>;

/** `pending`: keys committed while the filter is built, each its kind's code unit then its text. */
type State = { kind: 'building'; pending: string[] } | { kind: 'ready'; filter: GrowingFilter } | { kind: 'failed'; at: number };

/** After a build failed (the store refused the read), the tenant's writes look up as before for this long. */
const RETRY_AFTER_MS = 10_000;

export class HeldKeys {
  /** Per tenant, least recently used first. */
  readonly #tenants = new Map<string, State>();
  #bytes = 0;
  /** The tenant last moved to the end of the order of use. */
  #lastUsed: string | null = null;
  /** Filters built from the store, and taken back from a save (tests and benchmarks). */
  builds = 0;
  restored = 0;

  constructor(
    private readonly read: ReadTenantKeys,
    private readonly budget = HELD_KEYS_BYTES,
  ) {}

  /**
   * Whether the tenant's store certainly holds no row naming `id` (no version of it, no edge touching it);
   * false when it may, or when the tenant's filter is not built (the first call starts its build).
   */
  idAbsent(tenant: string, id: string): boolean {
    const filter = this.#ready(tenant);
    return filter !== null && !filter.mayHold(hashInto(scratch, id, ID));
  }

  /** Whether the tenant's store certainly holds no row in `space`; false when it may, or unknown. */
  spaceAbsent(tenant: string, space: string): boolean {
    const filter = this.#ready(tenant, false);
    return filter !== null && !filter.mayHold(hashInto(scratch, space, SPACE));
  }

  /** Whether the tenant's filter is built. */
  ready(tenant: string): boolean {
    return this.#tenants.get(tenant)?.kind === 'ready';
  }

  /** The filters built, as saved (the least recently used first). */
  saved(): SavedFilter[] {
    const out: SavedFilter[] = [];
    for (const [tenant, state] of this.#tenants) if (state.kind === 'ready') out.push({ tenant, slices: state.filter.saved() });
    return out;
  }

  /**
   * Takes back filters saved when the store held exactly what it holds now (before any commit: on open). A
   * tenant whose filter is already here keeps it.
   */
  restore(filters: readonly SavedFilter[]): void {
    for (const saved of filters) {
      if (this.#tenants.has(saved.tenant)) continue;
      const filter = new GrowingFilter(0, saved.slices);
      this.#tenants.set(saved.tenant, { kind: 'ready', filter });
      this.#bytes += filter.bytes;
      this.restored++;
    }
    this.#evict();
  }

  /** Resolves once the tenant's filter is built or its build failed (tests). */
  async settled(tenant: string): Promise<void> {
    while (this.#tenants.get(tenant)?.kind === 'building') await new Promise((r) => setTimeout(r, 5));
  }

  #ready(tenant: string, build = true): GrowingFilter | null {
    const state = this.#tenants.get(tenant);
    if (state?.kind === 'ready') {
      // Moved to the end of the order of use once per run of calls for one tenant, not per id (a Map's
      // delete and set for each of a bulk request's ids was a tenth of its planning in a profile).
      if (this.#lastUsed !== tenant) {
        this.#tenants.delete(tenant);
        this.#tenants.set(tenant, state);
        this.#lastUsed = tenant;
      }
      return state.filter;
    }
    if (build && (!state || (state.kind === 'failed' && Date.now() - state.at >= RETRY_AFTER_MS))) this.#build(tenant);
    return null;
  }

  #build(tenant: string): void {
    // Registered before the read starts: a commit landing from now on is in `pending`; one landed before
    // is in the store when the read runs (a commit is applied here only after the store holds it).
    const state: State = { kind: 'building', pending: [] };
    this.#tenants.set(tenant, state);
    this.builds++;
    // Sized once the store says how many keys it holds; the keys go straight in (never all held as text).
    let filter: GrowingFilter | null = null;
    const add = (text: string, kind: number): void => {
      filter ??= new GrowingFilter(MIN_KEYS);
      filter.add(hashInto(scratch, text, kind));
    };
    void this.read(tenant, {
      count: (keys) => {
        filter ??= new GrowingFilter(keys + state.pending.length);
      },
      id: (id) => add(id, ID),
      space: (space) => add(space, SPACE),
    }).then(
      () => {
        // Dropped (or forgotten) while it read: the answer is not kept.
        if (this.#tenants.get(tenant) !== state) return;
        const built = filter ?? new GrowingFilter(state.pending.length);
        for (const k of state.pending) built.add(hashInto(scratch, k));
        this.#tenants.set(tenant, { kind: 'ready', filter: built });
        this.#bytes += built.bytes;
        this.#evict(tenant);
      },
      (error: unknown) => {
        if (this.#tenants.get(tenant) !== state) return;
        this.#tenants.set(tenant, { kind: 'failed', at: Date.now() });
        console.error(`ids held by tenant ${tenant}: reading them failed, writes look each id up meanwhile:`, error);
      },
    );
  }

  /** A committed group's ids and spaces, added to the filters built or being built. */
  commit(group: Readonly<CommitGroup>): void {
    if (this.#tenants.size === 0) return;
    // A group's rows are mostly one tenant's: its state is looked up once per run of them.
    let at: string | null = null;
    let state: State | undefined;
    const add = (tenant: string, text: string, kind: number): void => {
      if (tenant !== at) {
        at = tenant;
        state = this.#tenants.get(tenant);
      }
      if (state?.kind === 'building') state.pending.push(String.fromCharCode(kind) + text);
      else if (state?.kind === 'ready') this.#bytes += state.filter.add(hashInto(scratch, text, kind));
    };
    // Each space once (a bulk request's thousand rows share one), so it takes one key's room.
    const spaces = new Map<string, string>();
    const inSpace = (tenant: string, space: string): void => {
      spaces.set(`${tenant}\u001f${space}`, tenant);
    };
    for (const [tenant, id, space] of idPlacements(group)) {
      add(tenant, id, ID);
      inSpace(tenant, space);
    }
    for (const i of group.invalidations) inSpace(i.tenant, i.space);
    for (const l of group.invalidationSpaces) inSpace(l.row.tenant, l.space);
    for (const [key, tenant] of spaces) add(tenant, key.slice(tenant.length + 1), SPACE);
    if (this.#bytes > this.budget) this.#evict();
  }

  drop(tenant: string): void {
    if (this.#lastUsed === tenant) this.#lastUsed = null;
    const state = this.#tenants.get(tenant);
    if (state?.kind === 'ready') this.#bytes -= state.filter.bytes;
    this.#tenants.delete(tenant);
  }

  /** Forgets the least recently used filters (never `keep`) while over budget. */
  #evict(keep?: string): void {
    for (const [tenant, state] of this.#tenants) {
      if (this.#bytes <= this.budget) return;
      if (tenant === keep || state.kind !== 'ready') continue;
      this.drop(tenant);
    }
  }
}
