// Per tenant, the space holding each id, for reads by id without a space (get_memory, why, a search's
// links): such a read looks an id's spaces up before it loads them, and under load that lookup in the store
// waited its turn behind the store's other reads (tens of milliseconds each at 2,000 users, hundreds at
// p99). Held in typed arrays (12 bytes a slot, 17-34 an id, nothing for V8's collector to walk): an open-addressed
// table from an id's two 32-bit hashes (key-hashes.ts) to a number naming its space. Built from one read of
// the tenant's (id, space) pairs and kept exact by every commit (tenant-builds.ts).
//
// Only for reads. Two ids whose hashes are equal share a slot: the slot names their space when it is the
// same one, and otherwise says "several", which sends the read to the store. An id the tenant never wrote
// whose hashes match one it did is thus answered with that id's space: a read loads a space holding
// nothing of it, and answers as the store would. A write's plan still asks the store (or the known ids).
import { idPlacements, type CommitGroup } from '../commit-group.ts';
import { envMegabytes } from '../env-megabytes.ts';
import { hashInto, type KeyHashes } from './key-hashes.ts';
import { TenantBuilds, type TenantBuilt } from './tenant-builds.ts';

/** The tables of all tenants together, in MB, before the least recently used are forgotten: `SVC_ID_PLACES_MB`, 0 for none. */
export const ID_PLACES_MB = 64;

export function idPlacesMb(env: NodeJS.ProcessEnv = process.env): number {
  return envMegabytes(env, 'SVC_ID_PLACES_MB', ID_PLACES_MB, 0);
}

/** Time a tenant's reads spend asking the store for ids' spaces before its table is built (IdPlaces.lookedUp), ms. */
export const BUILD_AFTER_LOOKUP_MS = 2_000;

/** A slot holding no id. */
const EMPTY = -1;
/** A slot whose ids are held by more than one space: the store is asked. */
const SEVERAL = -2;
/** Slots filled at most this share before the table doubles. */
const MAX_LOAD = 0.7;
/** The fewest slots a table is made with. */
const MIN_SLOTS = 1 << 10;
/** What a space's name costs beside its text: its entry in the map of codes and its place in the list. */
const SPACE_OVERHEAD_BYTES = 64;

/** An id and a space holding it. */
export type Placement = readonly [id: string, space: string];

/** A tenant's table as saved: its spaces by code and its three arrays (saved() gives views of the table's own). */
export interface SavedPlaces {
  tenant: string;
  count: number;
  spaces: string[];
  h1: Uint32Array;
  h2: Uint32Array;
  code: Int32Array;
}

/** Reads every (id, space) pair the store holds for the tenant: first how many, then each. */
export type ReadTenantPlacements = (
  tenant: string,
  sink: { count(pairs: number): void; pair(id: string, space: string): void },
) => Promise<void>;

const scratch: KeyHashes = { h1: 0, h2: 0 };

function slotsFor(ids: number): number {
  let slots = MIN_SLOTS;
  while (slots * MAX_LOAD < ids) slots *= 2;
  return slots;
}

/** One tenant's table. */
export class PlacesTable implements TenantBuilt<Placement> {
  #h1: Uint32Array;
  #h2: Uint32Array;
  #code: Int32Array;
  #count = 0;
  readonly #spaces: string[] = [];
  readonly #codes = new Map<string, number>();
  #spaceBytes = 0;

  constructor(ids = 0) {
    const slots = slotsFor(ids);
    this.#h1 = new Uint32Array(slots);
    this.#h2 = new Uint32Array(slots);
    this.#code = new Int32Array(slots).fill(EMPTY);
  }

