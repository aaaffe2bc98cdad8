// Per tenant, a filter of the ids and spaces the store holds, so a write naming an id the tenant never
// wrote (most writes: new memories) asks the store nothing, and a write into a new space loads no view
// from it. A Bloom filter: it never answers "absent" for a key held (a key it wrongly holds costs a
// lookup, as before), and its size is bounded by the tenant's keys (~2.5 bytes each), not by their text.
// Built the first time a tenant's write needs a lookup, from one read of the tenant's keys in the store,
// then kept exact by every commit; forgotten past a budget (tenant-builds.ts). A clean close saves the filters built
// (held-keys-file.ts) and the next open takes them back when nothing was written since, so a restart does
// not read a large tenant's ids again (2.4M at 3M rows, while its first writes each looked their ids up).
import { idPlacements, type CommitGroup } from '../commit-group.ts';
import { hashInto, type KeyHashes } from './key-hashes.ts';
import { TenantBuilds, type TenantBuilt } from './tenant-builds.ts';

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
const ID_PREFIX = String.fromCharCode(ID);
const SPACE_PREFIX = String.fromCharCode(SPACE);

/** Where a read of a tenant's keys hands them: first how many there are, then each id and space. */
export interface TenantKeysSink {
  count(keys: number): void;
  id(id: string): void;
  space(space: string): void;
}
/** Reads every id and space the store holds for the tenant. */
export type ReadTenantKeys = (tenant: string, sink: TenantKeysSink) => Promise<void>;

/** A growing filter as TenantBuilds keeps it: a key to add is its kind's code unit then its text. */
class TenantFilter implements TenantBuilt<string> {
  constructor(readonly filter: GrowingFilter) {}

  get bytes(): number {
    return this.filter.bytes;
  }

  add(key: string): number {
    return this.filter.add(hashInto(scratch, key));
  }
}

export class HeldKeys {
  readonly #filters: TenantBuilds<string, TenantFilter>;

  constructor(read: ReadTenantKeys, budget = HELD_KEYS_BYTES) {
    this.#filters = new TenantBuilds('ids held', (tenant) => buildFilter(read, tenant), budget);
  }

  /** Filters built from the store, and taken back from a save (tests and benchmarks). */
  get builds(): number {
    return this.#filters.builds;
  }

  get restored(): number {
    return this.#filters.adopted;
  }

  /**
   * Whether the tenant's store certainly holds no row naming `id` (no version of it, no edge touching it);
   * false when it may, or when the tenant's filter is not built (the first call starts its build).
   */
  idAbsent(tenant: string, id: string): boolean {
    const held = this.#filters.ready(tenant);
    return held !== null && !held.filter.mayHold(hashInto(scratch, id, ID));
  }

  /** Whether the tenant's store certainly holds no row in `space`; false when it may, or unknown. */
  spaceAbsent(tenant: string, space: string): boolean {
    const held = this.#filters.ready(tenant, false);
    return held !== null && !held.filter.mayHold(hashInto(scratch, space, SPACE));
  }

  /** Whether the tenant's filter is built. */
  ready(tenant: string): boolean {
    return this.#filters.isReady(tenant);
  }

  /** The filters built, as saved (the least recently used first). */
  saved(): SavedFilter[] {
    return [...this.#filters.built()].map(([tenant, held]) => ({ tenant, slices: held.filter.saved() }));
  }

  /**
   * Takes back filters saved when the store held exactly what it held on open, once `reading` gives them
   * (null: none to take); commits meanwhile are added to them. A tenant whose filter is already here keeps it.
   */
  restore(reading: Promise<readonly SavedFilter[] | null>): void {
    this.#filters.take(
      reading.then((filters) =>
        (filters ?? []).map((saved): [string, TenantFilter] => [saved.tenant, new TenantFilter(new GrowingFilter(0, saved.slices))]),
      ),
    );
  }

  /** Resolves once the filters given to `restore` are taken back (or could not be read). */
  restoreEnded(): Promise<void> {
    return this.#filters.taken();
  }

  /** Resolves once the tenant's filter is built or its build failed (tests). */
  settled(tenant: string): Promise<void> {
    return this.#filters.settled(tenant);
  }

  /** A committed group's ids and spaces, added to the filters built or being built. */
  commit(group: Readonly<CommitGroup>): void {
    const to = this.#filters.committer();
    if (!to) return;
    // Each space once (a bulk request's thousand rows share one), so it takes one key's room.
    const spaces = new Map<string, string>();
    const inSpace = (tenant: string, space: string): void => {
      spaces.set(`${tenant}\u001f${space}`, tenant);
    };
    for (const [tenant, id, space] of idPlacements(group)) {
      to.add(tenant, ID_PREFIX + id);
      inSpace(tenant, space);
    }
    for (const i of group.invalidations) inSpace(i.tenant, i.space);
    for (const l of group.invalidationSpaces) inSpace(l.row.tenant, l.space);
    for (const [key, tenant] of spaces) to.add(tenant, SPACE_PREFIX + key.slice(tenant.length + 1));
    to.done();
  }

  drop(tenant: string): void {
    this.#filters.drop(tenant);
  }
}

/** A tenant's filter from one read of its keys: sized once the store says how many it holds, the keys going straight in (never all held as text). */
async function buildFilter(read: ReadTenantKeys, tenant: string): Promise<TenantFilter> {
  let filter: GrowingFilter | null = null;
  const add = (text: string, kind: number): void => {
    filter ??= new GrowingFilter(MIN_KEYS);
    filter.add(hashInto(scratch, text, kind));
  };
  await read(tenant, {
    count: (keys) => {
      filter ??= new GrowingFilter(keys);
    },
    id: (id) => add(id, ID),
    space: (space) => add(space, SPACE),
  });
  return new TenantFilter(filter ?? new GrowingFilter(0));
}