  /**
   * A saved table taken back, or null when it is not one this class could have made: slots a power of two
   * of at least MIN_SLOTS, every code a space's or EMPTY or SEVERAL, `count` the slots filled.
   */
  static fromSaved(s: Omit<SavedPlaces, 'tenant'>): PlacesTable | null {
    const slots = s.code.length;
    if (slots < MIN_SLOTS || (slots & (slots - 1)) !== 0 || s.h1.length !== slots || s.h2.length !== slots) return null;
    if (new Set(s.spaces).size !== s.spaces.length || s.spaces.some((x) => typeof x !== 'string')) return null;
    let filled = 0;
    for (const c of s.code) {
      if (c >= s.spaces.length || c < SEVERAL) return null;
      if (c !== EMPTY) filled++;
    }
    if (filled !== s.count || filled > slots * MAX_LOAD) return null;
    const table = new PlacesTable();
    table.#h1 = s.h1;
    table.#h2 = s.h2;
    table.#code = s.code;
    table.#count = s.count;
    for (const space of s.spaces) table.#codeOf(space);
    return table;
  }

  /** The table as saved. */
  saved(tenant: string): SavedPlaces {
    return { tenant, count: this.#count, spaces: [...this.#spaces], h1: this.#h1, h2: this.#h2, code: this.#code };
  }

  /** Ids (slots) held. */
  get count(): number {
    return this.#count;
  }

  get bytes(): number {
    return this.#code.length * 12 + this.#spaceBytes;
  }

  add([id, space]: Placement): number {
    return this.put(id, space);
  }

  /** Adds a pair; returns the bytes the table grew by. */
  put(id: string, space: string): number {
    const before = this.bytes;
    const code = this.#codeOf(space);
    if ((this.#count + 1) / this.#code.length > MAX_LOAD) this.#grow();
    hashInto(scratch, id);
    this.#place(scratch.h1, scratch.h2, code);
    return this.bytes - before;
  }

  #codeOf(space: string): number {
    let code = this.#codes.get(space);
    if (code === undefined) {
      code = this.#spaces.length;
      this.#spaces.push(space);
      this.#codes.set(space, code);
      this.#spaceBytes += 2 * space.length + SPACE_OVERHEAD_BYTES;
    }
    return code;
  }

  /**
   * The spaces holding the id: empty when no row of the tenant names it; undefined when its slot is held by
   * more than one space (ask the store).
   */
  spacesOf(id: string): Set<string> | undefined {
    hashInto(scratch, id);
    const code = this.#code[this.#find(scratch.h1, scratch.h2)]!;
    if (code === SEVERAL) return undefined;
    return code === EMPTY ? new Set() : new Set([this.#spaces[code]!]);
  }

  /** The slot of the hashes: theirs, or the empty one where they would go. */
  #find(h1: number, h2: number): number {
    const mask = this.#code.length - 1;
    // Linear probing from a start the second hash mixes in, so ids whose first hashes cluster spread out.
    let at = (h1 ^ Math.imul(h2, 0x9e3779b1)) & mask;
    for (;;) {
      const code = this.#code[at]!;
      if (code === EMPTY || (this.#h1[at] === h1 && this.#h2[at] === h2)) return at;
      at = (at + 1) & mask;
    }
  }

  #place(h1: number, h2: number, code: number): void {
    const at = this.#find(h1, h2);
    const held = this.#code[at]!;
    if (held === EMPTY) {
      this.#h1[at] = h1;
      this.#h2[at] = h2;
      this.#code[at] = code;
      this.#count++;
    } else if (held !== code) this.#code[at] = SEVERAL;
  }

  #grow(): void {
    const [h1, h2, codes] = [this.#h1, this.#h2, this.#code];
    const slots = 2 * codes.length;
    this.#h1 = new Uint32Array(slots);
    this.#h2 = new Uint32Array(slots);
    this.#code = new Int32Array(slots).fill(EMPTY);
    this.#count = 0;
    for (let i = 0; i < codes.length; i++) if (codes[i] !== EMPTY) this.#place(h1[i]!, h2[i]!, codes[i]!);
  }
}

export class IdPlaces {
  readonly #tables: TenantBuilds<Placement, PlacesTable>;
  /** Ids answered here, and asked of the store instead because the tenant's table was not built or said "several". */
  answered = 0;
  missed = 0;

  /** Per tenant without a table, the time its reads spent asking the store so far (ms). */
  readonly #asked = new Map<string, number>();

  constructor(
    read: ReadTenantPlacements,
    budget = ID_PLACES_MB * 1024 * 1024,
    readonly buildAfterMs = BUILD_AFTER_LOOKUP_MS,
  ) {
    this.#tables = new TenantBuilds('places of ids', (tenant) => buildTable(read, tenant), budget);
  }

  /**
   * The spaces holding the tenant's id (empty: none), or undefined when not known here: the tenant's table
   * is not built (see lookedUp) or the id's slot is held by several spaces.
   */
  spacesOf(tenant: string, id: string): Set<string> | undefined {
    const spaces = this.#tables.ready(tenant, false)?.spacesOf(id);
    if (spaces) this.answered++;
    else this.missed++;
    return spaces;
  }

  /**
   * Reads of the tenant spent `ms` asking the store for ids' spaces: once they spent `buildAfterMs` in
   * all, about what the scan building its table costs (2.4 s at 300k rows under load), the table is built,
   * as one rents until the rent paid would have bought. A tenant whose reads by id ask the store little
   * (the known ids answer most) never pays the scan, which holds the store's reads behind it while Kuzu
   * writes the pairs out: built on the first read, two whole-tenant list pages after a start waited ~170 ms
   * each at 30k rows; built after 1,000 ids asked, a 300k-row tenant under load reached that only after
   * ~25 s of slow gets.
   */
  lookedUp(tenant: string, ms: number): void {
    if (this.#tables.isReady(tenant)) return;
    const asked = (this.#asked.get(tenant) ?? 0) + ms;
    if (asked < this.buildAfterMs) return void this.#asked.set(tenant, asked);
    this.#asked.delete(tenant);
    this.#tables.ready(tenant);
  }

  /** Resolves once the tenant's table is built or its build failed (tests). */
  settled(tenant: string): Promise<void> {
    return this.#tables.settled(tenant);
  }

  get bytes(): number {
    return this.#tables.bytes;
  }

  /** The tables built, as saved (the least recently used first). */
  saved(): SavedPlaces[] {
    return [...this.#tables.built()].map(([tenant, table]) => table.saved(tenant));
  }

  /**
   * Takes back tables saved when the store held exactly what it held on open, once `reading` gives them
   * (null: none to take); commits meanwhile are added to them. A table this class could not have made is
   * left out: the tenant's is built from the store when needed.
   */
  restore(reading: Promise<readonly SavedPlaces[] | null>): void {
    this.#tables.take(
      reading.then((saved) =>
        (saved ?? []).flatMap((s): [string, PlacesTable][] => {
          const table = PlacesTable.fromSaved(s);
          return table ? [[s.tenant, table]] : [];
        }),
      ),
    );
  }

  /** Resolves once the tables given to `restore` are taken back (or could not be read). */
  restoreEnded(): Promise<void> {
    return this.#tables.taken();
  }

  /** Tables taken back from the last close. */
  get restored(): number {
    return this.#tables.adopted;
  }

  /** Tables built, and their builds' time summed (ms). */
  get builds(): { count: number; ms: number } {
    return { count: this.#tables.builds, ms: this.#tables.buildMs };
  }

  /** A committed group's pairs, added to the tables built or being built. */
  commit(group: Readonly<Pick<CommitGroup, 'nodes' | 'edges'>>): void {
    const to = this.#tables.committer();
    if (!to) return;
    for (const [tenant, id, space] of idPlacements(group)) to.add(tenant, [id, space]);
    to.done();
  }

  drop(tenant: string): void {
    this.#asked.delete(tenant);
    this.#tables.drop(tenant);
  }
}

/** A tenant's table from one read of its pairs, sized once the store says how many there are. */
async function buildTable(read: ReadTenantPlacements, tenant: string): Promise<PlacesTable> {
  let table: PlacesTable | null = null;
  await read(tenant, {
    count: (pairs) => {
      table ??= new PlacesTable(pairs);
    },
    pair: (id, space) => {
      table ??= new PlacesTable();
      table.put(id, space);
    },
  });
  return table ?? new PlacesTable();
}
